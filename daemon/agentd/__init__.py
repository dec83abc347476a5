"""agentd: a headless coding-agent daemon."""

__version__ = "0.1.0"
