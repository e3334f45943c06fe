"""``/rewind``: files and conversation back to before a turn (real runs, real files)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import FakeOpenAIServer, cli_env, run_cli, script_turn, turn, write_script
from mycode_core.testing.terminal import Terminal


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("one\n")
    return root


def _run(ws: Path, home: Path, prompt: str, turns: list[dict[str, Any]], *extra: str) -> Any:
    script = home.parent / f"script-{len(list(home.parent.glob('script-*')))}.json"
    model = write_script(script, [*turns, {"content": f"done: {prompt}"}])
    args = ["-p", prompt, "--model", model, "--output-format", "json", "--cwd", str(ws),
            "--permission-mode", "bypass", "--completion-policy", "off", *extra]  # fmt: skip
    return run_cli(args, ws, home, timeout=180)


def _three_turns(ws: Path, home: Path) -> str:
    """Turn 1 edits a.py, turn 2 only talks, turn 3 edits a.py again and creates b.txt."""
    first = _run(ws, home, "first", [script_turn("read_file", path="a.py"),
                                     script_turn("edit_file", path="a.py", old_string="one",
                                           new_string="two")])  # fmt: skip
    assert first.rc == 0, first.stderr
    session = str(json.loads(first.stdout)["session_id"])
    assert _run(ws, home, "second", [], "--resume", session).rc == 0
    third = _run(ws, home, "third", [script_turn("read_file", path="a.py"),
                                     script_turn("edit_file", path="a.py", old_string="two",
                                           new_string="three"),
                                     script_turn("write_file", path="b.txt", content="new\n")],
                 "--resume", session)  # fmt: skip
    assert third.rc == 0, third.stderr
    assert (ws / "a.py").read_text() == "three\n"
    return session


def _slash(ws: Path, home: Path, session: str, text: str, *extra: str) -> Any:
    model = write_script(home.parent / "none.json", [])
    return run_cli(["-p", text, "--resume", session, "--model", model, "--cwd", str(ws), *extra],
                   ws, home, timeout=120)  # fmt: skip


def _events(home: Path, session: str) -> list[dict[str, Any]]:
    path = home / "sessions" / f"{session}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_rewind_restores_files_and_resume_continues_from_the_cut(ws: Path, home: Path) -> None:
    session = _three_turns(ws, home)
    listed = _slash(ws, home, session, "/rewind")
    assert listed.rc == 0, listed.stderr
    assert "1. first · modified a.py" in listed.stdout
    assert "2. second · no files changed" in listed.stdout
    assert "3. third · modified a.py, created b.txt" in listed.stdout
    done = _slash(ws, home, session, "/rewind 2")
    assert done.rc == 0, done.stderr
    assert "restored a.py" in done.stdout and "removed b.txt" in done.stdout
    assert "conversation is back to before turn 2" in done.stdout
    assert (ws / "a.py").read_text() == "two\n" and not (ws / "b.txt").exists()
    assert [e["turn"] for e in _events(home, session) if e["type"] == "rewind"] == [2]
    # the next run sees turn 1 only, then its own prompt: what a model is sent shows it
    with FakeOpenAIServer() as server:
        server.enqueue(turn("after the rewind"))
        resumed = run_cli(["-p", "fourth", "--resume", session, "--model", "m", "--base-url",
                           server.base_url, "--api-key", "k", "--cwd", str(ws)],
                          ws, home, timeout=120)  # fmt: skip
        assert resumed.rc == 0, resumed.stderr
        sent = [r.messages for r in server.requests if r.messages][-1]
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users == ["first", "fourth"]
    again = _slash(ws, home, session, "/rewind")
    assert "1. first" in again.stdout and "4. fourth" in again.stdout
    assert "second" not in again.stdout and "third" not in again.stdout
    timeline = run_cli(["sessions", "show", session], ws, home, timeout=60)
    assert "back to before task 2" in timeline.stdout


def test_rewind_refuses_hand_edited_files_and_keeps_the_conversation(ws: Path, home: Path) -> None:
    session = _three_turns(ws, home)
    (ws / "a.py").write_text("my own edit\n")
    refused = _slash(ws, home, session, "/rewind 3")
    # refused as `mycode undo` refuses: exit 1, the reason on stderr
    assert refused.rc == 1 and "a.py" in refused.stderr and "--force" in refused.stderr
    assert "nothing was rewound" in refused.stderr
    assert (ws / "a.py").read_text() == "my own edit\n" and (ws / "b.txt").exists()
    assert not [e for e in _events(home, session) if e["type"] == "rewind"]
    forced = _slash(ws, home, session, "/rewind 3 --force")
    assert forced.rc == 0 and (ws / "a.py").read_text() == "two\n"
    assert not (ws / "b.txt").exists()
    bad = _slash(ws, home, session, "/rewind 9")
    assert bad.rc == 2 and "no turn 9" in bad.stderr and "1, 2" in bad.stderr
    word = _slash(ws, home, session, "/rewind abc")
    assert word.rc == 2 and "'abc' is not a turn" in word.stderr
    as_json = _slash(ws, home, session, "/rewind 9", "--output-format", "json")
    assert as_json.rc == 2 and "no turn 9" in json.loads(as_json.stdout)["final_text"]
    assert "Traceback" not in bad.stderr + forced.stderr + refused.stderr + word.stderr


def test_rewind_with_no_turn_yet(ws: Path, home: Path) -> None:
    model = write_script(home.parent / "none.json", [])
    none = run_cli(["-p", "/rewind", "--model", model, "--cwd", str(ws)], ws, home, timeout=60)
    assert none.rc == 2 and "nothing to rewind" in none.stderr  # as `mycode undo` with none


def test_interactive_rewind_picker_cuts_files_and_conversation(ws: Path, home: Path) -> None:
    env = cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})
    write_a = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}
    with FakeOpenAIServer() as server:
        server.enqueue(turn("answer one"), turn(None, [write_a]), turn("answer two"),
                       turn("answer three"))  # fmt: skip
        argv = [sys.executable, "-m", "mycode_core", "--model", "m", "--base-url",
                server.base_url, "--api-key", "k", "--cwd", str(ws), "--permission-mode",
                "bypass", "--completion-policy", "off"]  # fmt: skip
        term = Terminal(argv, env, ws)
        term.expect("/help for help")
        term.type("talk first\r")
        term.expect("answer one")
        term.type("make a file\r")
        term.expect("answer two")
        assert (ws / "new.txt").exists()
        term.type("/help\r")
        term.expect("/rewind")  # among the plugins' commands
        term.type("/rewind\r")
        term.expect("Rewind to before which turn?")
        term.expect("2. make a file · created new.txt")
        term.type("2\r")  # the turn's own number, then Enter
        term.expect("removed new.txt")
        term.expect("back to before turn 2 (2 messages kept)")
        term.type("instead this\r")
        term.expect("answer three")
        sent = [r.messages for r in server.requests if r.messages][-1]
        term.type("/exit\r")
        assert term.wait() == 0
    assert not (ws / "new.txt").exists()
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users == ["talk first", "instead this"]
    assistants = [m.get("content") for m in sent if m["role"] == "assistant"]
    assert assistants == ["answer one"]


def test_the_rewind_picker_shows_each_turns_own_number_and_takes_a_whole_one(
    ws: Path, home: Path
) -> None:
    """Rows read ``12. task 12`` (not ``1. 12. …``); ``1`` typed picks nothing yet: ``12``
    and Enter rewinds turn 12, never turn 1 or the newest."""
    env = cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})
    model = write_script(
        home.parent / "talk.json", [{"content": f"answer {n}."} for n in range(1, 14)]
    )
    argv = [sys.executable, "-m", "mycode_core", "--model", model, "--cwd", str(ws)]
    term = Terminal(argv, env, ws, rows=60)
    term.expect("/help for help")
    for n in range(1, 14):
        term.type(f"task {n}\r")
        term.expect(f"answer {n}.")
    term.type("/rewind\r")
    term.expect("12. task 12 · no files changed")
    term.type("1")
    term.settle(1.0)
    assert "back to before" not in term.plain  # a digit alone picks nothing
    term.type("2")
    term.settle(0.3)
    term.type("\r")
    term.expect("back to before turn 12")
    term.type("/exit\r")
    assert term.wait() == 0
    assert "1. 13." not in term.plain and "2. 12." not in term.plain
    rewinds = [e["turn"] for e in _events_of_the_session(home) if e["type"] == "rewind"]
    assert rewinds == [12]


def _events_of_the_session(home: Path) -> list[dict[str, Any]]:
    (path,) = (home / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]
