"""The permission policy for tool calls (see README.md in this folder)."""
