"""agentctl: the shell client and async Python client library for agentd."""
