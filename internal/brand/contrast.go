package brand

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// MinContrast is WCAG 2.2 AA's contrast ratio for normal text (1.4.3).
const MinContrast = 4.5

// Pair is two colours of an appearance that are drawn on each other.
type Pair struct {
	// Foreground and Background are the fields' JSON names
	// ("textColor", "backgroundColor").
	Foreground, Background string
	// Says what the pair is on the pages, in English.
	Says string
}

// Pairs are the colour pairs the pages draw as text, each checked for
// MinContrast:
//   - the text colour on the background colour (all body text);
//   - the background colour on the primary colour: the labels of primary
//     buttons are drawn in the background colour, and links are drawn in
//     the primary colour on the background, which is the same pair.
//
// The accent colour is decoration only (the bar above the header), never
// text, so it is not checked.
var Pairs = []Pair{
	{"textColor", "backgroundColor", "text on the background"},
	{"backgroundColor", "primaryColor", "button labels on the primary colour (and links on the background)"},
}

// ContrastError says which pair of colours is too close, and how close.
type ContrastError struct {
	Pair  Pair
	Ratio float64 // rounded down to two decimals, as WCAG tools show it
}

func (e *ContrastError) Error() string {
	return fmt.Sprintf("%s and %s (%s) have a contrast of %s:1; WCAG 2.2 AA needs %s:1",
		e.Pair.Foreground, e.Pair.Background, e.Pair.Says, FormatRatio(e.Ratio), FormatRatio(MinContrast))
}

// FormatRatio writes a ratio as WCAG tools do: 4.5, 3.21.
func FormatRatio(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// Colors are an appearance's four colours as #rrggbb.
type Colors struct {
	Primary, Accent, Background, Text string
}

func (c Colors) field(name string) string {
	switch name {
	case "primaryColor":
		return c.Primary
	case "accentColor":
		return c.Accent
	case "backgroundColor":
		return c.Background
	}
	return c.Text
}

// Check returns the first pair of c below MinContrast, or nil. Colours
// that are not #rrggbb are the caller's to refuse first; Check treats them
// as black.
func Check(c Colors) *ContrastError {
	for _, p := range Pairs {
		r := Contrast(c.field(p.Foreground), c.field(p.Background))
		if r < MinContrast {
			return &ContrastError{Pair: p, Ratio: math.Floor(r*100) / 100}
		}
	}
	return nil
}

// Contrast is the WCAG 2.2 contrast ratio of two #rrggbb colours, from 1
// to 21.
func Contrast(a, b string) float64 {
	la, lb := luminance(a), luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// luminance is WCAG's relative luminance of a #rrggbb colour.
func luminance(hex string) float64 {
	r, g, b := rgb(hex)
	lin := func(v uint8) float64 {
		c := float64(v) / 255
		if c <= 0.04045 {
			return c / 12.92
		}
		return math.Pow((c+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

func rgb(hex string) (r, g, b uint8) {
	hex = strings.TrimPrefix(hex, "#")
	if len(hex) != 6 {
		return 0, 0, 0
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil {
		return 0, 0, 0
	}
	return uint8(v >> 16), uint8(v >> 8), uint8(v)
}

// mix blends a into b: share 1 is a, 0 is b.
func mix(a, b string, share float64) string {
	ar, ag, ab := rgb(a)
	br, bg, bb := rgb(b)
	m := func(x, y uint8) uint8 { return uint8(math.Round(float64(x)*share + float64(y)*(1-share))) }
	return fmt.Sprintf("#%02x%02x%02x", m(ar, br), m(ag, bg), m(ab, bb))
}
