"""What ``web_fetch`` is built on: the address guard, the pinned HTTP fetch, HTML to Markdown."""
