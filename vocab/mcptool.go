package vocab

// MCPTool names one tool of the MCP server and the scopes it needs (none:
// public), so that /auth.md lists the tools the server really has. The mcp
// package provides the list (mcp.ToolAccess) and discovery prints it; neither
// imports the other.
type MCPTool struct {
	Name   string
	Scopes []string
}
