"""Ctrl-C in the interactive session, on a real pty, against the fake OpenAI server: whatever is
running, the turn ends, every tool call in history keeps exactly one result, nothing of the
cancelled turn goes on, and the next turn starts clean."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import (
    FakeOpenAIServer,
    cli_env,
    delayed,
    mycode_command,
    requires_plugin,
    stalled_stream,
    tool_pairing_problems,
    turn,
    write_user_plugin,
)
from mycode_core.testing.host import process_alive, wait_until
from mycode_core.testing.terminal import Terminal

needs_builtin_tools = requires_plugin("builtin_tools")


def _start(
    home: Path,
    server: FakeOpenAIServer,
    workspace: Path,
    *extra: str,
    plugins: str = "builtin_tools",
) -> Terminal:
    argv = [*mycode_command(), *server.cli_args(), "--cwd", str(workspace), *extra]
    env = cli_env(home, {"MYCODE_LOAD_PLUGINS": plugins, "TERM": "xterm", "NO_COLOR": "1"})
    term = Terminal(argv, env, workspace)
    term.expect("/help for help")
    term.expect("›")
    return term


def _tool_messages(request: Any) -> list[dict[str, Any]]:
    return [m for m in request.messages if m.get("role") == "tool"]


def _ask(term: Terminal, server: FakeOpenAIServer, prompt: str) -> None:
    """Send ``prompt`` and wait until its model call reached the server."""
    term.type(f"{prompt}\r")
    assert server.wait_for_requests(1, timeout=30)


def _ctrl_c(term: Terminal) -> None:
    """Interrupt the running turn and wait until the view says so."""
    term.type("\x03")
    term.expect("interrupted · ")  # the turn's summary (the test's folder may say "interrupted")


def _next_turn(term: Terminal, server: FakeOpenAIServer, prompt: str, answer: str) -> None:
    """A further turn after the interrupted one: ``prompt`` gets ``answer`` on screen."""
    server.enqueue(turn(answer))
    term.set_mark()
    term.type(f"{prompt}\r")
    term.expect(answer, after_mark=True)


def _transcript(home: Path) -> list[dict[str, Any]]:
    """The events of the one session transcript under ``home``."""
    path = next((home / "sessions").glob("*.jsonl"))
    return [json.loads(line) for line in path.read_text().splitlines()]


def _silent_model_interrupted(home: Path, server: FakeOpenAIServer, workspace: Path) -> Terminal:
    """A session (no plugins) whose first turn waits on a model that never answers, then is
    interrupted."""
    server.enqueue(delayed(120.0))
    term = _start(home, server, workspace, plugins="")
    _ask(term, server, "slow")
    _ctrl_c(term)
    return term


def _queue_slow_command(tmp_path: Path, server: FakeOpenAIServer) -> Path:
    """Queue a ``run_command`` that leaves a grandchild running; returns where its pid goes."""
    pid_file = tmp_path / "grandchild.pid"
    command = f"sleep 300 & echo $! > {pid_file}; echo started; sleep 300"
    call = {"id": "call_slow", "name": "run_command", "arguments": {"command": command}}
    server.enqueue(turn(tool_calls=[call]))
    return pid_file


def _grandchild(pid_file: Path, term: Terminal) -> int:
    """The pid of the command's grandchild, once it started."""
    started = wait_until(lambda: pid_file.is_file() and pid_file.read_text().strip(), 60)
    assert started, term.plain[-2000:]
    return int(pid_file.read_text())


def _leave(term: Terminal) -> None:
    term.type("/exit\r")
    assert term.wait() == 0


