"""Driving one run (timeout, Ctrl-C, exit codes) and reporting how it ended."""
