package authserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lectern/lectern/tenant"
)

// A 401 to a client that tried the Authorization header challenges its
// scheme (a well-formed one; anything else gets Basic, and no quote or
// control character of the request reaches the header); other statuses,
// and requests without the header, get no challenge.
func TestClientChallenge(t *testing.T) {
	site := &tenant.Site{ID: 1, Origin: "https://school.test"}
	tests := []struct {
		name, auth string
		status     int
		want       string
	}{
		{"basic", "Basic Y2xpZW50OnNlY3JldA==", 401, `Basic realm="https://school.test"`},
		{"another scheme", "Digest username=x", 401, `Digest realm="https://school.test"`},
		{"no scheme", `"weird`, 401, `Basic realm="https://school.test"`},
		{"a long scheme", "Abcdefghijklmnopqrstuvwxyzabcdefghij x", 401, `Basic realm="https://school.test"`},
		{"not a 401", "Basic x", 400, ""},
		{"no header", "", 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/api/oauth/token", nil)
			r = r.WithContext(tenant.WithSite(r.Context(), site))
			if tt.auth != "" {
				r.Header.Set("Authorization", tt.auth)
			}
			rec := httptest.NewRecorder()
			clientChallenge(rec, r).WriteHeader(tt.status)
			if got := rec.Header().Get("WWW-Authenticate"); got != tt.want || rec.Code != tt.status {
				t.Errorf("%d WWW-Authenticate %q; want %d %q", rec.Code, got, tt.status, tt.want)
			}
		})
	}
}
