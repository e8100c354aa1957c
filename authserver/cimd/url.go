package cimd

import (
	"net/url"
	"strings"

	"github.com/lectern/lectern/authserver/clientmeta"
)

// MaxClientIDLength is the longest client_id URL accepted, in bytes.
const MaxClientIDLength = 2048

// IsClientIDURL reports whether client_id s is meant as a Client ID Metadata
// Document URL: it starts with "https://", parses, and has a path other than
// "" or "/". It says nothing about validity (ValidateClientIDURL does); the
// caller uses it to decide whether to try CIMD at all, so that a malformed
// CIMD URL gets a CIMD error rather than "unknown client".
func IsClientIDURL(s string) bool {
	if !strings.HasPrefix(s, "https://") {
		return false
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	return u.Path != "" && u.Path != "/"
}

// ValidateClientIDURL checks that s may be a client_id URL
// (draft-ietf-oauth-client-id-metadata-document §3): https, absolute, with a
// host, without user-info, fragment or query, with a path other than "/"
// and without dot segments, at most MaxClientIDLength bytes. The port may be
// given, the default one included. IP-literal hosts pass here: the fetcher's
// dialer vets every address, literal or resolved, in one place. Errors are
// *Error.
func ValidateClientIDURL(s string) (u *url.URL, err error) {
	const what = "The client_id URL"
	if len(s) > MaxClientIDLength {
		return nil, newError(nil, what+" is longer than 2048 bytes.")
	}
	if !strings.HasPrefix(s, "https://") {
		return nil, newError(nil, what+" must start with https://.")
	}
	if i := strings.IndexFunc(s, notURLChar); i >= 0 {
		return nil, newError(nil, what+" contains a character that is not allowed in a URL.")
	}
	if strings.Contains(s, "#") {
		return nil, newError(nil, what+" must not contain a fragment.")
	}
	if strings.Contains(s, "?") {
		return nil, newError(nil, what+" must not contain a query.")
	}
	u, err = url.Parse(s)
	if err != nil {
		return nil, newError(err, what+" is not a valid URL.")
	}
	if u.User != nil {
		return nil, newError(nil, what+" must not contain a user name or password.")
	}
	if e := checkHost(u, what); e != nil {
		return nil, e
	}
	if u.Path == "" || u.Path == "/" {
		return nil, newError(nil, what+" must have a path, such as /client.json.")
	}
	// Percent-encoded dots decode to dots in u.Path, so "%2e%2e" is caught
	// as well: a server may normalise either form away.
	for seg := range strings.SplitSeq(u.Path, "/") {
		if seg == "." || seg == ".." {
			return nil, newError(nil, what+" must not contain . or .. path segments.")
		}
	}
	return u, nil
}

// notURLChar reports a rune RFC 3986 never allows in a URL
// (clientmeta.IsURIChar).
func notURLChar(r rune) bool { return !clientmeta.IsURIChar(r) }

// checkHost checks the host[:port] of an absolute URL by the rules of
// clientmeta.CheckHost. what names the URL in the description.
func checkHost(u *url.URL, what string) *Error {
	if e := clientmeta.CheckHost(u); e != nil {
		return newError(nil, what+" "+e.Phrase()+".")
	}
	return nil
}

// Host is the host[:port] of a client_id URL as Document.Host gives it:
// lower-cased, without https' default port, so that "Client.Example:443" and
// "client.example" are one host (clientmeta.CanonicalHost). Allowlist
// lookups should use it, so that they key on what the consent page shows.
func Host(u *url.URL) string { return clientmeta.CanonicalHost(u) }
