package authserver

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/lectern/lectern/authserver/bearer"
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/storage"
)

// UserInfo implements the OpenID Connect UserInfo endpoint (OIDC Core §5.3)
// as a protected resource: the shared bearer verifier decides, and the
// claims are the ones the id_token carries for the same scopes.
func (s *Server) UserInfo(w http.ResponseWriter, r *http.Request) {
	site := siteOf(r.Context())
	tok, err := s.verifier.Authenticate(r)
	if err != nil {
		bearer.WriteError(w, site, err)
		return
	}
	if err := tok.Require(scope.OpenID); err != nil {
		bearer.WriteError(w, site, err)
		return
	}
	p, err := s.profile(r.Context(), site.ID, tok.Subject)
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			bearer.WriteError(w, site, &bearer.Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: "the token's user no longer exists"})
			return
		}
		s.logger.ErrorContext(r.Context(), "userinfo profile", "err", err)
		bearer.WriteError(w, site, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(userClaims(site, p, tok.Scopes))
}
