package mcp

import (
	"strconv"
	"strings"

	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// supportedVersions are the protocol revisions the server speaks, newest
// first: those of the pinned go-sdk (DESIGN §8).
var supportedVersions = gomcp.SupportedProtocolVersions()

// unsupportedVersion is the answer to an MCP-Protocol-Version header that
// names no revision the server speaks. MCP (2025-06-18 on, Transports,
// "Protocol Version Header") wants a 400; its body says so and lists the
// supported revisions, in the form the 2026-07-28 revision defines for it
// (-32022 with data {supported, requested}), on which the go-sdk client
// negotiates down. The SDK itself refuses only unknown names sorting
// before 2026-07-28 (in plain text) and lets any later one through as a
// future revision, to fail on a missing _meta field instead.
func unsupportedVersion(v string) rpcError {
	v = bounded(v)
	return rpcError{
		Code: gomcp.CodeUnsupportedProtocolVersion,
		Message: "protocol version " + strconv.Quote(v) + " (MCP-Protocol-Version) is not supported; supported versions: " +
			strings.Join(supportedVersions, ", "),
		Data: gomcp.UnsupportedProtocolVersionData{Supported: supportedVersions, Requested: v},
	}
}
