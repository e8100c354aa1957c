package vocab

// Endpoint paths, relative to a site's origin (spec §Endpoints). The router
// mounts handlers at these paths and the metadata advertises them.
const (
	AuthorizePath     = "/oauth/authorize"
	TokenPath         = "/api/oauth/token"
	UserInfoPath      = "/api/oauth/userinfo"
	RevocationPath    = "/api/oauth/revoke"
	IntrospectionPath = "/api/oauth/introspect"
	RegistrationPath  = "/api/oauth/register"
	JWKSPath          = "/.well-known/jwks.json"

	ProtectedResourcePath   = "/.well-known/oauth-protected-resource"
	AuthorizationServerPath = "/.well-known/oauth-authorization-server"
	OpenIDConfigurationPath = "/.well-known/openid-configuration"

	MemberGraphQLPath = "/member/graphql"
	MCPPath           = "/mcp"
	OpenAPIPath       = "/openapi.json"
	AuthMDPath        = "/auth.md"
	LLMSTxtPath       = "/llms.txt"
	PricingMDPath     = "/pricing.md"
	// CoursesPath is the prefix of the courses' Markdown pages,
	// /courses/<slug>.md (see CourseMDPath).
	CoursesPath = "/courses"
)

// CourseMDPath is the path of a course's Markdown page.
func CourseMDPath(slug string) string { return CoursesPath + "/" + slug + ".md" }
