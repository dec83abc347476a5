"""The agent: its loop and the parts the loop is made of (see README.md in this folder)."""
