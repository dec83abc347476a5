"""``agentd lsp``: agentd as a language server (see README.md)."""
