"""The JSON-RPC front-end over the session layer (see README.md in this folder)."""
