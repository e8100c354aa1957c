package vocab

// Fixed limits a client meets, shared by the package that applies each and
// /auth.md, which states it (discovery imports neither applier). The
// limits operators tune are package limits'; these are fixed in code.
const (
	// MaxBodyBytes caps every request body but file uploads': 1 MiB
	// (larger: 413). The wiring applies it (internal/server.MaxBodyBytes,
	// held equal by integration.TestAuthMDStatesTheLimitsAClientMeets).
	MaxBodyBytes = 1 << 20
	// MCPMaxBatch is the most messages one JSON-RPC batch to /mcp may
	// carry (mcp.MaxBatch).
	MCPMaxBatch = 10
	// PendingPerPerson is how many authorization requests waiting for
	// consent or a new sign-in one signed-in person may start at a site
	// at once; they come back at that many per 15 minutes (authserver).
	PendingPerPerson = 20
)
