package storagetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
)

// hashWant checks HashGet of key for fields against want (nil: missing).
func hashWant(t *testing.T, c storage.Cache, what, key string, fields []string, want ...string) {
	t.Helper()
	got, err := c.HashGet(t.Context(), key, fields...)
	if err != nil {
		t.Fatalf("%s: HashGet: %v", what, err)
	}
	if len(got) != len(fields) {
		t.Fatalf("%s: HashGet returned %d values for %d fields", what, len(got), len(fields))
	}
	for i, f := range fields {
		w := want[i]
		switch {
		case w == "<nil>" && got[i] != nil:
			t.Errorf("%s: field %s = %q, want missing", what, f, got[i])
		case w != "<nil>" && string(got[i]) != w:
			t.Errorf("%s: field %s = %s, want %q", what, f, cacheShow(got[i]), w)
		}
	}
}

const none = "<nil>"

func testCacheHash(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k := storage.CacheKey(cacheSiteA, "hash", "h")
	v := storage.HashVersionField
	fields := []string{v, "a", "b", "c"}

	hashWant(t, c, "absent hash", k, fields, none, none, none, none)
	if err := c.HashAdd(ctx, k, 1, map[string][]byte{"a": []byte("1")}); err != nil {
		t.Fatalf("HashAdd to an absent hash: %v", err)
	}
	hashWant(t, c, "HashAdd to an absent hash creates nothing", k, fields, none, none, none, none)

	if ok, err := c.HashReplace(ctx, k, 5, map[string][]byte{"a": []byte("A"), "b": {}}, time.Minute); err != nil || !ok {
		t.Fatalf("HashReplace of an absent hash = %v, %v; want true", ok, err)
	}
	hashWant(t, c, "after HashReplace", k, fields, "5", "A", "", none)

	// The next version: added and advanced together.
	if err := c.HashAdd(ctx, k, 6, map[string][]byte{"c": []byte("C")}); err != nil {
		t.Fatalf("HashAdd: %v", err)
	}
	hashWant(t, c, "HashAdd of the next version", k, fields, "6", "A", "", "C")

	// A version with a gap before it: the field is added, the version
	// stays (the hash does not hold version 7).
	if err := c.HashAdd(ctx, k, 8, map[string][]byte{"b": []byte("B8")}); err != nil {
		t.Fatalf("HashAdd: %v", err)
	}
	hashWant(t, c, "HashAdd past a gap", k, fields, "6", "A", "B8", "C")
	// An old version adds its field and leaves the version.
	if err := c.HashAdd(ctx, k, 3, map[string][]byte{"a": []byte("A3")}); err != nil {
		t.Fatalf("HashAdd: %v", err)
	}
	hashWant(t, c, "HashAdd of an older version", k, fields, "6", "A3", "B8", "C")
	// Version 0 adds without touching the version.
	if err := c.HashAdd(ctx, k, 0, map[string][]byte{"a": []byte("A0")}); err != nil {
		t.Fatalf("HashAdd: %v", err)
	}
	hashWant(t, c, "HashAdd without a version", k, fields, "6", "A0", "B8", "C")

	// An older or equal replacement leaves the newer hash alone.
	for _, old := range []int64{2, 6} {
		if ok, err := c.HashReplace(ctx, k, old, map[string][]byte{"a": []byte("stale")}, time.Minute); err != nil || ok {
			t.Fatalf("HashReplace with version %d over version 6 = %v, %v; want false", old, ok, err)
		}
	}
	hashWant(t, c, "after refused replacements", k, fields, "6", "A0", "B8", "C")
	// Newer than the hash's version but older than a field added past the
	// gap (version 8): a refill that read the database before version 8
	// was committed must not drop that field, or a revocation already
	// acknowledged would be forgotten while the replicas believe version 7.
	hashWant(t, c, "the highest version added", k, []string{storage.HashAddedField}, "8")
	if ok, err := c.HashReplace(ctx, k, 7, map[string][]byte{"a": []byte("stale")}, time.Minute); err != nil || ok {
		t.Fatalf("HashReplace with version 7 over fields added at version 8 = %v, %v; want false", ok, err)
	}
	hashWant(t, c, "after a replacement older than an added field", k, fields, "6", "A0", "B8", "C")

	// A newer one replaces everything: fields it does not name are gone.
	if ok, err := c.HashReplace(ctx, k, 9, map[string][]byte{"b": []byte("B9")}, time.Minute); err != nil || !ok {
		t.Fatalf("HashReplace with version 9 = %v, %v; want true", ok, err)
	}
	hashWant(t, c, "after a newer replacement", k, fields, "9", none, "B9", none)

	if ok, err := c.HashReplace(ctx, k, 10, nil, time.Minute); err != nil || !ok {
		t.Fatalf("HashReplace with no fields = %v, %v", ok, err)
	}
	hashWant(t, c, "replaced by an empty hash", k, fields, "10", none, none, none)

	if _, err := c.HashReplace(ctx, k, 11, nil, 0); err == nil {
		t.Error("HashReplace with ttl 0 accepted")
	}
	if got, err := c.HashGet(ctx, k); err != nil || len(got) != 0 {
		t.Errorf("HashGet without fields = %q, %v; want none", got, err)
	}

	// Many fields at once (more than one Lua unpack takes).
	many := map[string][]byte{}
	for i := range 5000 {
		many[fmt.Sprintf("f%d", i)] = []byte(fmt.Sprint(i))
	}
	if ok, err := c.HashReplace(ctx, k, 20, many, time.Minute); err != nil || !ok {
		t.Fatalf("HashReplace with 5000 fields = %v, %v", ok, err)
	}
	hashWant(t, c, "5000 fields", k, []string{v, "f0", "f4999", "f5000"}, "20", "0", "4999", none)
	if err := c.HashAdd(ctx, k, 21, many); err != nil {
		t.Fatalf("HashAdd with 5000 fields: %v", err)
	}
	hashWant(t, c, "5000 fields added", k, []string{v, "f2500"}, "21", "2500")

	// Delete removes a hash like any key.
	if err := c.Delete(ctx, k); err != nil {
		t.Fatal(err)
	}
	hashWant(t, c, "deleted", k, fields, none, none, none, none)

	// A plain value is not a hash, and a hash is not a plain value.
	plain := storage.CacheKey(cacheSiteA, "hash", "plain")
	cacheSet(t, c, plain, []byte("x"))
	if _, err := c.HashGet(ctx, plain, "a"); err == nil || errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("HashGet of a plain value: err = %v; want a type error", err)
	}
	if _, err := c.HashReplace(ctx, k, 1, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, k); err == nil || errors.Is(err, storage.ErrCacheMiss) || errors.Is(err, storage.ErrUnavailable) {
		t.Errorf("Get of a hash: err = %v; want a type error", err)
	}
}

