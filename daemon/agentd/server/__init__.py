"""The daemon's method handlers and shared state (see README.md in this folder)."""
