"""``agentctl chat``: the REPL and its parts (``!command``, ``/rewind``, ``/compact``, Tab)."""
