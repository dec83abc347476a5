"""A browser for the OAuth tests (``BROWSER="python follow_browser.py %s"``): it opens the
authorization address, follows the redirects (the authorization server's approval, then the
loopback redirect to agentd) and exits 0 when the last page answered 200. ``--log FILE``
appends each address it was asked to open."""

from __future__ import annotations

import sys

import httpx


def main() -> int:
    args = sys.argv[1:]
    if args[:1] == ["--log"]:
        with open(args[1], "a", encoding="utf-8") as log:
            log.write(args[2] + "\n")
        args = args[2:]
    answer = httpx.get(args[0], follow_redirects=True, timeout=60)
    return 0 if answer.status_code == 200 and "Signed in" in answer.text else 1


if __name__ == "__main__":
    sys.exit(main())
