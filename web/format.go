package web

import (
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/lectern/lectern/authserver/scope"
)

// when is a moment as pages show it: words for people, and a machine
// readable value for the <time> element.
// The page's language writes the words ("5 minutes ago", "vor 5
// Minuten", "3 Mar 2026"; the full date and time as the <time>'s title).
type when struct {
	// Text is the message ID shown when there is no time ("time.never").
	Text string
	ISO  string // RFC 3339, UTC
	// At is the moment, Now the page's clock.
	At, Now time.Time
	// Future moments read "in 3 days".
	Future bool
}

func (h *Handler) when(t time.Time) when {
	if t.IsZero() {
		return when{Text: "time.never"}
	}
	t = t.UTC()
	return when{ISO: t.Format(time.RFC3339), At: t, Now: h.now()}
}

// scopeWords is a scope in plain words, with its name for those who need it.
type scopeWords struct {
	Name        string
	Description string
}

// Key is the message ID of the scope's wording; a scope since withdrawn
// has none, and its name stands in (t returns an unknown ID as it is).
func (s scopeWords) Key() string {
	if _, ok := scope.Lookup(s.Name); ok {
		return "scope." + s.Name
	}
	return s.Name
}

// describeScopes returns the scopes in the order the spec lists them, each
// with its consent wording; unknown names (a scope since withdrawn) keep
// their name as the wording.
func describeScopes(names []string) []scopeWords {
	out := make([]scopeWords, 0, len(names))
	for _, s := range scope.All() {
		if slices.Contains(names, s.Name) {
			out = append(out, scopeWords{Name: s.Name, Description: s.Description})
		}
	}
	for _, n := range names {
		if _, ok := scope.Lookup(n); !ok {
			out = append(out, scopeWords{Name: n, Description: n})
		}
	}
	return out
}

// pageSize is the length of every paginated list.
const pageSize = 20

// pager is a page of a list and the links around it.
type pager struct {
	Page, Pages      int
	From, To, Total  int
	PrevURL, NextURL string
}

// pageOffset is the offset of the first item of page rawPage (1-based, as
// paginate reads it), before it is clamped to the list's length.
func pageOffset(rawPage string) (int, int) {
	page, _ := strconv.Atoi(rawPage)
	page = min(max(page, 1), maxPage)
	return (page - 1) * pageSize, page
}

// maxPage bounds a page number read from the URL, so that the offset it
// makes cannot overflow.
const maxPage = 1_000_000

// paginate picks page (1-based, from the query parameter "page") of total
// items. base is the list's URL with its other query parameters.
func paginate(total int, rawPage string, base string, q url.Values) (from, to int, p pager) {
	_, page := pageOffset(rawPage)
	pages := max(1, (total+pageSize-1)/pageSize)
	page = min(page, pages)
	from = min((page-1)*pageSize, total)
	to = min(from+pageSize, total)
	p = pager{Page: page, Pages: pages, From: from + 1, To: to, Total: total}
	link := func(n int) string {
		v := url.Values{}
		for k, vs := range q {
			if k != "page" {
				v[k] = vs
			}
		}
		if n > 1 {
			v.Set("page", strconv.Itoa(n))
		}
		if len(v) == 0 {
			return base
		}
		return base + "?" + v.Encode()
	}
	if page > 1 {
		p.PrevURL = link(page - 1)
	}
	if page < pages {
		p.NextURL = link(page + 1)
	}
	return from, to, p
}
