package password

import (
	"errors"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// fast keeps tests quick; the format and logic are the same.
var fast = Params{Memory: 1024, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}

func TestHashVerify(t *testing.T) {
	h, err := Hash("correct horse", fast)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=1024,t=1,p=1$") {
		t.Fatalf("hash %q is not an argon2id PHC string", h)
	}
	if err := Verify("correct horse", h); err != nil {
		t.Fatalf("right password refused: %v", err)
	}
	if err := Verify("correct horsf", h); !errors.Is(err, ErrMismatch) {
		t.Fatalf("wrong password: got %v, want ErrMismatch", err)
	}
	h2, _ := Hash("correct horse", fast)
	if h2 == h {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
}

func TestVerifyMalformed(t *testing.T) {
	good, _ := Hash("pw", fast)
	parts := strings.Split(good, "$")
	for name, enc := range map[string]string{
		"empty":        "",
		"bcrypt":       "$2a$10$abcdefghijklmnopqrstuv",
		"argon2i":      strings.Replace(good, "argon2id", "argon2i", 1),
		"bad version":  strings.Replace(good, "v=19", "v=16", 1),
		"huge memory":  strings.Replace(good, "m=1024", "m=99999999", 1),
		"zero time":    strings.Replace(good, "t=1", "t=0", 1),
		"bad salt b64": strings.Join(append(parts[:4:4], "!!!", parts[5]), "$"),
		"short key":    strings.Join(append(parts[:5:5], "AAAA"), "$"),
	} {
		t.Run(name, func(t *testing.T) {
			if err := Verify("pw", enc); !errors.Is(err, ErrMalformed) {
				t.Fatalf("Verify(%q) = %v, want ErrMalformed", enc, err)
			}
		})
	}
}

func TestOverlongPassword(t *testing.T) {
	long := strings.Repeat("a", MaxLength+1)
	if _, err := Hash(long, fast); err == nil {
		t.Fatal("Hash accepted an over-long password")
	}
	h, _ := Hash("pw", fast)
	if err := Verify(long, h); !errors.Is(err, ErrMismatch) {
		t.Fatalf("Verify(over-long) = %v, want ErrMismatch", err)
	}
}

// After a hash, the collector's goal is set by the live heap again, not by
// the hash's memory: otherwise a 64 MiB hash raises the goal of a server
// running with GOGC=400 by about 320 MiB, and its resident memory with it.
func TestHashMemoryDoesNotRaiseTheHeapGoal(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	runtime.GC()
	p := Params{Memory: 64 * 1024, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}
	h, err := Hash("correct horse", p)
	if err != nil {
		t.Fatal(err)
	}
	waitForGoalBelow := func(after string) {
		t.Helper()
		goal := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			metrics.Read(goal)
			if g := goal[0].Value.Uint64(); g < 64<<20 {
				return
			} else if time.Now().After(deadline) {
				t.Fatalf("heap goal %d MiB 10 s after %s; want below the hash's 64 MiB", g>>20, after)
			}
		}
	}
	waitForGoalBelow("hashing with 64 MiB")
	if err := Verify("correct horse", h); err != nil {
		t.Fatal(err)
	}
	waitForGoalBelow("verifying with 64 MiB")
}
