"""What ``web_search`` is built on: the SearXNG, Brave and Tavily backends and the domain
filters (imported on the first search; httpx with it)."""
