"""The memory store: keys, scopes, add / forget / edit, and an unwritable store."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from mycode_memory.editing import parse, render
from mycode_memory.select import rank, render_notes
from mycode_memory.store import MemoryStore, Note, StoreError, project_key, project_root

from mycode_core.tokens import count_text


def test_project_key_follows_the_git_root(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "pkg").mkdir(parents=True)
    assert project_root(repo / "src" / "pkg") == repo.resolve()
    assert project_key(repo / "src" / "pkg") == project_key(repo)
    assert project_key(repo).startswith("repo-")
    plain = tmp_path / "plain"
    plain.mkdir()
    assert project_root(plain) == plain.resolve()
    assert project_key(plain) != project_key(repo)


def test_scopes_are_separate_and_persist(tmp_path: Path, store: MemoryStore) -> None:
    home, ws = store.home, store.workspace
    p, added = store.add("tests run with `make check`", "project")
    u, _ = store.add("the user prefers short answers", "user")
    assert added
    again = MemoryStore(home, ws)
    assert [n.text for n in again.notes("project")] == ["tests run with `make check`"]
    assert [n.text for n in again.notes("user")] == ["the user prefers short answers"]
    other = tmp_path / "other"
    other.mkdir()
    assert MemoryStore(home, other).notes("project") == []
    assert [n.id for n in MemoryStore(home, other).notes("user")] == [u.id]
    assert (store.folder("project") / "project.txt").read_text().strip() == str(ws.resolve())
    assert list(ws.iterdir()) == []  # nothing written in the workspace
    assert p.id != u.id


def test_duplicates_are_not_added_twice(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home", tmp_path)
    first, _ = store.add("same fact", "project")
    second, added = store.add("  same fact ", "project")
    assert not added and second.id == first.id
    assert len(store.notes("project")) == 1


def test_forget_by_prefix_and_errors(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home", tmp_path)
    note, _ = store.add("one", "project")
    store.add("two", "user")
    assert store.forget(note.id[:4]).id == note.id
    assert [n.text for n in store.all_notes()] == ["two"]
    with pytest.raises(StoreError, match="no note with id"):
        store.forget("zzzz")
    with pytest.raises(StoreError, match="no note"):
        store.forget("")


def test_ambiguous_prefix(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home", tmp_path)
    store.replace("project", [Note("abc111", "x", 1.0), Note("abc222", "y", 2.0)])
    with pytest.raises(StoreError, match="ambiguous"):
        store.find("abc")


def test_unwritable_store_is_a_clear_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory").write_text("a file where the folder should be", encoding="utf-8")
    store = MemoryStore(home, tmp_path)
    with pytest.raises(StoreError, match="not writable"):
        store.add("a fact", "project")


def test_corrupt_lines_are_skipped(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "home", tmp_path)
    store.add("good", "user")
    with store.file("user").open("a", encoding="utf-8") as fh:
        fh.write('not json\n{"id": 1}\n')
    assert [n.text for n in store.notes("user")] == ["good"]


def test_edit_text_round_trip(tmp_path: Path) -> None:
    notes = [Note("aaa111", "first fact", 1.0), Note("bbb222", "second fact", 2.0)]
    text = render(notes, "project", "/w")
    assert parse(text, notes, "project") == notes
    edited = text.replace("second fact", "second fact, corrected")
    edited = edited.replace("<!-- note aaa111 -->\nfirst fact\n", "")
    edited += "\na brand new note\n\nand another\n"
    result = parse(edited, notes, "project")
    assert [n.text for n in result] == [
        "second fact, corrected",
        "a brand new note",
        "and another",
    ]
    assert result[0].id == "bbb222" and result[0].created == 2.0
    assert len({n.id for n in result}) == 3


def test_ranking_relevance_then_recency() -> None:
    now = time.time()
    notes = [
        Note("a", "use pnpm not npm for installs", now - 300),
        Note("b", "the database migrations live in db/migrate", now - 200),
        Note("c", "prefers tabs", now - 100),
    ]
    assert [n.id for n in rank(notes, "add a database migration")] == ["b", "c", "a"]
    assert [n.id for n in rank(notes, "")] == ["c", "b", "a"]


def test_budget_keeps_what_fits_and_counts_the_rest() -> None:
    now = time.time()
    notes = [Note(str(i), f"fact number {i} " + "word " * 40, now + i) for i in range(30)]
    text = render_notes(notes, "", 400, count_text)
    assert text is not None
    assert count_text(text) <= 430
    assert "fact number 29" in text and "fact number 0 " not in text
    assert "more notes not shown" in text
    assert render_notes([], "", 400, count_text) is None
