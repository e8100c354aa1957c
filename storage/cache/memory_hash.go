package cache

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/lectern/lectern/storage"
)

// errWrongType answers a hash operation on a plain value and a plain
// operation on a hash, as Redis answers WRONGTYPE.
func errWrongType(key string) error {
	return fmt.Errorf("cache: %q holds another kind of value", key)
}

// HashGet implements storage.Cache.
func (m *Memory) HashGet(ctx context.Context, key string, fields ...string) ([][]byte, error) {
	if err := m.begin(ctx); err != nil {
		return nil, err
	}
	defer m.mu.Unlock()
	out := make([][]byte, len(fields))
	e, ok := m.lookup(key, m.now())
	if !ok {
		return out, nil
	}
	if e.hash == nil {
		return nil, errWrongType(key)
	}
	for i, f := range fields {
		if v, ok := e.hash[f]; ok {
			out[i] = clone(v)
		}
	}
	return out, nil
}

// HashReplace implements storage.Cache.
func (m *Memory) HashReplace(ctx context.Context, key string, version int64, fields map[string][]byte, ttl time.Duration) (bool, error) {
	if err := checkTTL(ttl); err != nil {
		return false, err
	}
	if err := m.begin(ctx); err != nil {
		return false, err
	}
	defer m.mu.Unlock()
	now := m.now()
	if e, ok := m.lookup(key, now); ok {
		if e.hash == nil {
			return false, errWrongType(key)
		}
		if cur, ok := hashVersion(e.hash, storage.HashVersionField); ok && cur >= version {
			return false, nil
		}
		if added, ok := hashVersion(e.hash, storage.HashAddedField); ok && added > version {
			return false, nil
		}
	}
	h := make(map[string][]byte, len(fields)+1)
	for f, v := range fields {
		h[f] = clone(v)
	}
	h[storage.HashVersionField] = strconv.AppendInt(nil, version, 10)
	m.entries[key] = entry{hash: h, expires: now.Add(ttl)}
	return true, nil
}

// HashAdd implements storage.Cache.
func (m *Memory) HashAdd(ctx context.Context, key string, version int64, fields map[string][]byte) error {
	if err := m.begin(ctx); err != nil {
		return err
	}
	defer m.mu.Unlock()
	e, ok := m.lookup(key, m.now())
	if !ok {
		return nil
	}
	if e.hash == nil {
		return errWrongType(key)
	}
	// A copy, so that a reader holding the old map is never raced.
	h := maps.Clone(e.hash)
	for f, v := range fields {
		h[f] = clone(v)
	}
	if cur, ok := hashVersion(h, storage.HashVersionField); ok && version > 0 && cur == version-1 {
		h[storage.HashVersionField] = strconv.AppendInt(nil, version, 10)
	}
	if added, ok := hashVersion(h, storage.HashAddedField); version > 0 && (!ok || added < version) {
		h[storage.HashAddedField] = strconv.AppendInt(nil, version, 10)
	}
	e.hash = h
	m.entries[key] = e
	return nil
}

func hashVersion(h map[string][]byte, field string) (int64, bool) {
	v, ok := h[field]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
