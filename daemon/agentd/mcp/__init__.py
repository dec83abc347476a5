"""MCP servers' tools as session tools (see README.md in this folder). Imported only when a
session has MCP servers."""
