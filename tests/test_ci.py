"""CI runs exactly the README's test command, and an empty test run fails it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.harness import scaled

ROOT = Path(__file__).resolve().parents[1]


def _quick_start() -> list[str]:
    """The commands of the README's quick start block (comments dropped)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split("#", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_quick_start_is_two_commands_and_ci_runs_the_test_one() -> None:
    """``make demo`` and ``make test``; ``.ci/run`` installs system packages (only those, and
    only with apt-get), then runs the second, then reports on the newest library versions
    without failing on them."""
    assert _quick_start() == ["make demo", "make test"]
    script = (ROOT / ".ci/run").read_text(encoding="utf-8")
    commands = [
        line
        for line in script.splitlines()
        if line.strip() and not line.startswith(("#", "set ", "cd "))
    ]
    assert commands == [".ci/system-packages", "make test", ".ci/newest || true"]
    assert os.access(ROOT / ".ci/run", os.X_OK)
    assert os.access(ROOT / ".ci/system-packages", os.X_OK)


def _requirement_names(specs: list[str]) -> set[str]:
    return {
        re.split(r"[<>=!~\[; ]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in specs
    }


def test_every_install_comes_from_the_lock_file() -> None:
    """Every runtime and dev dependency has an exact pin in ``requirements.lock``, and the
    Makefile's set-up installs pip and the project with the lock as constraints (a library's
    new release cannot change what a fresh ``make test`` runs). ``dev`` naming one of the
    project's own extras (``agentd[ray]``) wants that extra's dependencies."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    extras = project["optional-dependencies"]
    specs = list(project["dependencies"])
    for spec in extras["dev"]:
        own = re.fullmatch(rf"{project['name']}\[([a-z0-9_,-]+)\]", spec)
        specs += [s for extra in own[1].split(",") for s in extras[extra]] if own else [spec]
    wanted = _requirement_names(specs)
    assert "ray" in wanted  # the Ray engine's tests run in `make test`
    lines = (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines()
    pins = [line for line in lines if line and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+", pin) for pin in pins), pins
    assert wanted <= _requirement_names(pins), wanted - _requirement_names(pins)
    assert "pip" in _requirement_names(pins)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "pip install --quiet -c $(LOCK) pip" in makefile
    assert "pip install --quiet -c $(LOCK) -e '.[dev]'" in makefile


def _make_pytest(target: Path) -> subprocess.CompletedProcess[str]:
    """``make pytest`` with the current interpreter's tools, on ``target`` only.

    ``-o .venv/.installed`` (the Makefile's install stamp) keeps make from installing; two
    workers are plenty for one probe file (each worker is a Python start and a collection).
    """
    env = dict(os.environ, PYTEST_ADDOPTS=f"-c {ROOT / 'pyproject.toml'} {target}")
    make = ["make", "-s", "-o", ".venv/.installed", "pytest", "PYTEST_WORKERS=2"]
    return subprocess.run(
        [*make, f"BIN={Path(sys.executable).parent}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


@pytest.mark.nested
@pytest.mark.parametrize(
    ("body", "passes"),
    [
        (None, False),
        ("def test_ok():\n    pass\n", True),
        ("def test_no():\n    assert 0\n", False),
    ],
    ids=["no-tests", "passing", "failing"],
)
def test_make_pytest_fails_on_an_empty_run(short_tmp: Path, body: str | None, passes: bool) -> None:
    """pytest's exit 5 (nothing collected) fails ``make test`` like a failing test does."""
    target = short_tmp / "test_probe.py"
    if body is not None:
        target.write_text(body)
    result = _make_pytest(target if body is not None else short_tmp)
    assert (result.returncode == 0) == passes, result.stdout + result.stderr
    if body is None:
        assert "pytest collected no tests" in result.stderr


def _selects(markers: str, test: object) -> bool:
    """Whether pytest's ``-m markers`` selects ``test`` (a test function), by pytest's own
    evaluation of the expression against the test's marks."""
    from _pytest.mark.expression import Expression

    names = {mark.name for mark in getattr(test, "pytestmark", [])}
    return Expression.compile(markers).evaluate(lambda name, /, **_: name in names)


def test_the_fast_layer_skips_the_nested_make_runs_and_make_test_keeps_them() -> None:
    """``make test-fast`` does not select the ``make pytest`` runs above (they take minutes);
    the ``make pytest`` of ``make test`` does."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    fast = re.search(r"^FAST_MARKERS = (.+)$", makefile, re.MULTILINE)
    assert fast is not None, "the Makefile names test-fast's markers in FAST_MARKERS"
    assert '-m "$(FAST_MARKERS)"' in makefile
    assert '-m "not serial"' in makefile  # make pytest's parallel run
    nested = test_make_pytest_fails_on_an_empty_run
    assert not _selects(fast[1], nested)
    assert _selects("not serial", nested)
    assert _selects(
        fast[1], test_the_fast_layer_skips_the_nested_make_runs_and_make_test_keeps_them
    )


def _workers_for_load() -> int:
    """docs/development.md's rule: three per core less the 1-minute load, at least two."""
    load = int(Path("/proc/loadavg").read_text().split(".", 1)[0])
    return max(2, 3 * (os.cpu_count() or 2) - load)


@pytest.mark.skipif(not Path("/proc/loadavg").exists(), reason="no /proc/loadavg here")
def test_the_worker_count_leaves_headroom_on_a_loaded_machine() -> None:
    """``make``'s PYTEST_WORKERS is the documented rule at the load of the moment (read on
    both sides of the call: the load may cross a whole number in between)."""
    before = _workers_for_load()
    shown = subprocess.run(
        ["make", "-s", "--eval", "workers: ; @echo $(PYTEST_WORKERS)", "workers"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(30),
        check=True,
    )
    assert int(shown.stdout) in {before, _workers_for_load()}
    given = subprocess.run(
        [
            "make",
            "-s",
            "--eval",
            "workers: ; @echo $(PYTEST_WORKERS)",
            "workers",
            "PYTEST_WORKERS=5",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=scaled(30),
        check=True,
    )
    assert given.stdout.strip() == "5"  # an explicit count wins
