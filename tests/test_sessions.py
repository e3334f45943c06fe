"""Session transcripts under MYCODE_HOME, ``--resume`` / ``--continue``, crash tolerance."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mycode_core.cli.transcript_history import history_from_events
from mycode_core.sessions import SessionStore
from mycode_core.testing import FakeOpenAIServer, run_cli, start_cli, tool_pairing_problems, turn
from mycode_core.testing.host import wait_until


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_the_transcript_lives_in_home_never_in_the_workspace(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path
) -> None:
    (workspace / "README.md").write_text("project\n")
    before = _files(workspace)
    server.enqueue(
        turn(None, [{"id": "c1", "name": "echo", "arguments": {"text": "x"}}]), turn("bye")
    )
    run = cli(["-p", "task", *server_args])
    assert run.rc == 0
    assert _files(workspace) == before
    session_id = run.events[0]["session_id"]
    path = home / "sessions" / f"{session_id}.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    stored = [json.loads(line) for line in lines]
    assert stored[0]["type"] == "system" and stored[-1]["type"] == "result"
    assert [e["type"] for e in stored] == [e["type"] for e in run.events]
    listing = cli(["sessions", "--json"])
    rows = json.loads(listing.stdout)
    assert [r["id"] for r in rows] == [session_id]
    assert rows[0]["stop_reason"] == "completed" and rows[0]["prompt"] == "task"


def test_resume_by_id_rebuilds_the_history(
    cli: Any, server: FakeOpenAIServer, server_args: list[str]
) -> None:
    server.enqueue(
        turn(None, [{"id": "c1", "name": "echo", "arguments": {"text": "banana"}}]),
        turn("I will remember banana."),
    )
    first = cli(["-p", "remember the word", *server_args])
    session_id = first.events[0]["session_id"]
    server.enqueue(turn("The word was banana."))
    second = cli(["-p", "what was the word?", "--resume", session_id, *server_args])
    assert second.rc == 0, second.stderr
    assert second.events[0]["session_id"] == session_id
    assert second.events[0]["resumed_from"] == session_id
    sent = server.chat_requests[-1].messages
    contents = [m.get("content") for m in sent]
    assert contents[1] == "remember the word"
    assert "I will remember banana." in contents
    assert contents[-1] == "what was the word?"
    assert any(m["role"] == "tool" and m["content"] == "banana" for m in sent)
    assert tool_pairing_problems(sent) == []


def test_continue_takes_the_latest_session_of_this_workspace(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], tmp_path: Path
) -> None:
    other = tmp_path / "other-ws"
    other.mkdir()
    server.enqueue(turn("first answer"))
    first = cli(["-p", "first task", *server_args])
    server.enqueue(turn("elsewhere"))
    cli(["-p", "task elsewhere", *server_args], cwd=other)
    server.enqueue(turn("continued"))
    again = cli(["-p", "and then?", "--continue", *server_args])
    assert again.rc == 0, again.stderr
    assert again.events[0]["resumed_from"] == first.events[0]["session_id"]
    contents = [m.get("content") for m in server.chat_requests[-1].messages]
    assert "first task" in contents and "task elsewhere" not in contents


def test_a_truncated_last_line_is_tolerated(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    server.enqueue(turn("stored answer"))
    first = cli(["-p", "crash-test task", *server_args])
    session_id = first.events[0]["session_id"]
    path = home / "sessions" / f"{session_id}.jsonl"
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"type": "assistant", "content": "half a li')  # the crash
    listing = json.loads(cli(["sessions", "--json"]).stdout)
    assert [row["id"] for row in listing] == [session_id]
    server.enqueue(turn("resumed fine"))
    resumed = cli(["-p", "go on", "--resume", session_id, *server_args])
    assert resumed.rc == 0, resumed.stderr
    contents = [m.get("content") for m in server.chat_requests[-1].messages]
    assert "crash-test task" in contents and "stored answer" in contents
    assert not any("half a li" in str(c) for c in contents)
    # the file stays readable: the new events start on a fresh line
    events = SessionStore(home).read_events(session_id)
    assert events[-1]["type"] == "result" and events[-1]["final_text"] == "resumed fine"


def test_resume_of_an_unknown_session_is_a_usage_error(cli: Any, server_args: list[str]) -> None:
    run = cli(["-p", "x", "--resume", "no-such-session", *server_args])
    assert run.rc == 2 and "no-such-session" in run.stderr
    none = cli(["-p", "x", "--continue", *server_args])
    assert none.rc == 2 and "continue" in none.stderr


def test_history_from_events_closes_interrupted_tool_batches() -> None:
    events: list[dict[str, Any]] = [
        {"type": "system", "session_id": "s"},
        {"type": "user", "content": "task"},
        {
            "type": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "a", "name": "echo", "arguments": {"text": "1"}},
                {"id": "b", "name": "echo", "arguments": '{"text": "2"}'},
            ],
        },
        {"type": "tool_result", "id": "a", "name": "echo", "is_error": False, "content": "1"},
        {"type": "guidance", "source": "stagnation", "message": "stop repeating"},
    ]
    messages = history_from_events(events)
    assert tool_pairing_problems(messages) == []
    assert messages[0] == {"role": "user", "content": "task"}
    answered = {m["tool_call_id"]: m["content"] for m in messages if m["role"] == "tool"}
    assert answered["a"] == "1" and "interrupted" in answered["b"]
    assert messages[-1]["role"] == "user" and "stop repeating" in messages[-1]["content"]


def test_resume_answers_parallel_calls_in_the_order_they_were_made(
    cli: Any, server: FakeOpenAIServer, server_args: list[str]
) -> None:
    """The first call waits for the second's result, so their results reach the transcript
    reversed; the resumed history must still be the one the run sent (each result after its
    call)."""
    calls = [
        {"id": "first", "name": "mark", "arguments": {"name": "one", "after_result": "second"}},
        {"id": "second", "name": "mark", "arguments": {"name": "two"}},
    ]
    server.enqueue(turn(None, calls), turn("both done"))
    first = cli(["-p", "look twice", *server_args])
    results = first.of_type("tool_result")
    assert [(e["id"], e["content"]) for e in results] == [
        ("second", "marked two"),
        ("first", "marked one"),
    ]
    sent = server.chat_requests[-1].messages
    server.enqueue(turn("resumed"))
    again = cli(["-p", "and now?", "--resume", first.events[0]["session_id"], *server_args])
    assert again.rc == 0, again.stderr
    resumed = server.chat_requests[-1].messages
    assert resumed[: len(sent)] == sent
    assert tool_pairing_problems(resumed) == []


def test_resume_after_a_kill_says_the_running_call_may_have_run(
    server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path, plugin_site: Path
) -> None:
    """SIGKILL while a call runs: no result reached the transcript, but the call did start
    (its permission was granted). "Not run" would invite the model to repeat it blindly."""
    call = {"id": "busy", "name": "mark", "arguments": {"name": "started", "after": "never"}}
    server.enqueue(turn(None, [call]))
    env = {"MYCODE_LOAD_PLUGINS": "coretools", "PYTHONPATH": str(plugin_site)}
    process = start_cli(["-p", "do it", *server_args], workspace, home, env)
    try:
        assert wait_until((home / "markers" / "started").exists, 60)
    finally:
        process.kill()
        process.communicate(timeout=60)
    (transcript,) = (home / "sessions").glob("*.jsonl")
    server.enqueue(turn("resumed"))
    run = run_cli(["-p", "go on", "--resume", transcript.stem, *server_args], workspace, home, env)
    assert run.rc == 0, run.stderr
    resumed = server.chat_requests[-1].messages
    assert tool_pairing_problems(resumed) == []
    (answer,) = [m for m in resumed if m["role"] == "tool"]
    assert answer["tool_call_id"] == "busy" and "may have run" in answer["content"]


def test_transcript_is_flushed_per_event(tmp_path: Path) -> None:
    from mycode_core.events import UserEvent

    store = SessionStore(tmp_path)
    transcript = store.open("s1")
    transcript.write(UserEvent(content="one"))
    # readable by another reader before close
    assert store.read_events("s1")[0]["content"] == "one"
    transcript.close()
    assert os.path.getsize(store.path_for("s1")) > 0


def test_a_malformed_transcript_resumes_without_what_cannot_be_used(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path
) -> None:
    """A hand-edited or corrupt transcript: fields of the wrong type are skipped, as a torn line
    is (no traceback), in the history, the recap, the listing and ``sessions show``."""
    good_call = {"id": "c1", "name": "echo", "arguments": {"text": "x"}}
    events = [
        {"type": "system", "session_id": "X", "cwd": str(workspace), "ts": "x", "tools": 5},
        {"type": "user", "content": "first task", "images": 7},
        {"type": "step_start", "step": "two"},
        {"type": "assistant", "tool_calls": "notalist"},
        {"type": "assistant", "content": 5, "tool_calls": [5, {"id": 3}, good_call]},
        {"type": "assistant", "usage": "lots", "tool_calls": [{"name": "echo"}]},
        {"type": "tool_call", "id": "c1", "name": "echo", "arguments": "x"},
        {"type": "tool_result", "id": "c1", "content": "x", "metadata": "m"},
        {
            "type": "compaction",
            "view": [],
            "history_length": 0,
            "window_source": "learned",
            "context_window": "big",
        },
        {"type": "result", "stop_reason": ["odd"], "steps": "2", "usage": [], "duration_ms": "x"},
    ]
    (home / "sessions").mkdir()
    lines = [json.dumps(event) for event in events]
    (home / "sessions" / "X.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    server.enqueue(turn("resumed"))
    text = [*server_args, "--output-format", "text"]
    resumed = cli(["-p", "more", "--resume", "X", *text])
    assert resumed.rc == 0 and "Traceback" not in resumed.stderr, resumed.stderr
    assert "Resuming session X" in resumed.stderr and resumed.stdout.strip() == "resumed"
    sent = server.chat_requests[-1].messages
    assert tool_pairing_problems(sent) == []
    assert [m["role"] for m in sent[1:]] == [
        "user",
        "assistant",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    server.enqueue(turn("continued"))
    again = cli(["-p", "again", "--continue", *server_args])
    assert again.rc == 0 and again.events[0]["resumed_from"] == "X", again.stderr
    for args in (["sessions"], ["sessions", "--json"], ["sessions", "show", "X"]):
        shown = cli(args)
        assert shown.rc == 0 and "Traceback" not in shown.stderr, (args, shown.stderr)


def test_a_session_another_live_run_writes_is_refused_with_one_line(
    server: FakeOpenAIServer, server_args: list[str], workspace: Path, home: Path, plugin_site: Path
) -> None:
    """Two runs appending to one transcript scrambled its history (user, user in a row; calls
    replayed as "not run"): the second stops, exit 2, naming the session; the lock ends with
    the run that held it, also when it is killed (``kill -9``)."""
    env = {"MYCODE_LOAD_PLUGINS": "coretools", "PYTHONPATH": str(plugin_site)}
    hold = {"id": "h1", "name": "mark", "arguments": {"name": "holding", "after": "go"}}
    server.enqueue(turn(None, [hold]), turn("first done"))
    first = start_cli(["-p", "first", *server_args], workspace, home, env)
    try:
        assert wait_until((home / "markers" / "holding").exists, 60)
        (transcript,) = (home / "sessions").glob("*.jsonl")
        session = transcript.stem
        for args in (["--continue"], ["--resume", session]):
            second = run_cli(["-p", "second", *args, *server_args], workspace, home, env)
            assert second.rc == 2, second.stderr
            (line,) = second.stderr.strip().splitlines()
            assert session in line and "in use by another mycode process" in line
            assert str(first.pid) in line
        (home / "markers" / "go").write_text("x")
        assert first.wait(60) == 0
    finally:
        if first.poll() is None:
            first.kill()
        first.communicate(timeout=60)
    types = [e["type"] for e in SessionStore(home).read_events(session)]
    assert types.count("user") == 1 and types.count("result") == 1  # nothing of the second
    # the lock went with the run: the session can be continued, and after a kill -9 too
    server.enqueue(
        turn(None, [{"id": "h2", "name": "mark", "arguments": {"name": "again", "after": "no"}}])
    )
    killed = start_cli(["-p", "third", "--continue", *server_args], workspace, home, env)
    try:
        assert wait_until((home / "markers" / "again").exists, 60)
    finally:
        killed.kill()
        killed.communicate(timeout=60)
    server.enqueue(turn("fourth done"))
    fourth = run_cli(["-p", "fourth", "--resume", session, *server_args], workspace, home, env)
    assert fourth.rc == 0, fourth.stderr
    assert fourth.result is not None and fourth.result["final_text"] == "fourth done"


def test_a_resume_id_is_a_session_id_never_a_path(tmp_path: Path) -> None:
    """``--resume /abs/ws/planted`` or ``../../ws/planted`` read and appended to the workspace's
    ``planted.jsonl`` (its lock and artifacts beside it); like ``sessions show``, such an id is
    no session: one line, exit 2, nothing read or written there."""
    from mycode_core.testing import write_script

    workspace, home = tmp_path / "wsC", tmp_path / "home"
    workspace.mkdir()
    planted = workspace / "planted.jsonl"
    text = json.dumps({"type": "system", "cwd": str(workspace), "model": "m", "ts": 1.0}) + "\n"
    planted.write_text(text, encoding="utf-8")
    model = write_script(tmp_path / "turns.json", [{"content": "ok"}])
    (home / "sessions").mkdir(parents=True)
    for resume_id in (str(workspace / "planted"), "../../wsC/planted", "..\\planted", "."):
        run = run_cli(["-p", "hi", "--resume", resume_id, "--model", model], workspace, home)
        assert run.rc == 2, run.stderr
        assert f"no session {resume_id!r}" in run.stderr and len(run.stderr.splitlines()) == 1
        shown = run_cli(["sessions", "show", resume_id], workspace, home)
        assert shown.rc == 2 and "no session" in shown.stderr
    assert planted.read_text(encoding="utf-8") == text
    assert _files(workspace) == {"planted.jsonl"}
    assert not list((home / "sessions").iterdir())
