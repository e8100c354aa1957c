package main

import (
	"strings"
	"testing"
)

// An operator rotates the key-encryption key: replicas get the new key
// and the old one as previous, `kek rotate` re-seals, `keys status` shows
// the new key's id, and the old key alone no longer opens the rings.
func TestKEKRotateAndKeysStatus(t *testing.T) {
	const (
		oldKEK = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
		newKEK = "HxwdHhscGRoXGBUWExQREg8QDQ4LDAkKBwgFBgMEAQI="
	)
	c := newCLI(t, true)
	c.env["LECTERN_KEK"] = oldKEK
	c.ok("site", "create", "--slug", "kekked", "--name", "K", "--origin", "https://kekked.example.test")

	var before []struct {
		Slug     string `json:"slug"`
		KID      string `json:"kid"`
		KEKID    string `json:"kek_id"`
		RotateAt string `json:"rotate_at"`
		Due      bool   `json:"due"`
	}
	c.json(&before, "keys", "status", "--json")
	if len(before) != 1 || before[0].Slug != "kekked" || before[0].KEKID == "" || before[0].RotateAt == "" || before[0].Due {
		t.Fatalf("keys status: %+v; want the site's key, sealed under a named KEK, scheduled and not due", before)
	}
	var due []any
	c.json(&due, "keys", "status", "--due", "--json")
	if len(due) != 0 {
		t.Errorf("keys status --due lists %d sites; want none", len(due))
	}
	c.json(&due, "keys", "status", "--due", "--within", "2400h", "--json")
	if len(due) != 1 {
		t.Errorf("keys status --due --within 100 days lists %d sites; want the one", len(due))
	}
	// A site's own period reschedules its key: weekly is due within 8 days.
	c.json(&due, "keys", "status", "--due", "--within", "192h", "--json")
	if len(due) != 0 {
		t.Errorf("due within 8 days before the site's period changed: %d sites", len(due))
	}
	c.ok("site", "update", "--site", "kekked", "--key-rotation-days", "7")
	c.json(&due, "keys", "status", "--due", "--within", "192h", "--json")
	if len(due) != 1 {
		t.Errorf("after --key-rotation-days 7: %d sites due within 8 days; want the one", len(due))
	}
	c.fails(1, "key rotation days", "site", "update", "--site", "kekked", "--key-rotation-days", "99999")

	c.env["LECTERN_KEK"], c.env["LECTERN_KEK_PREVIOUS"] = newKEK, oldKEK
	if out := c.ok("kek", "rotate"); !strings.Contains(out, "1 keys re-sealed") {
		t.Errorf("kek rotate: %q", out)
	}
	if out := c.ok("kek", "rotate"); !strings.Contains(out, "0 keys re-sealed, 1 already current") {
		t.Errorf("kek rotate again: %q", out)
	}
	delete(c.env, "LECTERN_KEK_PREVIOUS")
	var after []struct {
		KID   string `json:"kid"`
		KEKID string `json:"kek_id"`
	}
	c.json(&after, "keys", "status", "--json")
	if len(after) != 1 || after[0].KID != before[0].KID || after[0].KEKID == before[0].KEKID {
		t.Fatalf("after kek rotate: %+v; want the same key under another KEK than %s", after, before[0].KEKID)
	}
	// Under the old key alone nothing opens any more.
	c.env["LECTERN_KEK"] = oldKEK
	c.fails(1, "open under none", "kek", "rotate")
}
