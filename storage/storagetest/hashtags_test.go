package storagetest_test

import (
	"testing"
	"time"

	"github.com/lectern/lectern/storage"
	"github.com/lectern/lectern/storage/cache"
	"github.com/lectern/lectern/storage/storagetest"
)

func TestTagCheckerReportsUntaggedKeys(t *testing.T) {
	m := cache.NewMemory(nil)
	defer m.Close()
	c := storagetest.NewTagChecker(m)
	ctx := t.Context()
	_ = c.Set(ctx, storage.CacheKey(1, "k", "v"), []byte("x"), time.Minute)
	_ = c.Set(ctx, storage.PlatformKey("k", "v"), []byte("x"), time.Minute)
	_, _ = c.GetMulti(ctx, storage.CacheKey(1, "k", "v"), "lectern:untagged", "{}:empty-tag")
	_, _ = c.Incr(ctx, "lectern:untagged", time.Minute)
	_, _, _ = c.Allow(ctx, "rate:{", storage.Limit{Rate: 1, Period: time.Second, Burst: 1})
	got := c.Untagged()
	want := []string{"lectern:untagged", "{}:empty-tag", "rate:{"}
	if len(got) != len(want) {
		t.Fatalf("Untagged = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Untagged = %q, want %q", got, want)
		}
	}
	if c.Unwrap() != storage.Cache(m) {
		t.Fatal("Unwrap does not return the wrapped cache")
	}
}

func TestHashTag(t *testing.T) {
	for _, tc := range []struct {
		key, tag string
		ok       bool
	}{
		{"{s1}:rev:state", "s1", true},
		{"prefix:{s42}:x", "s42", true},
		{"{platform}:ready:abc", "platform", true},
		{"a{b}c{d}", "b", true},
		{"{}x{y}", "", false}, // Redis hashes the whole key when the first braces are empty
		{"{abc", "", false},
		{"abc}", "", false},
		{"plain", "", false},
	} {
		tag, ok := storage.HashTag(tc.key)
		if tag != tc.tag || ok != tc.ok {
			t.Errorf("HashTag(%q) = %q, %v; want %q, %v", tc.key, tag, ok, tc.tag, tc.ok)
		}
	}
}
