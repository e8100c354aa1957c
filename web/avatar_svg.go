package web

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"html"
	"strings"
	"unicode"
)

// initials are what a generated avatar shows of a person: the first letter
// of their first and last name, upper-cased ("Ada Lovelace" → "AL", "Plato"
// → "P"), "?" when the name has no letter or digit. Nothing else about the
// person is in the picture.
func initials(name string) string {
	words := strings.FieldsFunc(name, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	first := func(w string) string {
		for _, r := range w {
			return string(unicode.ToUpper(r))
		}
		return ""
	}
	switch len(words) {
	case 0:
		return "?"
	case 1:
		return first(words[0])
	default:
		return first(words[0]) + first(words[len(words)-1])
	}
}

// avatarColor derives the background from the subject, not the name: it
// stays when the name changes, and says nothing the sub does not. Hues
// vary; saturation and lightness are fixed so white initials always read
// (contrast about 4.5:1 or more).
func avatarColor(sub string) string {
	sum := sha256.Sum256([]byte("lectern-avatar:" + sub))
	hue := float64(binary.BigEndian.Uint16(sum[:2]) % 360)
	r, g, b := hslToRGB(hue, 0.55, 0.38)
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

func hslToRGB(h, s, l float64) (uint8, uint8, uint8) {
	c := (1 - abs(2*l-1)) * s
	hp := h / 60
	x := c * (1 - abs(mod2(hp)-1))
	var r, g, b float64
	switch {
	case hp < 1:
		r, g = c, x
	case hp < 2:
		r, g = x, c
	case hp < 3:
		g, b = c, x
	case hp < 4:
		g, b = x, c
	case hp < 5:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	to := func(v float64) uint8 { return uint8((v+m)*255 + 0.5) }
	return to(r), to(g), to(b)
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// mod2 is v modulo 2 for v ≥ 0.
func mod2(v float64) float64 { return v - 2*float64(int(v/2)) }

// avatarSVG draws the generated avatar: the initials, escaped, in white on
// the subject's colour. The document has no script, link, style sheet or
// external reference; the response's CSP forbids them anyway.
func avatarSVG(sub, name string) []byte {
	text := html.EscapeString(initials(name))
	return fmt.Appendf(nil, `<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128" role="img" aria-label="%s">`+
		`<rect width="128" height="128" fill="%s"/>`+
		`<text x="64" y="64" dy=".35em" text-anchor="middle" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif" font-size="52" font-weight="600" fill="#ffffff">%s</text>`+
		"</svg>\n", text, avatarColor(sub), text)
}
