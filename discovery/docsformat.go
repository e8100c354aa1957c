package discovery

import (
	"strconv"
	"strings"
	"unicode"
)

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
