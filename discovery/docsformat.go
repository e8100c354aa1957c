package discovery

import (
	"strconv"
	"strings"
	"unicode"
)

// minorUnits lists the ISO 4217 currencies whose minor unit is not the
// usual cent (two decimals). Prices are stored in minor units.
var minorUnits = map[string]int{
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
}

// Price formats an amount in minor units for people and models: "49.00
// USD", or "Free" for zero. The agent documents and the MCP tools share it,
// so that a price reads the same everywhere.
func Price(minor int64, currency string) string {
	if minor == 0 {
		return "Free"
	}
	currency = strings.ToUpper(currency)
	digits, ok := minorUnits[currency]
	if !ok {
		digits = 2
	}
	sign := ""
	if minor < 0 {
		sign, minor = "-", -minor
	}
	s := strconv.FormatInt(minor, 10)
	if digits > 0 {
		for len(s) <= digits {
			s = "0" + s
		}
		s = s[:len(s)-digits] + "." + s[len(s)-digits:]
	}
	if currency == "" {
		return sign + s
	}
	return sign + s + " " + currency
}

// mdText makes s safe as inline Markdown text (a link label, a table cell,
// a line of prose): whitespace runs, newlines included, become one space,
// and the characters that would start emphasis, code, links, raw HTML or a
// table cell are backslash-escaped (CommonMark §2.4). Catalog text is written
// by site operators and must never turn into markup, links or HTML.
func mdText(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		switch r {
		case '\\', '`', '*', '_', '[', ']', '<', '>', '|', '{', '}':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdParagraph is mdText for text that starts a line: a leading character
// that would open a heading, a list, a quote or a thematic break is escaped
// too.
func mdParagraph(s string) string {
	t := mdText(s)
	if t == "" {
		return t
	}
	switch t[0] {
	case '#', '-', '+', '=', '~':
		return `\` + t
	}
	// "1." or "1)" opens an ordered list.
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')') {
		return t[:i] + `\` + t[i:]
	}
	return t
}

// minutes formats a duration in seconds as whole minutes ("12 min").
func minutes(seconds int) string {
	m := (seconds + 30) / 60
	if m < 1 && seconds > 0 {
		m = 1
	}
	return strconv.Itoa(m) + " min"
}
