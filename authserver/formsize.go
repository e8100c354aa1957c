package authserver

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/lectern/lectern/tenant"
)

// tooLarge reports whether err, from reading a request's body, is the
// body going over a limit: the server's 1 MiB, or a page's own
// http.MaxBytesReader. Such a body is answered 413, not as a malformed
// form: the client should send less, not fix its syntax.
func tooLarge(err error) (*http.MaxBytesError, bool) {
	var e *http.MaxBytesError
	return e, errors.As(err, &e)
}

// writeTooLarge answers an oversized body at a form endpoint (token,
// revocation, introspection) as RFC 6749-style JSON, as the server's own
// 413 for a declared length is.
func writeTooLarge(w http.ResponseWriter, e *http.MaxBytesError) {
	tenant.WriteError(w, http.StatusRequestEntityTooLarge, tenant.ErrorCode(http.StatusRequestEntityTooLarge),
		"the request body is larger than this endpoint accepts ("+byteSize(e.Limit)+")")
}

// byteSize spells a body limit: whole MiB or KiB, else bytes.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// parsePageForm parses the form of a browser page (sign-in, consent,
// second factor, sign-out). When it cannot, it answers the HTML error
// page and returns false: 413 for a body over the limit, 400 for one that
// is not a form.
func (s *Server) parsePageForm(w http.ResponseWriter, r *http.Request, site *tenant.Site) bool {
	err := r.ParseForm()
	if err == nil {
		return true
	}
	if _, ok := tooLarge(err); ok {
		s.errorPage(w, r, site, http.StatusRequestEntityTooLarge, codeInvalidRequest, "The form is larger than this page accepts. Nothing was changed.", "")
		return false
	}
	s.errorPage(w, r, site, http.StatusBadRequest, codeInvalidRequest, "The form could not be read.", "")
	return false
}
