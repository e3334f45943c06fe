"""Shared fixtures of the core's tests: temp workspace and home, a tools plugin, a fake server."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import (
    FAST_RETRY_CONFIG,
    CliResult,
    FakeOpenAIServer,
    FakeResponse,
    run_cli,
    write_plugin_dist,
)

# A real entry-point plugin (dist-info + module on PYTHONPATH) with small tools, so the CLI
# tests do not depend on the builtin_tools plugin.
CORE_TOOLS_SOURCE = '''
"""Tools for the core's tests."""
import json
import subprocess
import time
from pathlib import Path

from mycode_core import hookimpl
from mycode_core.records import Tool, ToolResult


def _echo(arguments, context):
    return arguments["text"]


def _write_note(arguments, context):
    path = context.workspace / arguments["path"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(arguments["content"], encoding="utf-8")
    written = arguments["path"]
    return ToolResult(content=f"wrote {written}", metadata={"mutated": [written]})


def _read_note(arguments, context):
    path = context.workspace / arguments["path"]
    if not path.is_file():
        return ToolResult.error(f"no file {arguments['path']}")
    return ToolResult(content=path.read_text(encoding="utf-8"),
                      metadata={"resources": [f"file:{arguments['path']}"]})


def _sh(arguments, context):
    done = subprocess.run(arguments["command"], shell=True, cwd=context.workspace,
                          capture_output=True, text=True, timeout=30)
    return ToolResult(content=(done.stdout + done.stderr) or "(no output)",
                      is_error=done.returncode != 0, metadata={"exit_code": done.returncode})


def _mark(arguments, context):
    # leave marker NAME under MYCODE_HOME/markers, then wait (a minute at most) for marker AFTER,
    # or for the result of call AFTER_RESULT to be in this session's transcript
    folder = context.home / "markers"
    folder.mkdir(exist_ok=True)
    (folder / arguments["name"]).write_text("x")
    after, result = arguments.get("after"), arguments.get("after_result")
    transcript = context.home / "sessions" / f"{context.session_id}.jsonl"
    for _ in range(6000):
        if after and not (folder / after).exists():
            time.sleep(0.01)
        elif result and not _has_result(transcript, result):
            time.sleep(0.01)
        else:
            break
    return "marked " + arguments["name"]


def _has_result(transcript, call_id):
    try:
        lines = transcript.read_text(encoding="utf-8").splitlines()
    except OSError:
        return False
    return any('"tool_result"' in line and json.loads(line).get("id") == call_id
               for line in lines if line.strip().endswith("}"))


def _crash(arguments, context):
    raise RuntimeError("the tool blew up")


STRING = {"type": "string"}


@hookimpl
def register_tools(register, context):
    register(Tool(name="echo", description="Echo text.", handler=_echo, read_only=True,
                  concurrency_safe=True,
                  input_schema={"type": "object", "properties": {"text": STRING},
                                "required": ["text"]}))
    register(Tool(name="write_note", description="Write a file.", handler=_write_note,
                  input_schema={"type": "object",
                                "properties": {"path": STRING, "content": STRING},
                                "required": ["path", "content"]}))
    register(Tool(name="read_note", description="Read a file.", handler=_read_note,
                  read_only=True, concurrency_safe=True,
                  input_schema={"type": "object", "properties": {"path": STRING},
                                "required": ["path"]}))
    register(Tool(name="sh", description="Run a shell command.", handler=_sh,
                  input_schema={"type": "object", "properties": {"command": STRING},
                                "required": ["command"]}))
    register(Tool(name="mark", description="Leave a marker, wait for another.", handler=_mark,
                  read_only=True, concurrency_safe=True,
                  input_schema={"type": "object", "required": ["name"], "properties": {
                      "name": STRING, "after": STRING, "after_result": STRING}}))
    register(Tool(name="crash", description="Always raises.", handler=_crash))
'''


@pytest.fixture(scope="session")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder for PYTHONPATH holding the ``coretools`` entry-point plugin."""
    site = tmp_path_factory.mktemp("site")
    write_plugin_dist(site, "coretools", CORE_TOOLS_SOURCE, module="mycode_test_coretools")
    return site


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace folder."""
    path = (tmp_path / "ws").resolve()
    path.mkdir()
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A ``MYCODE_HOME`` whose config makes retries near-instant."""
    path = (tmp_path / "home").resolve()
    path.mkdir()
    (path / "config.toml").write_text(FAST_RETRY_CONFIG, encoding="utf-8")
    return path


CliRunner = Callable[..., CliResult]


@pytest.fixture
def cli(workspace: Path, home: Path, plugin_site: Path) -> CliRunner:
    """Run ``mycode`` in ``workspace`` with only the ``coretools`` plugin loaded."""

    def run(
        args: Sequence[str], env: Mapping[str, str | None] | None = None, **kwargs: Any
    ) -> CliResult:
        merged: dict[str, str | None] = {"MYCODE_LOAD_PLUGINS": "coretools"}
        merged.update(env or {})
        kwargs.setdefault("pythonpath", [plugin_site])
        return run_cli(list(args), kwargs.pop("cwd", workspace), home, merged, **kwargs)

    return run


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    """A running fake OpenAI-compatible server with an empty queue."""
    with FakeOpenAIServer() as fake:
        yield fake


@pytest.fixture
def server_args(server: FakeOpenAIServer) -> list[str]:
    """Flags that point ``mycode`` at ``server`` with stream-json output."""
    return [
        "--model",
        "m",
        "--base-url",
        server.base_url,
        "--api-key",
        "test-key",
        "--output-format",
        "stream-json",
    ]


@pytest.fixture
def run_task(cli: CliRunner, server: FakeOpenAIServer, server_args: list[str]) -> CliRunner:
    """``run_task(*responses)``: queue ``responses`` on ``server``, then run ``mycode -p task``
    against it (``cli`` with ``server_args``)."""

    def run(*responses: FakeResponse) -> CliResult:
        server.enqueue(*responses)
        return cli(["-p", "task", *server_args])

    return run
