package cimd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/lectern/lectern/authserver/clientmeta"
)

// Limits of a document's fields: those of every client's metadata.
const (
	MaxRedirectURIs    = clientmeta.MaxRedirectURIs
	MaxClientNameRunes = clientmeta.MaxClientNameLen
)

// Document is a validated Client ID Metadata Document: the client metadata
// of RFC 7591 §2 that a public client publishes at its client_id URL.
type Document struct {
	// ClientID is the URL the document was fetched from, which the document
	// names as its own client_id.
	ClientID string
	// ClientName is the document's client_name, or Host when it has none.
	// The consent page shows it together with Host and the redirect host,
	// since anyone can claim any name.
	ClientName string
	ClientURI  string // an https URL, or ""
	LogoURI    string // an https URL, or ""
	Scope      string // space-separated, or "" (RFC 6749 §3.3 syntax)
	// TokenEndpointAuthMethod is always "none": documents describe public
	// clients only.
	TokenEndpointAuthMethod string
	// RedirectURIs are each an https URL on Host or an http loopback URL.
	RedirectURIs []string
	// GrantTypes ⊆ {authorization_code, refresh_token}, always with
	// authorization_code; default [authorization_code].
	GrantTypes []string
	// ResponseTypes is [code].
	ResponseTypes []string
	// Host is the document's host[:port], lower-case, without https' default
	// port: what an operator allowlists and what the consent page shows.
	Host string
}

func (d *Document) clone() *Document {
	c := *d
	c.RedirectURIs = slices.Clone(d.RedirectURIs)
	c.GrantTypes = slices.Clone(d.GrantTypes)
	c.ResponseTypes = slices.Clone(d.ResponseTypes)
	return &c
}

// Auth methods that imply a client secret or key, which a document's client
// (public by definition, since anyone can read the document) cannot have.
var secretAuthMethods = []string{
	"client_secret_post", "client_secret_basic", "client_secret_jwt", "private_key_jwt",
	"tls_client_auth", "self_signed_tls_client_auth",
}

// parseDocument validates raw, fetched from (or cached for) clientID whose
// parsed form is u. Unknown fields are ignored; JSON null counts as absent,
// since some serialisers write every field.
func parseDocument(clientID string, u *url.URL, raw []byte) (*Document, error) {
	fields, err := jsonObject(raw)
	if err != nil {
		return nil, err
	}
	d := &Document{ClientID: clientID, Host: clientmeta.CanonicalHost(u), TokenEndpointAuthMethod: "none"}

	id, ok, err := fields.str("client_id")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, docError(nil, "has no client_id.")
	}
	if id != clientID {
		// The document's value stays out of the error: the log must not
		// repeat what a stranger's server sent.
		return nil, docError(nil, "names a client_id other than the URL it was fetched from.")
	}

	for _, name := range []string{"client_secret", "client_secret_expires_at"} {
		if fields.has(name) {
			return nil, docError(nil, "contains a client secret, but clients with a metadata document must be public.")
		}
	}
	for _, name := range []string{"jwks", "jwks_uri"} {
		if fields.has(name) {
			return nil, docError(nil, "publishes keys ("+name+"), but clients with a metadata document must be public.")
		}
	}

	if m, ok, err := fields.str("token_endpoint_auth_method"); err != nil {
		return nil, err
	} else if ok && m != "none" {
		if slices.Contains(secretAuthMethods, m) {
			return nil, docError(nil, "uses the client authentication method "+m+", but clients with a metadata document must be public (none).")
		}
		return nil, docError(nil, "has a token_endpoint_auth_method other than none.")
	}
	// Some clients publish the server-metadata name instead; tolerate it
	// when it offers none.
	if ms, ok, err := fields.strs("token_endpoint_auth_methods_supported"); err != nil {
		return nil, err
	} else if ok && !slices.Contains(ms, "none") {
		return nil, docError(nil, "has token_endpoint_auth_methods_supported without none.")
	}

	d.GrantTypes = []string{"authorization_code"}
	if gts, ok, err := fields.strs("grant_types"); err != nil {
		return nil, err
	} else if ok && len(gts) > 0 {
		for _, g := range gts {
			if g != "authorization_code" && g != "refresh_token" {
				return nil, docError(nil, "lists a grant type other than authorization_code and refresh_token.")
			}
		}
		if !slices.Contains(gts, "authorization_code") {
			return nil, docError(nil, "has grant_types without authorization_code.")
		}
		d.GrantTypes = dedupe(gts)
	}
	d.ResponseTypes = []string{"code"}
	if rts, ok, err := fields.strs("response_types"); err != nil {
		return nil, err
	} else if ok {
		for _, r := range rts {
			if r != "code" {
				return nil, docError(nil, "lists a response type other than code.")
			}
		}
	}

	uris, ok, err := fields.strs("redirect_uris")
	switch {
	case err != nil:
		return nil, err
	case !ok || len(uris) == 0:
		return nil, docError(nil, "has no redirect_uris.")
	case len(uris) > MaxRedirectURIs:
		return nil, docError(nil, fmt.Sprintf("has more than %d redirect_uris.", MaxRedirectURIs))
	}
	for i, r := range uris {
		if e := checkRedirectURI(r, d.Host); e != "" {
			return nil, docError(nil, fmt.Sprintf("has a redirect URI (number %d) that %s", i+1, e))
		}
	}
	d.RedirectURIs = dedupe(uris)

	name, _, err := fields.str("client_name")
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	switch {
	case utf8.RuneCountInString(name) > MaxClientNameRunes:
		return nil, docError(nil, fmt.Sprintf("has a client_name longer than %d characters.", MaxClientNameRunes))
	case strings.IndexFunc(name, clientmeta.UnsafeNameRune) >= 0:
		return nil, docError(nil, "has a client_name with control characters.")
	case name == "":
		name = d.Host
	}
	d.ClientName = name

	for _, f := range []struct {
		name string
		dst  *string
	}{{"client_uri", &d.ClientURI}, {"logo_uri", &d.LogoURI}} {
		v, ok, err := fields.str(f.name)
		if err != nil {
			return nil, err
		}
		if ok && v != "" {
			if !clientmeta.IsHTTPSURL(v) {
				return nil, docError(nil, "has a "+f.name+" that is not an https URL.")
			}
			*f.dst = v
		}
	}

	scope, _, err := fields.str("scope")
	if err != nil {
		return nil, err
	}
	if strings.IndexFunc(scope, notScopeRune) >= 0 {
		return nil, docError(nil, "has a scope with characters that scopes cannot contain.")
	}
	d.Scope = strings.Join(strings.Fields(scope), " ")
	return d, nil
}

