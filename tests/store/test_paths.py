"""Store layout: the default root, per-cwd folder names, file names and ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentd.errors import InvalidParams
from agentd.store import cwd_slug, default_root
from agentd.store.paths import (
    epoch_from_iso,
    iso_from_epoch,
    new_entry_id,
    session_file_name,
    session_id_of,
)


def test_default_root_reads_xdg_data_home_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """$XDG_DATA_HOME wins when absolute; otherwise ~/.local/share."""
    monkeypatch.setenv("XDG_DATA_HOME", "/data/home")
    assert default_root() == Path("/data/home/agentd/sessions")
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")
    assert default_root() == Path.home() / ".local/share/agentd/sessions"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_root() == Path.home() / ".local/share/agentd/sessions"


@pytest.mark.parametrize(
    ("cwd", "slug"),
    [
        ("/home/me/proj", "--home-me-proj--"),
        ("/home/me/proj/", "--home-me-proj--"),
        ("/home/me/./proj", "--home-me-proj--"),
        ("/", "----"),
        ("/opt/v1.2/src_code", "--opt-v1.2-src_code--"),
    ],
)
def test_plain_paths_give_readable_slugs(cwd: str, slug: str) -> None:
    """Letters, digits, '.', '_' and '/' map one to one, so no hash is needed."""
    assert cwd_slug(cwd) == slug


def test_other_paths_get_a_hash_and_never_collide() -> None:
    """Paths that would read alike after replacing characters stay apart."""
    similar = ["/home/me-proj", "/home/me/proj", "/home/me proj", "/home/me_proj", "/home/mé/proj"]
    slugs = [cwd_slug(cwd) for cwd in similar]
    assert len(set(slugs)) == len(slugs)
    assert cwd_slug("/home/me-proj").startswith("--home-me-proj--")
    assert len(cwd_slug("/home/me-proj")) == len("--home-me-proj--") + 10


def test_slugs_are_filesystem_safe_and_bounded() -> None:
    """Any path gives a short name of safe characters; long paths keep their tail."""
    for cwd in ["/" + "deep/" * 60 + "leaf", "/tmp/a b/c\\d/e:f/\u00fc\u00f1\u00ee/\U0001f600"]:
        slug = cwd_slug(cwd)
        assert len(slug) <= 100
        assert all(c.isascii() and (c.isalnum() or c in "-._") for c in slug)
    assert "leaf" in cwd_slug("/" + "deep/" * 60 + "leaf")


def test_relative_cwd_is_refused() -> None:
    """Slugs only exist for absolute paths."""
    with pytest.raises(InvalidParams):
        cwd_slug("relative/path")


def test_file_names_carry_time_and_id() -> None:
    """The name sorts by creation time and gives the id back, underscores and all."""
    name = session_file_name("2026-01-02T03:04:05.678Z", "my_id.v2")
    assert name == "2026-01-02T03-04-05-678Z_my_id.v2.jsonl"
    assert session_id_of(name) == "my_id.v2"
    assert session_id_of("index.json") is None
    assert session_id_of("nounderscore.jsonl") is None


def test_entry_ids_avoid_taken_ones() -> None:
    """Short random ids, never one already in use."""
    taken = {new_entry_id(()) for _ in range(100)}
    assert all(len(i) == 8 for i in taken)
    assert new_entry_id(taken) not in taken


def test_timestamps_round_trip() -> None:
    """ISO strings with milliseconds and Z; unreadable ones count as the epoch."""
    assert iso_from_epoch(1.5) == "1970-01-01T00:00:01.500Z"
    assert epoch_from_iso("1970-01-01T00:00:01.500Z") == 1.5
    assert epoch_from_iso("1970-01-01T00:00:02") == 2.0
    assert epoch_from_iso("garbage") == 0.0
