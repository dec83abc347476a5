"""Run a whole ``agentd serve --socket PATH`` as another, unprivileged user (started as root).

Usage: ``python -m tests.security.daemon_as_user USER SOCKET`` with the daemon's environment
(HOME, XDG dirs writable by USER…). The daemon runs in this very process, through its real
entry point, after:

1. importing, as root, every module it can need: all of agentd, the packages it depends on,
   and the standard-library modules it imports lazily. The interpreter may live where USER
   cannot read (a 0700 home), so nothing may be imported from disk once USER;
2. dropping to USER for good (supplementary groups, then gid, then uid, real, effective and
   saved), and marking the process dumpable again, as a process USER had started would be
   (a uid change clears the flag), so only the daemon's own start-up can clear it;
3. reporting on stderr, by name, any module still imported from disk (a late import USER
   could not read would otherwise fail somewhere inside the daemon).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import pkgutil
import pwd
import re
import sys
from collections.abc import Sequence
from importlib import metadata
from types import ModuleType

CLIENT_ONLY = frozenset({"agentctl", "rich", "pygments"})
"""Packages of the same distribution only the client uses (terminal rendering)."""
_REQUIREMENT = re.compile(r"[\s;<>=!~\[(]")

LAZY_STDLIB = (
    "asyncio.base_subprocess",
    "asyncio.subprocess",
    "asyncio.unix_events",
    "concurrent.futures.thread",
    "ctypes",
    "ctypes.util",
    "email.utils",
    "encodings.idna",
    "encodings.ascii",
    "encodings.latin_1",
    "encodings.utf_8",
    "hashlib",
    "hmac",
    "html",
    "importlib.readers",
    "importlib.resources.readers",
    "http.client",
    "http.cookiejar",
    "ipaddress",
    "json",
    "locale",
    "mimetypes",
    "secrets",
    "shlex",
    "ssl",
    "tomllib",
    "stringprep",
    "tempfile",
    "unicodedata",
    "urllib.parse",
    "urllib.request",
    "uuid",
    "zlib",
)
"""Standard-library modules the daemon and its packages import only when first needed."""


def runtime_packages() -> list[str]:
    """agentd and the top-level packages of every distribution it needs to run (its
    requirements without extras, recursively)."""
    needed: set[str] = set()
    pending = ["agentd"]
    while pending:
        name = _canonical(pending.pop())
        if name in needed:
            continue
        needed.add(name)
        try:
            requirements = metadata.requires(name) or []
        except metadata.PackageNotFoundError:  # a requirement for other Python versions
            continue
        pending += [_REQUIREMENT.split(req, 1)[0] for req in requirements if "extra ==" not in req]
    tops = metadata.packages_distributions()
    found = [
        top
        for top, dists in tops.items()
        if top.isidentifier() and any(_canonical(d) in needed for d in dists)
    ]
    return ["agentd", *sorted(set(found) - CLIENT_ONLY - {"agentd"})]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _import_submodules(package: ModuleType) -> None:
    """Import every submodule of ``package``, recursively; one that cannot be imported here
    (an optional backend, another platform's module such as ``click._winconsole``, a CLI that
    exits without its extra such as ``mcp.cli``) is skipped with what is below it."""
    for info in pkgutil.iter_modules(getattr(package, "__path__", []), f"{package.__name__}."):
        if ".__main__" in info.name or info.name.endswith("._main"):
            continue  # command-line entry points run on import
        try:
            module = importlib.import_module(info.name)
        except (Exception, SystemExit):
            continue
        if info.ispkg:
            _import_submodules(module)


def preload() -> None:
    """Import every package of :func:`runtime_packages` with all its submodules, and
    :data:`LAZY_STDLIB` (submodules needing what is not installed, such as optional
    backends or another platform, are skipped)."""
    for name in runtime_packages():
        try:
            package = importlib.import_module(name)
        except ImportError:  # a file a distribution ships that is not a module
            continue
        _import_submodules(package)
    for name in LAZY_STDLIB:
        importlib.import_module(name)


class LateImportReporter(importlib.abc.MetaPathFinder):
    """Names, on stderr, every module imported from disk after the switch of user (a module
    that does not exist at all, such as an optional dependency, is not reported)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        try:
            exists = importlib.machinery.PathFinder.find_spec(fullname, path) is not None
        except OSError:
            exists = True
        if exists:
            sys.stderr.write(f"daemon_as_user: late import of {fullname}\n")
            sys.stderr.flush()
        return None


def become(user: str) -> None:
    """Drop every privilege for ``user``'s uid and gid, for good; dumpable again."""
    from agentd.hardening import PR_SET_DUMPABLE, libc

    entry = pwd.getpwnam(user)
    os.setgroups([])
    os.setresgid(entry.pw_gid, entry.pw_gid, entry.pw_gid)
    os.setresuid(entry.pw_uid, entry.pw_uid, entry.pw_uid)
    os.chdir("/")  # the tests' folder may be out of the user's reach
    if libc().prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0:
        raise OSError("cannot mark the process dumpable")


def main(argv: Sequence[str]) -> int:
    user, socket_path = argv
    preload()
    become(user)
    sys.meta_path.insert(0, LateImportReporter())
    from agentd.cli import main as agentd_main

    return agentd_main(["serve", "--socket", socket_path])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
