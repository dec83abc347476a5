"""agentd as the client of the MCP conformance suite's client scenarios
(``conformance client --command "python client.py" --scenario auth/…``): the suite appends
the URL of its test server. This signs in and connects the way a user would, each step a
real ``agentctl`` command, in a throwaway home whose shared daemon the first one starts (and
the last, ``agentctl daemon stop``, stops):

1. ``agentctl mcp list --check`` (the server answers 401: a sign-in is needed);
2. ``agentctl mcp login conformance`` with ``$BROWSER`` a program that follows the
   authorization address and its redirects back to agentd's loopback listener
   (:mod:`tests.mcp.follow_browser`);
3. ``agentctl mcp list --check`` again: the stored token is used (and refreshed when it
   expired) and the tools are listed.

A scenario whose ``MCP_CONFORMANCE_CONTEXT`` names a pre-registered client (``client_id``,
``client_secret``) gets it in the server's table (``oauth_client_id``, the secret in the
daemon's environment named by ``oauth_client_secret_env``).

Exit code 0 when the last check listed the server's tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
BROWSER = f"{sys.executable} {HERE.parent / 'follow_browser.py'} %s"


def main() -> int:
    url = sys.argv[-1]
    with tempfile.TemporaryDirectory(prefix="agentd-conformance-") as root:
        env = home(Path(root), url)
        agentctl(env, root, "mcp", "list", "--check", "--json")
        agentctl(env, root, "mcp", "login", "conformance", "--timeout", "20")
        checked = agentctl(env, root, "mcp", "list", "--check", "--json")
        agentctl(env, root, "daemon", "stop")
    servers = json.loads(checked.stdout or "{}").get("servers", [])
    check = next((s.get("check") for s in servers if s["name"] == "conformance"), None)
    return 0 if check and check["ok"] else 1


def home(root: Path, url: str) -> dict[str, str]:
    """A home whose user config names the server at ``url`` ``conformance``."""
    env = dict(os.environ)
    for variable, folder in (
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_DATA_HOME", "data"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "run"),
        ("HOME", "home"),
    ):
        (root / folder).mkdir(mode=0o700)
        env[variable] = str(root / folder)
    config = root / "config" / "agentd" / "config.toml"
    config.parent.mkdir(mode=0o700)
    table = f"[mcp_servers.conformance]\nurl = {json.dumps(url)}\n"
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    if context.get("client_id"):
        table += f"oauth_client_id = {json.dumps(context['client_id'])}\n"
    if context.get("client_secret"):
        table += 'oauth_client_secret_env = "CONFORMANCE_OAUTH_CLIENT_SECRET"\n'
        env["CONFORMANCE_OAUTH_CLIENT_SECRET"] = context["client_secret"]
    config.write_text(table)
    env["BROWSER"] = BROWSER
    env.pop("AGENTD_SOCKET", None)
    return env


def agentctl(env: dict[str, str], cwd: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``agentctl ARGS…``, its output passed on to this program's stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "agentctl", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    sys.stderr.write(f"$ agentctl {' '.join(args)}  (exit {done.returncode})\n")
    sys.stderr.write(done.stdout + done.stderr)
    return done


if __name__ == "__main__":
    sys.exit(main())
