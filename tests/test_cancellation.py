"""Ctrl-C in the interactive session, on a real pty, against the fake OpenAI server: whatever is
running, the turn ends, every tool call in history keeps exactly one result, nothing of the
cancelled turn goes on, and the next turn starts clean."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import (
    FakeOpenAIServer,
    delayed,
    stalled_stream,
    tool_pairing_problems,
    turn,
)
from mycode_core.testing.terminal import Terminal

MYCODE = [sys.executable, "-m", "mycode_core"]
needs_builtin_tools = pytest.mark.skipif(
    importlib.util.find_spec("mycode_builtin_tools") is None, reason="needs mycode-builtin-tools"
)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "ws"
    path.mkdir()
    return path


def _env(tmp_path: Path, plugins: str = "builtin_tools") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env.update(
        MYCODE_HOME=str(tmp_path / "home"),
        MYCODE_LOAD_PLUGINS=plugins,
        TERM="xterm",
        NO_COLOR="1",
    )
    return env


def _start(
    tmp_path: Path,
    server: FakeOpenAIServer,
    workspace: Path,
    *extra: str,
    plugins: str = "builtin_tools",
) -> Terminal:
    argv = [*MYCODE, "--model", "m", "--base-url", server.base_url, "--api-key", "k"]
    argv += ["--cwd", str(workspace), *extra]
    term = Terminal(argv, _env(tmp_path, plugins), workspace)
    term.expect("/help for help")
    term.expect("›")
    return term


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is dead for our purpose
        status = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return True
    return status != "Z"


def _tool_messages(request: Any) -> list[dict[str, Any]]:
    return [m for m in request.messages if m.get("role") == "tool"]


def _leave(term: Terminal) -> None:
    term.type("/exit\r")
    assert term.wait() == 0


@needs_builtin_tools
def test_ctrl_c_during_a_command_kills_its_tree_and_answers_the_call(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path
) -> None:
    pid_file = tmp_path / "grandchild.pid"
    command = f"sleep 300 & echo $! > {pid_file}; echo started; sleep 300"
    call = {"id": "call_slow", "name": "run_command", "arguments": {"command": command}}
    server.enqueue(turn(tool_calls=[call]))
    term = _start(tmp_path, server, workspace, "--permission-mode", "bypass")
    term.type("run the slow thing\r")
    term.expect("run_command(sleep 300")
    deadline = time.monotonic() + 30
    while not (pid_file.is_file() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, term.plain[-2000:]
        time.sleep(0.05)
    grandchild = int(pid_file.read_text())
    term.type("\x03")
    term.expect("interrupted")
    term.expect("›", after_mark=False)
    deadline = time.monotonic() + 30
    while _alive(grandchild):  # killed with its process group, not left running
        assert time.monotonic() < deadline, "the command's child survived the Ctrl-C"
        time.sleep(0.05)
    term.settle(1.0)
    assert len(server.chat_requests) == 1  # the cancelled turn sent nothing more
    server.enqueue(turn("a clean next turn"))
    term.set_mark()
    term.type("next task\r")
    term.expect("a clean next turn", after_mark=True)
    second = server.chat_requests[1]
    assert tool_pairing_problems(second.messages) == []
    answers = [m for m in _tool_messages(second) if m.get("tool_call_id") == "call_slow"]
    assert len(answers) == 1 and "Interrupted by the user" in str(answers[0]["content"])
    _leave(term)


def test_ctrl_c_during_a_model_call_ends_the_turn_cleanly(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path
) -> None:
    server.enqueue(delayed(120.0, turn("far too late")))
    term = _start(tmp_path, server, workspace, plugins="")
    term.type("slow model\r")
    assert server.wait_for_requests(1, timeout=30)
    term.expect("thinking")
    term.type("\x03")
    term.expect("interrupted")
    server.enqueue(turn("answer two"))
    term.set_mark()
    term.type("second task\r")
    term.expect("answer two", after_mark=True)
    assert "far too late" not in term.plain
    messages = server.chat_requests[-1].messages
    assert tool_pairing_problems(messages) == []
    assert [m["content"] for m in messages if m["role"] == "user"][-1] == "second task"
    _leave(term)


@needs_builtin_tools
@pytest.mark.parametrize("key", ["\x03", "\x1b"], ids=["ctrl-c", "esc"])
def test_ctrl_c_or_esc_at_a_permission_prompt_denies_and_the_turn_goes_on(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path, key: str
) -> None:
    push = {"id": "call_push", "name": "run_command", "arguments": {"command": "git push"}}
    server.enqueue(turn(tool_calls=[push]), turn("understood, not pushing"))
    term = _start(tmp_path, server, workspace, plugins="builtin_tools")
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
    server.enqueue(turn("the prompt still reads the keyboard"))
    term.set_mark()
    term.type("hello again\r")
    term.expect("the prompt still reads the keyboard", after_mark=True)
    assert server.chat_requests[-1].messages[-1]["content"] == "hello again"
    _leave(term)


def test_second_ctrl_c_at_the_idle_prompt_exits(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path
) -> None:
    term = _start(tmp_path, server, workspace, plugins="")
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
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path
) -> None:
    server.enqueue(delayed(120.0))
    term = _start(tmp_path, server, workspace, plugins="")
    term.type("slow\r")
    assert server.wait_for_requests(1, timeout=30)
    term.type("\x03")
    term.expect("interrupted")
    _leave(term)
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    results = [
        event
        for event in map(json.loads, transcript.read_text().splitlines())
        if event["type"] == "result"
    ]
    assert len(results) == 1
    assert results[0]["stop_reason"] == "interrupted" and results[0]["steps"] == 1
    assert results[0]["duration_ms"] > 0


def test_interrupted_model_call_keeps_the_partial_answer_as_an_assistant_message(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path
) -> None:
    server.enqueue(stalled_stream("Here is the first half of my answer", 120.0))
    term = _start(tmp_path, server, workspace, plugins="")
    term.type("explain\r")
    assert server.wait_for_requests(1, timeout=30)
    term.settle(2.0)  # the streamed words reach mycode (the view shows them at the turn's end)
    term.type("\x03")
    term.expect("interrupted")
    server.enqueue(turn("answer two"))
    term.set_mark()
    term.type("go on\r")
    term.expect("answer two", after_mark=True)
    messages = server.chat_requests[-1].messages
    roles = [m["role"] for m in messages if m["role"] != "system"]
    assert all(not (a == b == "user") for a, b in zip(roles, roles[1:], strict=False)), roles
    interrupted = [m for m in messages if m["role"] == "assistant"]
    assert len(interrupted) == 1
    assert interrupted[0]["content"].startswith("Here is the first half of my answer")
    assert interrupted[0]["content"].endswith("[interrupted by the user]")
    _leave(term)
    transcript = next((tmp_path / "home" / "sessions").glob("*.jsonl"))
    kinds = [e["type"] for e in map(json.loads, transcript.read_text().splitlines())]
    assert kinds.index("assistant") < kinds.index("result")  # recorded before the result


def test_interrupt_before_any_text_still_closes_the_turn(
    tmp_path: Path, server: FakeOpenAIServer, workspace: Path
) -> None:
    server.enqueue(delayed(120.0))
    term = _start(tmp_path, server, workspace, plugins="")
    term.type("slow\r")
    assert server.wait_for_requests(1, timeout=30)
    term.type("\x03")
    term.expect("interrupted")
    server.enqueue(turn("fine"))
    term.set_mark()
    term.type("again\r")
    term.expect("fine", after_mark=True)
    messages = [m for m in server.chat_requests[-1].messages if m["role"] != "system"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == "[interrupted by the user]"
    _leave(term)
