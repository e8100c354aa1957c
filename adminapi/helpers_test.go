package adminapi

import (
	"net/http"

	"github.com/lectern/lectern/authserver/bearer"
)

// noTokens refuses every request as the verifier refuses one without a
// token.
type noTokens struct{}

func (noTokens) Authenticate(r *http.Request) (*bearer.Token, error) {
	if _, err := bearer.TokenFromHeader(r.Header); err != nil {
		return nil, err
	}
	return nil, bearer.InvalidToken("the access token is invalid")
}
