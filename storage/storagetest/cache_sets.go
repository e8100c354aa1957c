package storagetest

import (
	"slices"
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
)

// testCacheSets: a set keeps distinct members, forgets removed ones, renews
// its expiry on every add, and disappears when it expires.
func testCacheSets(t *testing.T, c storage.Cache) {
	ctx := t.Context()
	key := cacheKey(cacheSiteA, "set")
	if got, err := c.SetMembers(ctx, key); err != nil || len(got) != 0 {
		t.Fatalf("SetMembers of an absent set = %v, %v; want none", got, err)
	}
	if err := c.SetAdd(ctx, key, time.Minute, "b", "a"); err != nil {
		t.Fatal(err)
	}
	if err := c.SetAdd(ctx, key, time.Minute, "a", "c"); err != nil {
		t.Fatal(err)
	}
	if got, err := c.SetMembers(ctx, key); err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("SetMembers = %v, %v; want [a b c]", got, err)
	}
	if err := c.SetRemove(ctx, key, "b", "absent"); err != nil {
		t.Fatal(err)
	}
	if got, _ := c.SetMembers(ctx, key); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after SetRemove: %v; want [a c]", got)
	}
	if err := c.SetRemove(ctx, cacheKey(cacheSiteA, "no-set"), "x"); err != nil {
		t.Fatalf("SetRemove on an absent set: %v", err)
	}
	if err := c.SetAdd(ctx, key, 0, "x"); err == nil {
		t.Error("SetAdd with ttl 0 accepted; a set must always expire")
	}

	short := cacheKey(cacheSiteA, "short-set")
	if err := c.SetAdd(ctx, short, 300*time.Millisecond, "a"); err != nil {
		t.Fatal(err)
	}
	// An add renews the expiry of the whole set.
	if err := c.SetAdd(ctx, short, time.Minute, "b"); err != nil {
		t.Fatal(err)
	}
	cacheSleepUntil(time.Now().Add(500 * time.Millisecond))
	if got, _ := c.SetMembers(ctx, short); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("a set whose expiry was renewed: %v; want [a b]", got)
	}
	gone := cacheKey(cacheSiteA, "gone-set")
	if err := c.SetAdd(ctx, gone, 200*time.Millisecond, "a"); err != nil {
		t.Fatal(err)
	}
	cacheSleepUntil(time.Now().Add(400 * time.Millisecond))
	if got, _ := c.SetMembers(ctx, gone); len(got) != 0 {
		t.Fatalf("an expired set still has %v", got)
	}
}
