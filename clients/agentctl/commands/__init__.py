"""The commands of ``agentctl``, one module each (``cli.dispatch`` imports the one it runs)."""
