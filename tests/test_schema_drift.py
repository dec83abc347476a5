"""schemas/ is generated from the wire types: no drift, and every example matches its type."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from agentd import schema
from agentd.protocol.events import SessionEvent
from agentd.protocol.table import METHODS

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
README = (SCHEMAS / "README.md").read_text(encoding="utf-8")
PROTOCOL = json.loads((SCHEMAS / "protocol.schema.json").read_text(encoding="utf-8"))
JSON_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


def test_checked_in_files_equal_a_fresh_generation() -> None:
    """protocol.schema.json, session.schema.json and the README tables are up to date."""
    drifted = schema.check(SCHEMAS)
    assert drifted == [], f"out of date: {drifted}; run `agentd schema` (make schema)"


def test_session_schema_exists_exactly_when_the_session_file_types_do() -> None:
    """The generator picks up agentd.protocol.session_file when it is present."""
    present = importlib.util.find_spec(schema.SESSION_FILE_MODULE) is not None
    assert (SCHEMAS / schema.SESSION_FILE).exists() == present
    if present:
        document = json.loads((SCHEMAS / schema.SESSION_FILE).read_text())
        assert {"header", "entry", "$defs"} <= document.keys()


def test_generation_notices_a_stale_table(short_tmp: Path) -> None:
    """Editing a generated table is drift; ``agentd schema --check`` exits 1, then 0 after."""
    copy = short_tmp / "schemas"
    shutil.copytree(SCHEMAS, copy)
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("| `initialize` |", "| `initialise` |", 1))
    check = [sys.executable, "-m", "agentd", "schema", "--check", "--out", str(copy)]
    assert subprocess.run(check, capture_output=True, check=False).returncode == 1
    write = [sys.executable, "-m", "agentd", "schema", "--out", str(copy)]
    assert subprocess.run(write, capture_output=True, check=False).returncode == 0
    assert subprocess.run(check, capture_output=True, check=False).returncode == 0
    assert readme.read_text() == README


def test_every_ref_resolves_and_every_method_is_described() -> None:
    """No dangling ``$ref``; each METHODS entry appears with params, result and direction."""
    refs = re.findall(r'"\$ref": "#/\$defs/([^"]+)"', json.dumps(PROTOCOL, indent=1))
    assert set(refs) <= PROTOCOL["$defs"].keys()
    assert PROTOCOL["methods"].keys() == METHODS.keys()
    for name, spec in METHODS.items():
        assert PROTOCOL["methods"][name]["direction"] == spec.direction
    assert {error["code"] for error in PROTOCOL["errors"]} >= {-32700, -32600, -32601, -32800}


def _section(title: str) -> dict[str, list[Any]]:
    """``#### `name` `` headings of a README section → the JSON blocks under each."""
    body = README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]
    parts = re.split(r"^#### `([^`]+)`$", body, flags=re.MULTILINE)
    return {
        name: [json.loads(block) for block in JSON_BLOCK.findall(text)]
        for name, text in zip(parts[1::2], parts[2::2], strict=True)
    }


def _unknown_members(value: Any, node: dict[str, Any], path: str = "$") -> list[str]:
    """Members of ``value`` that the schema ``node`` does not declare (typos in examples)."""
    if "$ref" in node:
        return _unknown_members(value, PROTOCOL["$defs"][node["$ref"].split("/")[-1]], path)
    if "anyOf" in node:
        options = [option for option in node["anyOf"] if _tag_matches(value, option)]
        return min((_unknown_members(value, option, path) for option in options), key=len)
    problems: list[str] = []
    if isinstance(value, dict) and "properties" in node:
        for key, item in value.items():
            if key not in node["properties"]:
                problems.append(f"{path}.{key}")
            else:
                problems += _unknown_members(item, node["properties"][key], f"{path}.{key}")
    if isinstance(value, list) and "items" in node:
        for index, item in enumerate(value):
            problems += _unknown_members(item, node["items"], f"{path}[{index}]")
    return problems


def _tag_matches(value: Any, node: dict[str, Any]) -> bool:
    """False when ``node`` is a tagged Struct whose tag differs from ``value``'s."""
    if "$ref" in node:
        node = PROTOCOL["$defs"][node["$ref"].split("/")[-1]]
    if not isinstance(value, dict):
        return True
    for key, prop in node.get("properties", {}).items():
        if len(prop.get("enum", ())) == 1 and key in value and value[key] != prop["enum"][0]:
            return False
    return True


def _check(value: Any, tp: Any, node: dict[str, Any]) -> None:
    msgspec.json.decode(json.dumps(value), type=tp)
    assert _unknown_members(value, node) == []


METHOD_EXAMPLES = _section("Method examples")
EVENT_EXAMPLES = _section("Event examples")


def test_every_method_has_an_example() -> None:
    """Adding a method to METHODS requires an example in schemas/README.md."""
    assert sorted(METHOD_EXAMPLES) == sorted(METHODS)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_method_example_matches_its_types(method: str) -> None:
    """The request's params and the answer's result decode as the method's types."""
    if method not in METHOD_EXAMPLES:
        pytest.fail(f"no example for {method} in schemas/README.md")
    spec, described = METHODS[method], PROTOCOL["methods"][method]
    request, response = METHOD_EXAMPLES[method]
    assert request["jsonrpc"] == response["jsonrpc"] == "2.0"
    assert request["method"] == method
    assert response["id"] == request["id"]
    _check(request.get("params", {}), spec.params, described["params"])
    _check(response["result"], spec.result, described["result"])


def test_every_event_has_an_example() -> None:
    """Adding an event to the union requires an example in schemas/README.md."""
    tags = [tp.__struct_config__.tag for tp in schema.event_types()]
    assert sorted(EVENT_EXAMPLES) == sorted(tags)


@pytest.mark.parametrize("tag", sorted(EVENT_EXAMPLES))
def test_event_example_matches_its_type(tag: str) -> None:
    """Each example is a complete ``session/event`` notification of that event type."""
    (notification,) = EVENT_EXAMPLES[tag]
    assert notification["jsonrpc"] == "2.0"
    assert "id" not in notification
    assert notification["method"] == "session/event"
    node = PROTOCOL["notifications"]["session/event"]
    _check(notification["params"], SessionEvent, node)
    assert notification["params"]["event"]["type"] == tag


def test_a_readme_without_generated_blocks_is_a_clear_error(short_tmp: Path) -> None:
    """``agentd schema`` refuses (exit 1, one line) rather than dropping the tables."""
    (short_tmp / "README.md").write_text("# hand-written only\n")
    result = subprocess.run(
        [sys.executable, "-m", "agentd", "schema", "--out", str(short_tmp)],
        capture_output=True,
        check=False,
    )
    assert result.returncode == 1
    assert b"generated blocks" in result.stderr
    assert b"Traceback" not in result.stderr


def test_every_config_key_is_documented_beside_its_field() -> None:
    """Each key of the configuration reference has its meaning, and that text is the field's
    own description (the JSON Schema carries the same one): there is no second copy."""
    from agentd.config.schema import reference_markdown

    rows = [line for line in reference_markdown().splitlines() if line.startswith("| `")]
    assert len(rows) > 40
    config = json.loads((SCHEMAS / schema.CONFIG_SCHEMA_FILE).read_text(encoding="utf-8"))
    described = {
        prop["description"]
        for table in config["$defs"].values()
        for prop in table.get("properties", {}).values()
        if "description" in prop
    }
    meanings = {row.rsplit("|", 2)[1].strip() for row in rows}
    assert "" not in meanings
    assert meanings <= described
