package clientmeta

import (
	"fmt"
	"strconv"
)

// reason is what is wrong with a URI.
type reason uint8

const (
	malformed reason = iota + 1
	tooLong
	badChar
	badEscape
	hasFragment
	notAbsolute
	hasUserInfo
	upperScheme
	badScheme
	noHost
	emptyPort
	badPort
	badIPv6
	badHostName
	dotSegment
	httpNotLoopback
	httpsRefused
	otherHost
	numReasons // not a reason: the count, for tests
)

// URIError is a refused URI. It says what is wrong in two ways: Error
// quotes the URI, for the registrant or operator who sent it; Phrase does
// not, for a document a stranger's server published, whose text must not
// reach logs and error pages verbatim.
type URIError struct {
	URI    string
	reason reason
	// loopbackOnly: the refusing policy allowed loopback http only (the
	// message says so).
	loopbackOnly bool
	scheme       string
}

// Error describes the problem, quoting (a prefix of) the URI.
func (e *URIError) Error() string {
	q := strconv.Quote(Truncate(e.URI, 80))
	switch e.reason {
	case tooLong:
		return fmt.Sprintf("a redirect URI is longer than %d characters", MaxRedirectURILen)
	case badChar:
		return q + " contains white space, control, non-ASCII or other characters that URIs do not allow (percent-encode them)"
	case badEscape:
		return q + " has a malformed percent-encoding (a % must be followed by two hexadecimal digits)"
	case hasFragment:
		return q + " has a fragment; redirect URIs must not (RFC 6749 §3.1.2)"
	case notAbsolute:
		return q + " is not an absolute URI with a host"
	case hasUserInfo:
		return q + " has user information"
	case upperScheme:
		return q + ": write the scheme in lower case"
	case badScheme:
		if e.loopbackOnly {
			return q + ": the " + e.scheme + ": scheme is not allowed; this site registers only loopback http redirect URIs"
		}
		return q + ": the " + e.scheme + ": scheme is not allowed; use https or a loopback http URI"
	case noHost:
		return q + " has no host"
	case emptyPort:
		return q + " has an empty port (leave out the colon, or give a port from 1 to 65535)"
	case badPort:
		return q + " has an invalid port (ports are 1 to 65535)"
	case badIPv6:
		return q + " has an invalid IPv6 address"
	case badHostName:
		return q + " has an invalid host name"
	case dotSegment:
		return q + " has . or .. path segments"
	case httpNotLoopback:
		return q + ": plain http is allowed only for loopback addresses (127.0.0.1, [::1], localhost)"
	case httpsRefused:
		return q + ": this site registers only loopback redirect URIs (http://127.0.0.1:PORT/...); an https callback needs a client registered by the site's operators or a Client ID Metadata Document"
	case otherHost:
		return q + " is on another host than the client metadata document"
	}
	return q + " is not a valid URI" // malformed
}

// Phrase describes the problem without quoting the URI, as the end of a
// sentence whose subject is the URI ("The redirect URI ... <phrase>.").
func (e *URIError) Phrase() string {
	switch e.reason {
	case tooLong:
		return fmt.Sprintf("is longer than %d characters", MaxRedirectURILen)
	case badChar:
		return "is not a valid URL: it contains a character that URLs do not allow"
	case badEscape:
		return "is not a valid URL: it has a malformed percent-encoding"
	case hasFragment:
		return "contains a fragment"
	case notAbsolute:
		return "is not a valid absolute URL with a host"
	case hasUserInfo:
		return "contains a user name or password"
	case upperScheme:
		return "has a scheme that is not in lower case"
	case badScheme:
		return "is neither https nor http on a loopback address"
	case noHost:
		return "has no host"
	case emptyPort:
		return "has an empty port"
	case badPort:
		return "has an invalid port"
	case badIPv6:
		return "has an invalid IPv6 address"
	case badHostName:
		return "has an invalid host name"
	case dotSegment:
		return "has . or .. path segments"
	case httpNotLoopback:
		return "uses http on a host other than 127.0.0.1, [::1] or localhost"
	case httpsRefused:
		return "uses https, but only loopback http redirect URIs are allowed"
	case otherHost:
		return "is on another host than the document"
	}
	return "is not a valid URL" // malformed
}

// Truncate shortens s to at most n bytes for messages, marking the cut. It
// never splits a UTF-8 sequence, so a message stays valid UTF-8.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
