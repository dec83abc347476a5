"""The Agent Client Protocol front-end: ``agentd acp`` (see README.md)."""
