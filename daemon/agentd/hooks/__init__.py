"""Hooks: the user's commands run at fixed points of a session's runs (see README.md)."""
