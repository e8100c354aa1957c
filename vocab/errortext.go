package vocab

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrorDescription turns text, the message of an HTTP error as a library
// wrote it (net/http's status texts, echo's errors, the go-sdk's plain-text
// refusals), into an error_description as Lectern writes them: a sentence
// that starts in lower case, with names kept as they are spelled.
//
//   - A status text is Title Case ("Method Not Allowed"): it becomes lower
//     case whole ("method not allowed").
//   - A status text leading the message ("Bad Request: ...") is dropped;
//     the status says it already.
//   - A first word that is an ordinary capitalised word ("Invalid format
//     ...") starts in lower case; one that is a name or an acronym
//     ("Content-Type", "JSON", "Idempotency-Key") keeps its case.
func ErrorDescription(status int, text string) string {
	text = strings.TrimSpace(text)
	st := http.StatusText(status)
	if st != "" {
		if rest, ok := strings.CutPrefix(text, st+": "); ok && strings.TrimSpace(rest) != "" {
			text = strings.TrimSpace(rest)
		}
		if text == "" || strings.EqualFold(text, st) {
			return strings.ToLower(st)
		}
	}
	first := text
	if i := strings.IndexAny(text, " :,;.("); i >= 0 {
		first = text[:i]
	}
	r, size := utf8.DecodeRuneInString(first)
	rest := first[size:]
	if unicode.IsUpper(r) && strings.ToLower(rest) == rest && !strings.ContainsAny(rest, "-_'/") {
		return string(unicode.ToLower(r)) + text[size:]
	}
	return text
}
