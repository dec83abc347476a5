"""agentd as an LSP client of the project's language servers (see README.md here)."""
