"""History entries JSON cannot hold, from a plugin tool in a real run (issue 24 bad input):
a lone surrogate, objects JSON does not know. The run goes on, the server gets strict JSON
(UTF-8, no lone surrogate), no traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mycode_core.testing import FakeOpenAIServer, run_cli, turn, write_user_plugin

ODD_TOOLS = '''
from mycode_core import ToolResult, hookimpl, tool


class Thing:
    """Not JSON."""

    def __repr__(self):
        return "<Thing>"


@tool(read_only=True)
def lone(text: str) -> str:
    """A result with a lone surrogate (e.g. a file name decoded with surrogateescape)."""
    return "name \\udcff " + text


@tool(read_only=True)
def odd(text: str) -> ToolResult:
    """A result whose blocks and metadata hold objects JSON does not know."""
    blocks = [{"type": "text", "text": "y\\ud800"}, {"type": "text", "text": text, "x": Thing()}]
    return ToolResult(content=blocks, metadata={"thing": Thing(), "set": {1}, "raw": b"\\xff"})


@tool(read_only=True)
def weird(text: str):
    """Returns neither text nor a ToolResult."""
    return {"thing": Thing(), "text": text}


@hookimpl
def register_tools(register):
    register(lone)
    register(odd)
    register(weird)
'''


def _strict(text: str) -> Any:
    """``json.loads`` as strict parsers read JSON: no NaN/Infinity, no lone surrogate."""

    def no_constants(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    value = json.loads(text, parse_constant=no_constants)
    json.dumps(value, ensure_ascii=False).encode("utf-8")  # raises on a lone surrogate
    return value


def _run(tmp_path: Path) -> tuple[Any, FakeOpenAIServer]:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "odd_tools", ODD_TOOLS)
    workspace.mkdir()
    calls = [{"id": f"c{i}", "name": n, "arguments": {"text": n}} for i, n in
             enumerate(("lone", "odd", "weird"))]  # fmt: skip
    with FakeOpenAIServer([turn(tool_calls=calls), turn("all read")]) as server:
        run = run_cli(server.cli_args("go", output_format="stream-json"), workspace, home)
    return run, server


def test_results_json_cannot_hold_reach_the_server_as_strict_json(tmp_path: Path) -> None:
    run, server = _run(tmp_path)
    assert run.rc == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert run.result is not None and run.result["final_text"] == "all read"
    assert len(server.chat_requests) == 2
    tools = {m["tool_call_id"]: m["content"] for m in server.chat_requests[1].messages
             if m["role"] == "tool"}  # fmt: skip
    for content in tools.values():  # the body parsed back holds no lone surrogate
        _strict(json.dumps(content, ensure_ascii=False))
    assert tools["c0"] == "name \ufffd lone"
    assert tools["c1"] == "y\ufffd\nodd"
    assert "<Thing>" in tools["c2"] and "weird" in tools["c2"]
    results = {r["id"]: r for r in run.of_type("tool_result")}
    assert [results[f"c{i}"]["is_error"] for i in range(3)] == [False, False, False]


def test_the_event_stream_and_transcript_stay_strict_json(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    source = ODD_TOOLS.replace('"set": {1}', '"set": {1}, "nan": float("nan")')
    write_user_plugin(home, "odd_tools", source)
    workspace.mkdir()
    calls = [{"id": "c1", "name": "odd", "arguments": {"text": "odd"}}]
    with FakeOpenAIServer([turn(tool_calls=calls), turn("done")]) as server:
        run = run_cli(server.cli_args("go", output_format="stream-json"), workspace, home)
    assert run.rc == 0, run.stderr
    for line in run.stdout.splitlines():
        _strict(line)
    (transcript,) = (home / "sessions").glob("*.jsonl")
    for line in transcript.read_text(encoding="utf-8").splitlines():
        _strict(line)
