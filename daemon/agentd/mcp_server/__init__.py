"""``agentd mcp``: agentd as an MCP server on stdio (see README.md in this folder)."""
