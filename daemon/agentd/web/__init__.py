"""The browser front-end: ``agentd serve --http`` and the chat page (see README.md).

Nothing here is imported unless the daemon serves HTTP.
"""
