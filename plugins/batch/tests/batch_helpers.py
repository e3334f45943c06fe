"""Building task files, workspaces and scripts, and running ``mycode batch`` as a subprocess."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mycode_core.testing import CliResult, mycode_command, run_cli, write_script

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


BYPASS = ("--permission-mode", "bypass")
"""Flags: run the tasks' tools without asking."""


def on_ray(address: str) -> tuple[str, ...]:
    """Flags: run the tasks on the Ray cluster at ``address``."""
    return ("--executor", "ray", "--ray-address", address)


def batch_command(tasks_file: Path, out: Path, *args: str) -> list[str]:
    """The argv of ``mycode batch TASKS --out OUT ARGS`` (for a ``Popen`` the test controls)."""
    return [*mycode_command(), "batch", str(tasks_file), "--out", str(out), *args]


def git_repo(path: Path, files: Mapping[str, str]) -> Path:
    """A git repository at ``path`` with ``files`` committed."""
    path.mkdir(parents=True, exist_ok=True)
    folder(path, files)
    subprocess.run([*GIT, "init", "-q"], cwd=path, check=True)
    subprocess.run([*GIT, "add", "-A"], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "start"], cwd=path, check=True)
    return path


def head(repo: Path) -> str:
    """The commit id of HEAD."""
    return subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def folder(path: Path, files: Mapping[str, str]) -> Path:
    """A plain folder with ``files``."""
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    return path


def writer_script(path: Path, name: str, content: str, final: str = "done") -> str:
    """A scripted model that writes one file, then answers ``final``."""
    return write_script(
        path,
        [
            {
                "tool_calls": [
                    {"name": "write_file", "arguments": {"path": name, "content": content}}
                ]
            },
            {"content": final},
        ],
    )


def command_script(path: Path, command: str, final: str = "done") -> str:
    """A scripted model that runs one shell command, then answers ``final``."""
    return write_script(
        path,
        [
            {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
            {"content": final},
        ],
    )


def task(task_id: str, workspace: str = "ws", **fields: Any) -> dict[str, Any]:
    """A task-file entry with prompt ``p`` on the folder ``workspace`` (``fields`` add to it)."""
    return {"id": task_id, "prompt": "p", "workspace": workspace, **fields}


def write_tasks(path: Path, tasks: Sequence[Mapping[str, Any] | str]) -> Path:
    """A JSONL task file (a ``str`` entry is written as the raw line)."""
    lines = [t if isinstance(t, str) else json.dumps(t) for t in tasks]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def run_batch(
    tasks_file: Path,
    out: Path,
    home: Path,
    *args: str,
    env: Mapping[str, str | None] | None = None,
    timeout: float = 240.0,
) -> CliResult:
    """``mycode batch TASKS --out OUT ARGS`` in the task file's folder."""
    return run_cli(
        ["batch", str(tasks_file), "--out", str(out), *args],
        cwd=tasks_file.parent,
        home=home,
        env=env,
        timeout=timeout,
    )


def results(out: Path) -> dict[str, dict[str, Any]]:
    """The records of ``results.jsonl`` by id."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["id"]: r for r in (json.loads(line) for line in lines if line.strip())}


def result_lines(out: Path) -> list[dict[str, Any]]:
    """Every line of ``results.jsonl`` in order."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]
