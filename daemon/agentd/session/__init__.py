"""The session layer every front-end plugs into (see README.md in this folder)."""
