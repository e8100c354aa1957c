package discovery

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/lectern/lectern/tenant"
)

// claims_supported lists every claim the site issues (OpenID Connect
// Discovery §3): the userinfo claims always, and with id_tokens the
// id_token's own, amr (RFC 8176, the ways the person signed in) among
// them.
func TestMetadataClaimsSupported(t *testing.T) {
	userinfo := []string{"sub", "email", "email_verified", "name", "picture", "org_id", "roles"}
	for _, c := range []struct {
		name string
		site *tenant.Site
		want []string
	}{
		{"id_tokens", docsSiteA, append(userinfo, "iss", "aud", "exp", "iat", "nonce", "auth_time", "amr")},
		{"no id_tokens", &tenant.Site{ID: 2, Slug: "b", Name: "B", Origin: "https://b.example", Variant: tenant.VariantOpen}, userinfo},
	} {
		t.Run(c.name, func(t *testing.T) {
			if diff := cmp.Diff(c.want, AuthorizationServer(c.site).ClaimsSupported); diff != "" {
				t.Errorf("claims_supported (-want +got):\n%s", diff)
			}
		})
	}
}
