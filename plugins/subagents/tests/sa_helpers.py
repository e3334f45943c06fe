"""Shared helpers for the subagents tests: real ``mycode -p`` runs against the fake server."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mycode_core.testing import CliResult, FakeOpenAIServer, run_cli, turn

BIN = Path(sys.executable).parent
USAGE = {"prompt_tokens": 10, "completion_tokens": 2}


def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """One tool call of a scripted turn."""
    return {"id": call_id, "name": name, "arguments": arguments}


def calls(*tool_calls: dict[str, Any], usage: dict[str, int] | None = None) -> Any:
    """A model turn calling tools."""
    return turn(None, list(tool_calls), usage=usage or USAGE)


def answer(text: str, usage: dict[str, int] | None = None) -> Any:
    """A model turn with a final answer."""
    return turn(text, usage=usage or USAGE)


def delegate(call_id: str, task: str, agent: str | None = None, **extra: Any) -> dict[str, Any]:
    """A ``delegate_task`` call."""
    arguments: dict[str, Any] = {"task": task, **extra}
    if agent is not None:
        arguments["agent"] = agent
    return call("delegate_task", call_id, **arguments)


def workspace(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    """A workspace folder with ``files`` (relative path → text)."""
    ws = tmp_path / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    for rel, text in (files or {}).items():
        target = ws / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return ws


def run(
    server: FakeOpenAIServer,
    ws: Path,
    prompt: str = "PARENT: do the task",
    *extra: str,
    output: str = "stream-json",
    env: dict[str, str | None] | None = None,
    pythonpath: Sequence[Path] = (),
) -> CliResult:
    """``mycode -p PROMPT`` on the fake server, with ``MYCODE_HOME`` next to ``ws``."""
    path = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    args = server.cli_args(prompt, output_format=output, model="fake-model")
    args += ["--cwd", str(ws), *extra]
    return run_cli(
        args, ws, ws.parent / "home", {**path, **(env or {})}, timeout=120, pythonpath=pythonpath
    )


def child_events(result: CliResult, kind: str | None = None) -> list[dict[str, Any]]:
    """Events emitted inside subagents (of one ``type``)."""
    return [e for e in result.events if e.get("agent_id") and (kind is None or e["type"] == kind)]


def main_events(result: CliResult, kind: str) -> list[dict[str, Any]]:
    """The main agent's events of one ``type``."""
    return [e for e in result.events if not e.get("agent_id") and e["type"] == kind]


def requests_for(server: FakeOpenAIServer, text: str) -> list[Any]:
    """The chat requests whose first user message contains ``text``."""
    found = []
    for request in server.chat_requests:
        user = next((m for m in request.messages if m.get("role") == "user"), {})
        if text in str(user.get("content") or ""):
            found.append(request)
    return found


def tool_names(request: Any) -> list[str]:
    """The tool names a chat request offered."""
    return [tool["function"]["name"] for tool in request.body.get("tools") or []]
