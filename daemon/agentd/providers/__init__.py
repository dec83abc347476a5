"""LLM providers: one module per wire format (see README.md in this folder)."""
