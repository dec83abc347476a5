"""Every wire type of agentd, as msgspec Structs (the single source of truth).

Modules: ``base`` (shared Struct settings), ``content`` (messages), ``events`` (the
``Event`` union and ``session/event`` envelope), ``methods`` (params/results), ``table`` (the
``METHODS`` table), ``session_file`` (session JSONL header and entries). Imports only msgspec.
"""
