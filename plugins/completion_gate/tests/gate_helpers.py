"""Hand-made observations shaped like the core's, for the gate's unit tests."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import Any

from mycode_core.records import Observation, Validation

_COUNTER = {"n": 0}


def _obs(tool: str, args: dict[str, Any], result: str, **fields: Any) -> Observation:
    _COUNTER["n"] += 1
    n = _COUNTER["n"]
    return Observation(
        step=n,
        call_id=f"c{n}",
        tool=tool,
        signature=f"{tool} {json.dumps(args, sort_keys=True, separators=(',', ':'))}",
        result_hash=hashlib.sha1(result.encode()).hexdigest()[:16],
        **fields,
    )


def read(path: str) -> Observation:
    """A read_file of ``path``."""
    return _obs("read_file", {"path": path}, f"content of {path}", resources=[f"file:{path}:1-9"])


def edit(path: str) -> Observation:
    """An edit_file of ``path`` (a mutation)."""
    return _obs(
        "edit_file",
        {"path": path, "old_string": "a", "new_string": "b"},
        f"edited {path}",
        resources=[f"file:{path}"],
        mutation=True,
        mutated=[path],
    )


def run(
    command: str, kind: str | None = "test", passed: bool = True, mutated: list[str] | None = None
) -> Observation:
    """A run_command; a validation of ``kind`` unless ``kind`` is None."""
    validation = Validation(kind=kind, command=command, passed=passed) if kind else None  # type: ignore[arg-type]
    return _obs(
        "run_command",
        {"command": command},
        f"{command} -> {passed}",
        resources=[f"command:{command}"],
        validation=validation,
        mutation=bool(mutated),
        mutated=mutated or [],
        is_error=not passed,
    )


# --- end-to-end: the real CLI on a tiny project ----------------------------------------------

BIN = Path(sys.executable).parent


def make_project(root: Path) -> Path:
    """A tiny Python project whose test fails until ``add`` is fixed."""
    ws = root / "ws"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (ws / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", encoding="utf-8"
    )
    return ws


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    """A scripted model turn calling one tool."""
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


def say(text: str) -> dict[str, Any]:
    """A scripted model turn with a final answer."""
    return {"content": text}


READ = tool("read_file", path="calc.py")
FIX = tool("edit_file", path="calc.py", old_string="a - b", new_string="a + b")
TESTS = tool("run_command", command="python -m pytest -q")


def run_cli(
    ws: Path,
    turns: list[dict[str, Any]],
    prompt: str,
    *extra: str,
    env: dict[str, str] | None = None,
) -> tuple[list[dict[str, Any]], int, str]:
    """Play ``turns`` through ``mycode -p`` (stream-json); return events, exit code, stderr."""
    from mycode_core.testing import run_cli as run_mycode
    from mycode_core.testing import write_script

    model = write_script(ws.parent / "script.json", turns)
    path = {"PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    args = ["-p", prompt, "--model", model, "--output-format", "stream-json", "--cwd", str(ws),
            "--permission-mode", "bypass", *extra]  # fmt: skip
    run = run_mycode(args, ws, ws.parent / "home", {**path, **(env or {})}, timeout=120)
    assert run.events and run.events[-1]["type"] == "result", run.stdout[-2000:] + run.stderr
    return run.events, run.rc, run.stderr


def guidance(events: list[dict[str, Any]], source: str = "completion_gate") -> list[str]:
    """The messages of the guidance events from ``source``."""
    return [e["message"] for e in events if e["type"] == "guidance" and e["source"] == source]
