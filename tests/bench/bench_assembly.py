"""How a session is put together, measured on the source (``python -m tests.bench.bench_assembly``).

The rows are the structural budgets of assembling a session once, from values:

* assignments into another object's attributes in the session layer (``agentd/session``),
  outside that object's own methods and not on a value the same function just built — the
  wiring of parts after construction; the change recorder's modules (:data:`RECORDER`: ctypes
  prototypes, a listener's overflow flag, a directory record) are counted on a row of their
  own, as they update their own records rather than wire session parts;
* collaborators handed to a part after it was built (``SessionSink.serve``: the agent,
  built around the sink's ``emit``, is the one the sink gets afterwards);
* the places that build a provider (calls of ``make_provider``);
* the lines of ``SessionRuntime.__init__`` (it only stores its parts);
* the lines of ``session/factory.py`` and its function-level imports;
* the modules over 400 lines (daemon and agentctl) whose package README gives no reason.

Read with :mod:`ast`, so a row cannot drift from the code it counts.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAEMON = ROOT / "daemon" / "agentd"
CLIENT = ROOT / "clients" / "agentctl"
MAX_LINES = 400
RECORDER = ("inotify.py", "treewatch.py")
"""The change recorder's modules in the session folder (their own bookkeeping, not wiring)."""


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node


def _built_here(function: ast.AST) -> set[str]:
    """Names the function binds to a call's result (values it builds itself)."""
    return {
        target.id
        for node in ast.walk(function)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def wiring_assignments(folder: Path) -> list[str]:
    """``other.attr = value`` in ``folder``'s modules (see the module docstring)."""
    found: set[str] = set()
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for function in _functions(tree):
            built = _built_here(function)
            for node in ast.walk(function):
                if not isinstance(node, ast.Assign):
                    continue
                for target in node.targets:
                    for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                        if not isinstance(element, ast.Attribute):
                            continue
                        base = element.value
                        if isinstance(base, ast.Name) and base.id in {"self", "cls", *built}:
                            continue
                        where = path.relative_to(ROOT)
                        found.add(f"{where}:{node.lineno}: {ast.unparse(element)}")
    return sorted(found)


def calls_of(name: str, folder: Path) -> list[str]:
    """The call sites of a function or method called ``name`` under ``folder``."""
    sites = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called == name:
                sites.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return sites


def init_lines(path: Path, cls: str) -> int:
    """The lines of ``cls.__init__`` in ``path`` (its signature to its last statement)."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    return (item.end_lineno or item.lineno) - item.lineno + 1
    raise LookupError(f"{cls}.__init__ not in {path}")


def function_imports(path: Path) -> int:
    """Import statements inside functions of ``path``."""
    tree = ast.parse(path.read_text(), str(path))
    return sum(
        isinstance(node, ast.Import | ast.ImportFrom)
        for function in _functions(tree)
        for node in ast.walk(function)
    )


def _package_readme(path: Path) -> str:
    """The README of the nearest folder above ``path`` that has one (agentctl's folders are
    listed in its README)."""
    for folder in path.parents:
        readme = folder / "README.md"
        if readme.exists():
            return readme.read_text()
    return ""


def long_modules_without_reason() -> tuple[list[str], list[str]]:
    """Modules over :data:`MAX_LINES` lines, and those among them whose package README does
    not say why (a line naming the module and "400")."""
    long, unexplained = [], []
    for folder in (DAEMON, CLIENT):
        for path in sorted(folder.rglob("*.py")):
            if len(path.read_text().splitlines()) <= MAX_LINES:
                continue
            where = str(path.relative_to(ROOT))
            long.append(where)
            text = _package_readme(path)
            reasons = [
                line for line in text.splitlines() if f"`{path.name}`" in line and "400" in line
            ]
            if not reasons:
                unexplained.append(where)
    return long, unexplained


def main() -> list[tuple[str, str, str]]:
    session = DAEMON / "session"
    found = wiring_assignments(session)
    recorder = [line for line in found if line.split(":")[0].endswith(RECORDER)]
    wiring = [line for line in found if line not in recorder]
    handed = calls_of("serve", session)
    builders = calls_of("make_provider", DAEMON)
    long, unexplained = long_modules_without_reason()
    factory = session / "factory.py"
    for line in [*wiring, *handed, *unexplained]:
        print(f"  {line}", file=sys.stderr)
    return [
        ("session layer: assignments into another part's attributes", str(len(wiring)), "≤ 5"),
        ("… the change recorder's updates of its own records", str(len(recorder)), "—"),
        ("session layer: collaborators handed over after construction", str(len(handed)), "—"),
        ("places that build a provider (make_provider calls)", str(len(builders)), "1"),
        (
            "SessionRuntime.__init__ lines",
            str(init_lines(session / "runtime.py", "SessionRuntime")),
            "≈ 25",
        ),
        ("session/factory.py lines", str(len(factory.read_text().splitlines())), "≈ 300"),
        ("session/factory.py function-level imports", str(function_imports(factory)), "≤ 5"),
        (f"modules over {MAX_LINES} lines", str(len(long)), "—"),
        (f"modules over {MAX_LINES} lines without a README reason", str(len(unexplained)), "0"),
    ]


if __name__ == "__main__":
    from tests.bench.__main__ import render

    print(render([(m, v, b, "bench_assembly") for m, v, b in main()]))
