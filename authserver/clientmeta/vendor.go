package clientmeta

import (
	"strings"
	"unicode"
)

// MatchVendorName reports whether a registration's client_name names a
// vendor platform whose name and aliases are names: exact after trimming
// and ASCII case folding (DESIGN §6). Deliberately no Unicode folding
// (strings.EqualFold equates "ſ" and "s", "K" and the Kelvin sign), no
// fuzzy matching, and no bidi or invisible characters.
func MatchVendorName(clientName string, names []string) bool {
	n := strings.TrimSpace(clientName)
	if n == "" || strings.IndexFunc(n, func(r rune) bool { return unicode.IsControl(r) || bidiControl(r) || r == 0x200B || r == 0xFEFF }) >= 0 {
		return false
	}
	for _, candidate := range names {
		if asciiFold(strings.TrimSpace(candidate)) == asciiFold(n) {
			return true
		}
	}
	return false
}

func asciiFold(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
