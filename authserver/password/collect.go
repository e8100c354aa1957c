package password

import (
	"runtime"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// A hash's memory (64 MiB with Default) is garbage once the hash returns,
// but the collector learns that only at its next cycle, and the hash itself
// starts a cycle: allocating 64 MiB pushes the heap past its goal while the
// hash still holds the memory. That cycle finds the 64 MiB live and sets
// the next goal from it, with the server's GOGC=400 five times as high, so
// the requests that follow walk through some 320 MiB of pages before the
// collector runs again. The process's peak resident memory grows by as much
// (measured: 663 MiB against 202 MiB after 16 sign-ins and a token load),
// and each of those pages costs a page fault, whether fresh or handed back
// to the system by the scavenger since the last time (about 15 µs each on a
// virtual machine where faults trap to the host). So when the last hash in
// progress returns, one collection runs in the background: it finds the
// hash's memory dead and sets the goal from the live heap again. Requests
// made while a collection runs are folded into one more, so sign-ins in a
// row cost at most one collection each, a few milliseconds of CPU beside
// the hash's tens.
var (
	hashing     atomic.Int32 // hashes in progress
	collections = make(chan struct{}, 1)
	collectorUp sync.Once
)

// idKey is argon2.IDKey followed, when no other hash is in progress, by a
// request for a collection.
func idKey(password, salt []byte, time, memory uint32, threads uint8, keyLen uint32) []byte {
	hashing.Add(1)
	key := argon2.IDKey(password, salt, time, memory, threads, keyLen)
	if hashing.Add(-1) == 0 {
		collectorUp.Do(func() { go collect() })
		select {
		case collections <- struct{}{}:
		default: // one is pending already, and it starts after this hash ended
		}
	}
	return key
}

func collect() {
	for range collections {
		runtime.GC()
	}
}