// testCacheHashExpiry: a replaced hash expires whole after its ttl, and
// HashAdd keeps that expiry.
func testCacheHashExpiry(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k := storage.CacheKey(cacheSiteA, "hash", "exp")
	start := time.Now()
	if _, err := c.HashReplace(ctx, k, 1, map[string][]byte{"a": []byte("A")}, time.Second); err != nil {
		t.Fatal(err)
	}
	cacheSleepUntil(start.Add(400 * time.Millisecond))
	if err := c.HashAdd(ctx, k, 2, map[string][]byte{"b": []byte("B")}); err != nil {
		t.Fatal(err)
	}
	cacheSleepUntil(start.Add(time.Second + 250*time.Millisecond))
	hashWant(t, c, "past the ttl of HashReplace", k, []string{storage.HashVersionField, "a", "b"}, none, none, none)
}

// testCacheHashConcurrent: racing additions of consecutive versions never
// leave a version that claims a field the hash lacks.
func testCacheHashConcurrent(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	k := storage.CacheKey(cacheSiteA, "hash", "race")
	if _, err := c.HashReplace(ctx, k, 0, nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	const n = 32
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if err := c.HashAdd(ctx, k, int64(i+1), map[string][]byte{fmt.Sprintf("f%d", i+1): []byte("x")}); err != nil {
				t.Errorf("HashAdd: %v", err)
			}
		})
	}
	wg.Wait()
	fields := []string{storage.HashVersionField}
	for i := range n {
		fields = append(fields, fmt.Sprintf("f%d", i+1))
	}
	got, err := c.HashGet(ctx, k, fields...)
	if err != nil {
		t.Fatal(err)
	}
	var version int
	if _, err := fmt.Sscan(string(got[0]), &version); err != nil {
		t.Fatalf("version %q", got[0])
	}
	for i := 1; i <= version; i++ {
		if got[i] == nil {
			t.Fatalf("version %d claims field f%d, which is missing", version, i)
		}
	}
	for i := 1; i <= n; i++ {
		if got[i] == nil {
			t.Errorf("field f%d was lost", i)
		}
	}
}

func testCacheHashSiteIsolation(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	a, b := storage.CacheKey(cacheSiteA, "hash", "same"), storage.CacheKey(cacheSiteB, "hash", "same")
	if _, err := c.HashReplace(ctx, a, 3, map[string][]byte{"x": []byte("A")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	hashWant(t, c, "site B's hash", b, []string{storage.HashVersionField, "x"}, none, none)
	if err := c.HashAdd(ctx, b, 4, map[string][]byte{"x": []byte("B")}); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.HashReplace(ctx, b, 1, map[string][]byte{"y": []byte("B")}, time.Minute); err != nil || !ok {
		t.Fatalf("site B's HashReplace at a lower version than site A's = %v, %v; want true", ok, err)
	}
	hashWant(t, c, "site A's hash", a, []string{storage.HashVersionField, "x", "y"}, "3", "A", none)
	hashWant(t, c, "site B's hash", b, []string{storage.HashVersionField, "x", "y"}, "1", none, "B")
}