func docError(cause error, rest string) *Error {
	return newError(cause, "The client metadata document "+rest)
}

// object is a JSON object's fields, not yet decoded.
type object map[string]json.RawMessage

// jsonObject parses raw as exactly one JSON object. A repeated field is
// refused: parsers disagree on which copy wins, and a document that says
// two things about its client_id or redirect URIs is not one to trust.
func jsonObject(raw []byte) (object, error) {
	if !utf8.Valid(raw) {
		return nil, docError(nil, "is not valid UTF-8.")
	}
	notJSON := func(err error) error { return docError(err, "is not valid JSON.") }
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil {
		return nil, notJSON(err)
	}
	if tok != json.Delim('{') {
		return nil, docError(nil, "is not a JSON object.")
	}
	obj := object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, notJSON(err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, notJSON(errors.New("object key is not a string"))
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, notJSON(err)
		}
		if _, dup := obj[key]; dup {
			return nil, docError(nil, "has a field that appears twice.")
		}
		obj[key] = v
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, notJSON(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, docError(err, "has data after its JSON object.")
	}
	return obj, nil
}

// has reports whether the field is present and not null.
func (o object) has(name string) bool {
	v, ok := o[name]
	return ok && string(v) != "null"
}

// str returns a string field; ok is false when it is absent or null.
func (o object) str(name string) (s string, ok bool, err error) {
	if !o.has(name) {
		return "", false, nil
	}
	if err := json.Unmarshal(o[name], &s); err != nil {
		return "", false, docError(err, "has a "+name+" that is not a string.")
	}
	return s, true, nil
}

// strs returns an array-of-strings field; ok is false when it is absent or
// null.
func (o object) strs(name string) (ss []string, ok bool, err error) {
	if !o.has(name) {
		return nil, false, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(o[name], &raw); err != nil {
		return nil, false, docError(err, "has a "+name+" that is not an array of strings.")
	}
	ss = make([]string, len(raw))
	for i, r := range raw {
		// Unmarshal leaves a string untouched on null; null is no string.
		if string(r) == "null" || json.Unmarshal(r, &ss[i]) != nil {
			return nil, false, docError(nil, "has a "+name+" that is not an array of strings.")
		}
	}
	return ss, true, nil
}

// checkRedirectURI checks one redirect URI of a document whose host is
// docHost (DESIGN §6): an https URL on that host, or an http loopback URL
// on any port (RFC 8252 §7.3), by the rules every client's redirect URIs
// follow (clientmeta). It returns what is wrong, as the end of a sentence
// that does not repeat the URI, or "".
func checkRedirectURI(s, docHost string) string {
	if e := clientmeta.CheckRedirectURI(s, clientmeta.Policy{DocumentHost: docHost}); e != nil {
		return e.Phrase() + "."
	}
	return ""
}

// notScopeRune reports runes outside RFC 6749 §3.3's scope-token alphabet
// and the space between tokens.
func notScopeRune(r rune) bool {
	return r < 0x20 || r > 0x7e || r == '"' || r == '\\'
}

func dedupe(ss []string) []string {
	out := make([]string, 0, len(ss))
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