@needs_builtin_tools
def test_ctrl_c_during_a_command_kills_its_tree_and_answers_the_call(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    pid_file = _queue_slow_command(tmp_path, server)
    term = _start(home, server, workspace, "--permission-mode", "bypass")
    term.type("run the slow thing\r")
    term.expect("run_command(sleep 300")
    grandchild = _grandchild(pid_file, term)
    _ctrl_c(term)
    term.expect("›", after_mark=False)
    # killed with its process group, not left running
    assert wait_until(lambda: not process_alive(grandchild), 30), "the child survived the Ctrl-C"
    term.settle(1.0)
    assert len(server.chat_requests) == 1  # the cancelled turn sent nothing more
    _next_turn(term, server, "next task", "a clean next turn")
    second = server.chat_requests[1]
    assert tool_pairing_problems(second.messages) == []
    answers = [m for m in _tool_messages(second) if m.get("tool_call_id") == "call_slow"]
    assert len(answers) == 1 and "Interrupted by the user" in str(answers[0]["content"])
    _leave(term)


def test_ctrl_c_during_a_model_call_ends_the_turn_cleanly(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    server.enqueue(delayed(120.0, turn("far too late")))
    term = _start(home, server, workspace, plugins="")
    _ask(term, server, "slow model")
    term.expect("thinking")
    _ctrl_c(term)
    _next_turn(term, server, "second task", "answer two")
    assert "far too late" not in term.plain
    messages = server.chat_requests[-1].messages
    assert tool_pairing_problems(messages) == []
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == "second task"
    _leave(term)


@needs_builtin_tools
@pytest.mark.parametrize("key", ["\x03", "\x1b"], ids=["ctrl-c", "esc"])
def test_ctrl_c_or_esc_at_a_permission_prompt_denies_and_the_turn_goes_on(
    server: FakeOpenAIServer, workspace: Path, home: Path, key: str
) -> None:
    push = {"id": "call_push", "name": "run_command", "arguments": {"command": "git push"}}
    server.enqueue(turn(tool_calls=[push]), turn("understood, not pushing"))
    term = _start(home, server, workspace, plugins="builtin_tools")
    term.type("push it\r")
    term.expect("allow for this session")
    assert "Allow run_command: git push" in term.plain
    term.set_mark()
    term.settle(0.6)
    assert "running run_command" not in term.since_mark()  # the spinner stopped for the question
    assert "--permission-mode bypass" not in term.plain  # advice meant for -p runs
    term.type(key)
    term.expect("understood, not pushing")
    term.expect("completed")
    answers = _tool_messages(server.chat_requests[1])
    assert len(answers) == 1 and "declined" in str(answers[0]["content"])
    _next_turn(term, server, "hello again", "the prompt still reads the keyboard")
    assert server.chat_requests[-1].messages[-1]["content"] == "hello again"
    _leave(term)


def test_second_ctrl_c_at_the_idle_prompt_exits(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    term = _start(home, server, workspace, plugins="")
    term.type("some words")
    term.type("\x03")  # clears the line, does not arm the exit
    term.type("\x03")
    term.expect("Ctrl-C again to exit")
    term.set_mark()
    term.expect("›", after_mark=True)
    term.type("\x03")
    assert term.wait() == 0, term.plain[-2000:]
    assert not server.chat_requests


def test_interrupted_turn_is_recorded_with_its_real_steps(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    term = _silent_model_interrupted(home, server, workspace)
    _leave(term)
    results = [event for event in _transcript(home) if event["type"] == "result"]
    assert len(results) == 1
    assert results[0]["stop_reason"] == "interrupted" and results[0]["steps"] == 1
    assert results[0]["duration_ms"] > 0


def test_interrupted_model_call_keeps_the_partial_answer_as_an_assistant_message(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    server.enqueue(stalled_stream("Here is the first half of my answer", 120.0))
    term = _start(home, server, workspace, plugins="")
    _ask(term, server, "explain")
    term.settle(2.0)  # the streamed words reach mycode (the view shows them at the turn's end)
    _ctrl_c(term)
    _next_turn(term, server, "go on", "answer two")
    messages = server.chat_requests[-1].messages
    roles = [m["role"] for m in messages if m["role"] != "system"]
    assert all(not (a == b == "user") for a, b in zip(roles, roles[1:], strict=False)), roles
    interrupted = [m for m in messages if m["role"] == "assistant"]
    assert len(interrupted) == 1
    assert interrupted[0]["content"].startswith("Here is the first half of my answer")
    assert interrupted[0]["content"].endswith("[interrupted by the user]")
    _leave(term)
    kinds = [e["type"] for e in _transcript(home)]
    assert kinds.index("assistant") < kinds.index("result")  # recorded before the result


def test_interrupt_before_any_text_still_closes_the_turn(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    term = _silent_model_interrupted(home, server, workspace)
    _next_turn(term, server, "again", "fine")
    messages = [m for m in server.chat_requests[-1].messages if m["role"] != "system"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == "[interrupted by the user]"
    _leave(term)


def test_a_paragraph_still_being_written_is_on_the_screen(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    """A slow model's paragraph shows while it streams, not only once it ends (the view
    renders markdown a finished block at a time; the unfinished one is drawn live)."""
    server.enqueue(stalled_stream("A long paragraph the model is **still** writing", 120.0))
    term = _start(home, server, workspace, plugins="")
    _ask(term, server, "explain")
    term.expect("A long paragraph the model is still writing")
    assert "**still**" not in term.plain  # drawn as markdown, like the finished blocks
    _ctrl_c(term)
    _leave(term)


@needs_builtin_tools
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["sigterm", "sighup"])
def test_a_signal_at_a_permission_prompt_ends_the_turn_and_the_session(
    server: FakeOpenAIServer, workspace: Path, home: Path, sig: int
) -> None:
    """The question used to hold the turn up: the session hung for the grace period, recorded
    an "internal error" (a crash log) and went on instead of leaving."""
    push = {"id": "call_push", "name": "run_command", "arguments": {"command": "git push"}}
    server.enqueue(turn(tool_calls=[push]), turn("never asked for"))
    term = _start(home, server, workspace, plugins="builtin_tools")
    term.type("push it\r")
    term.expect("allow for this session")
    os.kill(term.pid, sig)
    assert term.wait(60) == 128 + sig, term.plain[-2000:]
    assert "Traceback" not in term.plain and "Unhandled exception" not in term.plain
    assert not (home / "logs").exists()  # no crash report
    events = _transcript(home)
    assert [e["type"] for e in events][-1] == "result"
    assert events[-1]["stop_reason"] == "interrupted"
    (answer,) = [e for e in events if e["type"] == "tool_result"]
    assert answer["id"] == "call_push" and answer["is_error"]
    assert len(server.chat_requests) == 1


SLOW_AFTER_TOOLS = """
import time
from mycode_core import hookimpl


@hookimpl
def stagnation_verdict(observations, context):
    time.sleep(2)  # the turn is still winding down when the question has ended
    return None
"""


@needs_builtin_tools
def test_a_turn_winding_down_after_the_question_still_writes_its_result(
    server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    """SIGTERM at a permission question ends the question at once; the session then closed
    the transcript while the turn was still winding down, and its ``result`` was lost (the
    transcript ended with the denied call's ``observation``)."""
    write_user_plugin(home, "slow_after_tools", SLOW_AFTER_TOOLS)
    push = {"id": "call_push", "name": "run_command", "arguments": {"command": "git push"}}
    server.enqueue(turn(tool_calls=[push]), turn("never asked for"))
    term = _start(home, server, workspace, plugins="builtin_tools,slow_after_tools")
    term.type("push it\r")
    term.expect("allow for this session")
    os.kill(term.pid, signal.SIGTERM)
    assert term.wait(60) == 143, term.plain[-2000:]
    events = _transcript(home)
    assert [e["type"] for e in events][-1] == "result", [e["type"] for e in events]
    assert events[-1]["stop_reason"] == "interrupted"


@needs_builtin_tools
def test_a_signal_after_clear_stops_the_new_conversations_turn(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path, home: Path
) -> None:
    """``/clear`` replaces the session's runner: SIGTERM must cancel that one's turn (its
    command's process tree killed, its ``result`` written), not the first runner's."""
    pid_file = _queue_slow_command(tmp_path, server)
    term = _start(home, server, workspace, "--permission-mode", "bypass")
    term.type("/clear\r")
    term.expect("Started a fresh conversation")
    term.type("run the slow thing\r")
    grandchild = _grandchild(pid_file, term)
    try:
        os.kill(term.pid, signal.SIGTERM)
        assert term.wait(60) == 143, term.plain[-2000:]
        # the turn was drawn to its end, never cut mid-drawing (that left rich half-way: a
        # traceback from its spinner's clean-up and exit 1 on a loaded machine)
        assert "interrupted · verdict" in term.plain and "Traceback" not in term.plain
        assert wait_until(lambda: not process_alive(grandchild), 30), "the command survived"
    finally:
        if process_alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)
    (cleared,) = [
        path for path in (home / "sessions").glob("*.jsonl") if "run the slow" in path.read_text()
    ]
    events = [json.loads(line) for line in cleared.read_text().splitlines()]
    assert events[-1]["type"] == "result" and events[-1]["stop_reason"] == "interrupted"
