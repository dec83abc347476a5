"""Path arguments as permission rules see them: the per-check resolver and the rule fast
paths give exactly what ``os.path.realpath`` and the general glob matcher give."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentd.permissions.paths import LISTING_LIMIT, PathView, Resolver
from agentd.permissions.policy import PermissionPolicy
from agentd.permissions.rules import Rule
from agentd.tools import build_tools
from agentd.tools.search.ignore import parse_rule

TOOLS = build_tools()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A project with file, folder, dangling, looping and outward symlinks."""
    root = tmp_path / "project"
    (root / "src" / "deep").mkdir(parents=True)
    (root / ".env").write_text("SECRET=1\n")
    (root / "README.md").write_text("hi\n")
    (root / "src" / "main.py").write_text("\n")
    (root / "to-env").symlink_to(root / ".env")
    (root / "to-src").symlink_to("src")
    (root / "dangling").symlink_to(root / "missing")
    (root / "loop").symlink_to(root / "loop")
    (root / "out").symlink_to(tmp_path)
    (root / "src" / "deep" / "up").symlink_to("../..")
    return root


WORDS = [
    "README.md", "to-env", "to-src", "dangling", "loop", "out", "missing", ".", "..", "",
    "src", "src/main.py", "to-src/main.py", "src/deep/up/.env", "out/project/.env",
    "../project/to-env", "./to-env", "a//b/../to-env", "/etc/hostname", "~", "~/x",
    "~nobody-such-user/x", "to-env/", "x\x00y", "n" * 300, "é-ü", "src/deep/up",
]  # fmt: skip


def expected(cwd: Path, raw: str) -> PathView:
    expanded = os.path.expanduser(raw) if raw.startswith("~") else raw
    absolute = os.path.join(str(cwd), expanded)
    try:
        real = os.path.realpath(absolute)
    except ValueError:  # NUL: the resolver keeps the name as written
        head, tail = os.path.split(absolute)
        real = f"{os.path.realpath(head).rstrip('/')}/{tail}"
    return PathView(os.path.normpath(absolute), real)


@pytest.mark.parametrize("cwd_name", ["project", "project/to-src", "project/src/deep/up"])
def test_the_resolver_gives_what_realpath_gives(tree: Path, cwd_name: str) -> None:
    """One resolver for all words (so folders are also read as a whole), the cwd through
    symlinks too."""
    cwd = tree.parent / cwd_name
    resolver = Resolver(cwd)
    for raw in WORDS + WORDS:  # the second round is served from the check's cache
        assert resolver.view(raw) == expected(cwd, raw), raw
        assert PathView.of(raw, cwd) == expected(cwd, raw), raw


def test_a_folder_too_large_to_read_is_asked_name_by_name(tmp_path: Path) -> None:
    for index in range(LISTING_LIMIT + 10):
        (tmp_path / f"file{index:04}").touch()
    (tmp_path / "zz-link").symlink_to(tmp_path / "file0001")
    resolver = Resolver(tmp_path)
    for raw in ["a", "b", "c", "d", "e", "zz-link", "file0002"]:
        assert resolver.view(raw) == expected(tmp_path, raw)


@pytest.mark.parametrize("size", [3, 40, LISTING_LIMIT + 10])
def test_a_symlink_named_after_many_other_words_is_still_denied(tmp_path: Path, size: int) -> None:
    (tmp_path / ".env").write_text("SECRET=1\n")
    for index in range(size):
        (tmp_path / f"f{index}").touch()
    (tmp_path / "innocent").symlink_to(tmp_path / ".env")
    policy = PermissionPolicy("auto", deny=["read(.env)"], cwd=tmp_path)
    words = " ".join(f"f{index}" for index in range(min(size, 30)))
    command = f"cat {words} missing-a missing-b innocent"
    assert policy.check(TOOLS["bash"], {"command": command}).action == "deny"
    assert policy.check(TOOLS["bash"], {"command": f"cat {words}"}).action == "allow"


SPECS = [
    ".env", ".env*", "*.pem", "!x", "#x", "a b", "x/", ".git/**", "src/*.py", "src/**",
    "src/deep/**/x", "**/secret", "{a,b}/c", "src//x", "./src/x", "src/../x", "s?c/x",
    "src/main.py", "\\#x", "[s]rc/x",
]  # fmt: skip
PATHS = [
    ".env", ".env.local", "x", "#x", "a b", ".git/hooks/pre-commit", ".git", "src/main.py",
    "src/a/main.py", "src/deep/x", "src/deep/q/x", "lib/secret", "a/c", "b/c", "src/x",
    "sac/x", "src", ".", "key.pem", "deep/.env",
]  # fmt: skip


@pytest.mark.parametrize("spec", SPECS)
def test_rule_fast_paths_agree_with_the_glob_matcher(tmp_path: Path, spec: str) -> None:
    """A literal file name is compared as a string and a relative glob's literal leading
    folders are checked first: neither changes what the glob matcher decides."""
    rule = Rule.parse(f"read({spec})")
    glob = parse_rule(spec)
    root = str(tmp_path)
    for relative in PATHS:
        path = os.path.normpath(f"{root}/{relative}")
        name = path.rsplit("/", 1)[-1]
        if "/" not in spec.rstrip("/"):  # a deny rule naming a file anywhere
            want = glob is not None and glob.matches(path.lstrip("/"), name, False)
            assert rule.matches_path(path, tmp_path, anywhere=True) is want, (spec, relative)
        candidate = "." if path == root else path[len(root) + 1 :]
        want = glob is not None and glob.matches(candidate, candidate.rsplit("/", 1)[-1], False)
        assert rule.matches_path(path, tmp_path) is want, (spec, relative)
