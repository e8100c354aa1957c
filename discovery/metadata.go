package discovery

import (
	"github.com/lectern/lectern/authserver/scope"
	"github.com/lectern/lectern/tenant"
	"github.com/lectern/lectern/vocab"
)

// ProtectedResourceMetadata is the RFC 9728 document of a site's origin.
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name,omitempty"`
	ResourceDocumentation  string   `json:"resource_documentation,omitempty"`
}

// ServerMetadata is the RFC 8414 authorization-server metadata, which also
// serves as the OpenID Connect discovery document. The id_token fields are
// present only when the site issues id_tokens (spec §Authentication 8).
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint"`
	TokenEndpoint                              string   `json:"token_endpoint"`
	UserInfoEndpoint                           string   `json:"userinfo_endpoint"`
	RevocationEndpoint                         string   `json:"revocation_endpoint"`
	IntrospectionEndpoint                      string   `json:"introspection_endpoint"`
	RegistrationEndpoint                       string   `json:"registration_endpoint"`
	JWKSURI                                    string   `json:"jwks_uri,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported"`
	ResponseTypesSupported                     []string `json:"response_types_supported"`
	ResponseModesSupported                     []string `json:"response_modes_supported"`
	GrantTypesSupported                        []string `json:"grant_types_supported"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethodsSupported     []string `json:"revocation_endpoint_auth_methods_supported"`
	IntrospectionEndpointAuthMethodsSupported  []string `json:"introspection_endpoint_auth_methods_supported"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported"`
	AuthorizationResponseISSParameterSupported bool     `json:"authorization_response_iss_parameter_supported"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported"`
	IDTokenSigningAlgValuesSupported           []string `json:"id_token_signing_alg_values_supported,omitempty"`
	SubjectTypesSupported                      []string `json:"subject_types_supported,omitempty"`
	ClaimsSupported                            []string `json:"claims_supported"`
	ServiceDocumentation                       string   `json:"service_documentation"`
	ProtectedResources                         []string `json:"protected_resources"`
}

// ProtectedResource builds the protected-resource metadata of site.
func ProtectedResource(site *tenant.Site) ProtectedResourceMetadata {
	return ProtectedResourceMetadata{
		Resource:               site.Resource(),
		AuthorizationServers:   []string{site.Issuer()},
		ScopesSupported:        discoverableScopes(site),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           site.Name,
		ResourceDocumentation:  site.URL(vocab.AuthMDPath),
	}
}

// discoverableScopes are the scopes the protected-resource metadata offers.
// MCP clients request all of them when a challenge names none, so they must
// be a set such a client can actually be granted: on Variant B the member
// default a registered client gets; on Variant A identity and the operator
// read scopes an unreviewed Client ID Metadata Document client may ask for.
// The AS metadata lists every scope (docs/decisions.md).
func discoverableScopes(site *tenant.Site) []string {
	if site.Variant == tenant.VariantOpen {
		return scope.MemberDefault()
	}
	out := []string{scope.OpenID, scope.Profile, scope.Email}
	for _, name := range scope.OperatorScopes() {
		if scope.IsRead(name) {
			out = append(out, name)
		}
	}
	return out
}

// AuthorizationServer builds the authorization-server metadata of site.
// Client ID Metadata Documents are supported on every site: on Variant A
// from allowlisted hosts (any host with cimd_open), on Variant B, whose
// registration is open anyway, from any host (docs/decisions.md).
func AuthorizationServer(site *tenant.Site) ServerMetadata {
	m := ServerMetadata{
		Issuer:                                     site.Issuer(),
		AuthorizationEndpoint:                      site.URL(vocab.AuthorizePath),
		TokenEndpoint:                              site.URL(vocab.TokenPath),
		UserInfoEndpoint:                           site.URL(vocab.UserInfoPath),
		RevocationEndpoint:                         site.URL(vocab.RevocationPath),
		IntrospectionEndpoint:                      site.URL(vocab.IntrospectionPath),
		RegistrationEndpoint:                       site.URL(vocab.RegistrationPath),
		ScopesSupported:                            scope.Names(),
		ResponseTypesSupported:                     []string{"code"},
		ResponseModesSupported:                     []string{"query"},
		GrantTypesSupported:                        []string{"authorization_code", "refresh_token"},
		TokenEndpointAuthMethodsSupported:          []string{"none", "client_secret_post"},
		RevocationEndpointAuthMethodsSupported:     []string{"none", "client_secret_post"},
		IntrospectionEndpointAuthMethodsSupported:  []string{"client_secret_post"},
		CodeChallengeMethodsSupported:              []string{"S256"},
		AuthorizationResponseISSParameterSupported: true,
		ClientIDMetadataDocumentSupported:          true,
		ClaimsSupported:                            []string{"sub", "email", "email_verified", "name", "picture", "org_id", "roles"},
		ServiceDocumentation:                       site.URL(vocab.AuthMDPath),
		ProtectedResources:                         []string{site.Resource()},
	}
	if site.IDTokens {
		m.JWKSURI = site.URL(vocab.JWKSPath)
		m.IDTokenSigningAlgValuesSupported = []string{"ES256"}
		m.SubjectTypesSupported = []string{"public"}
		m.ClaimsSupported = append(m.ClaimsSupported, "iss", "aud", "exp", "iat", "nonce", "auth_time", "amr")
	}
	return m
}
