"""web_fetch in the permission policy: read-only and ask ask, auto runs it;
``web_fetch(domain:HOST)`` rules allow or deny by the URL's host; an "always" answer
remembers the host."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.config.schema import ConfigFile
from agentd.config.trust import tighten
from agentd.permissions.policy import PermissionPolicy, PolicyError
from agentd.tools import build_tools

FETCH = build_tools(["web_fetch"])["web_fetch"]
URL = {"url": "https://docs.python.org/3/library/ipaddress.html"}


@pytest.mark.parametrize(
    ("mode", "action"), [("auto", "allow"), ("ask", "ask"), ("read-only", "ask")]
)
def test_modes(mode: str, action: str) -> None:
    assert PermissionPolicy(mode).check(FETCH, URL).action == action


def test_domain_rules_allow_and_deny_by_host() -> None:
    policy = PermissionPolicy(
        "ask", allow=["web_fetch(domain:docs.python.org)"], deny=["web_fetch(domain:*.evil.test)"]
    )
    allowed = policy.check(FETCH, URL)
    assert allowed.action == "allow"
    assert allowed.reason == "allowed by `web_fetch(domain:docs.python.org)`"
    assert policy.check(FETCH, {"url": "https://pypi.org/"}).action == "ask"
    assert policy.check(FETCH, {"url": "https://docs.python.org.evil.test/"}).action == "deny"
    auto = PermissionPolicy("auto", deny=["web_fetch(domain:*.evil.test)"])
    assert auto.check(FETCH, {"url": "http://a.evil.test/x"}).action == "deny"


def test_read_only_fetches_unasked_only_where_a_rule_allows_the_host() -> None:
    policy = PermissionPolicy("read-only", allow=["web_fetch(domain:docs.python.org)"])
    assert policy.check(FETCH, URL).action == "allow"
    asked = policy.check(FETCH, {"url": "https://attacker.test/?q=secret"})
    assert asked.action == "ask"
    assert asked.reason == "web_fetch reaches the network: it needs approval in read-only mode"


def test_always_remembers_the_host_only() -> None:
    policy = PermissionPolicy("ask")
    assert policy.remember("web_fetch", URL, allow=True) == "web_fetch(domain:docs.python.org)"
    assert policy.check(FETCH, URL).action == "allow"
    assert policy.check(FETCH, {"url": "https://example.com/"}).action == "ask"


def test_a_bad_domain_rule_is_a_clear_config_error() -> None:
    with pytest.raises(PolicyError, match=r"write web_fetch\(domain:HOST\)"):
        PermissionPolicy("ask", allow=["web_fetch(docs.python.org)"])


def test_an_untrusted_project_cannot_open_the_ssrf_guard(tmp_path: Path) -> None:
    """``[tools.web_fetch] allow_hosts`` loosens the guard: an untrusted project file's is
    ignored (and named in the warning), while its tightening keys still apply."""
    project = {"tools": {"web_fetch": {"allow_hosts": ["169.254.169.254"]}, "bash_timeout": 5}}
    kept, ignored = tighten(ConfigFile(), project, tmp_path)
    assert kept == {"tools": {"bash_timeout": 5}}
    assert ignored == ["tools.web_fetch"]
