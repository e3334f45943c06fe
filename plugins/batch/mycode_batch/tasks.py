"""The task file: JSONL, one task a line, validated up front with the line number of each error.

A task is ``{"id", "prompt", "workspace": DIR}`` or ``{"id", "prompt", "repo": PATH_OR_URL,
"commit"?, "setup"?}`` (SPEC §10). Optional per-task overrides: ``model``, ``max_steps``,
``timeout`` (seconds). Other keys (e.g. SWE-bench metadata) are kept but not used. Relative
``workspace`` / ``repo`` paths are relative to the task file's folder (or, when nothing is
there, to the current folder).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
URL_PATTERN = re.compile(r"^([a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:)", re.IGNORECASE)
KNOWN_KEYS = (
    "id",
    "prompt",
    "workspace",
    "repo",
    "commit",
    "setup",
    "model",
    "max_steps",
    "timeout",
)


@dataclass
class Task:
    """One validated task."""

    id: str
    prompt: str
    line: int
    workspace: str | None = None
    """Absolute path of a local folder to copy (a shared clone when it is a clean git repo)."""
    repo: str | None = None
    """A URL, or the absolute path of a local git repository, to clone."""
    commit: str | None = None
    setup: str | None = None
    model: str | None = None
    max_steps: int | None = None
    timeout: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    problem: str | None = None
    """Why the task cannot run (its folder or repository is missing): it is recorded as an
    ``error`` without running, like a repository URL that cannot be cloned."""

    def to_dict(self) -> dict[str, Any]:
        """A plain dict (what is sent to a worker process or a Ray task)."""
        return asdict(self)


@dataclass
class LoadedTasks:
    """The tasks of a file and one message per line that is no task (``path:line: what``)."""

    tasks: list[Task]
    errors: list[str]
    duplicates: list[str]


def _is_url(value: str) -> bool:
    return bool(URL_PATTERN.match(value))


def _local(raw: str, base: Path) -> Path:
    """``raw`` against the task file's folder; else against the current folder if it is
    there."""
    path = Path(raw).expanduser()
    first = (base / path).resolve()
    if first.exists() or path.is_absolute():
        return first
    second = path.resolve()
    return second if second.exists() else first


def _check(data: dict[str, Any], base: Path) -> tuple[dict[str, Any], list[str], list[str]]:
    """``(fields, problems of the line, missing folders or repositories)``."""
    problems: list[str] = []
    missing: list[str] = []
    fields: dict[str, Any] = {}
    task_id = data.get("id")
    if not isinstance(task_id, str) or not task_id:
        problems.append('"id" must be a non-empty string')
    elif not ID_PATTERN.match(task_id):
        problems.append(
            f'"id" {task_id!r} may hold only letters, digits, ".", "_" and "-" '
            "(it names the task's folder)"
        )
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        problems.append('"prompt" must be a non-empty string')
    workspace, repo = data.get("workspace"), data.get("repo")
    if (workspace is None) == (repo is None):
        problems.append('give exactly one of "workspace" (a folder) or "repo" (a path or URL)')
    if workspace is not None:
        if not isinstance(workspace, str) or not workspace:
            problems.append('"workspace" must be a folder path')
        else:
            path = _local(workspace, base)
            if not path.is_dir():
                missing.append(f'"workspace" {workspace!r}: no such folder ({path})')
            fields["workspace"] = str(path)
    if repo is not None:
        if not isinstance(repo, str) or not repo:
            problems.append('"repo" must be a path or URL of a git repository')
        elif _is_url(repo):
            fields["repo"] = repo
        else:
            path = _local(repo, base)
            if not path.exists():
                missing.append(f'"repo" {repo!r}: no such repository ({path})')
            fields["repo"] = str(path)
    for key in ("commit", "setup", "model"):
        value = data.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            problems.append(f'"{key}" must be a non-empty string')
    if isinstance(data.get("commit"), str) and data["commit"].startswith("-"):
        problems.append('"commit" must name a commit, not start with "-"')
    if data.get("commit") is not None and workspace is not None:
        problems.append('"commit" goes with "repo", not "workspace"')
    steps = data.get("max_steps")
    if steps is not None and (isinstance(steps, bool) or not isinstance(steps, int) or steps < 1):
        problems.append('"max_steps" must be a whole number >= 1')
    timeout = data.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        problems.append('"timeout" must be a number of seconds > 0')
    return fields, problems, missing


def load_tasks(path: Path) -> LoadedTasks:
    """Read and validate every line of a JSONL task file; blank lines are skipped.

    A line that is no task is reported in ``errors``; a later line with an id seen before in
    ``duplicates``. A task whose folder or repository is missing is kept, with its
    ``problem``. Raises ``OSError`` when the file cannot be read.
    """
    text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is no problem
    base = path.resolve().parent
    tasks: list[Task] = []
    errors: list[str] = []
    duplicates: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        if not isinstance(data, dict):
            errors.append(f"{where}: a task must be a JSON object, got {type(data).__name__}")
            continue
        fields, problems, missing = _check(data, base)
        if problems:
            errors.extend(f"{where}: {problem}" for problem in problems + missing)
            continue
        task_id = str(data["id"])
        if task_id in seen:
            duplicates.append(f"{where}: duplicate id {task_id!r} (first on line {seen[task_id]})")
            continue
        seen[task_id] = number
        tasks.append(
            Task(
                id=task_id,
                prompt=str(data["prompt"]),
                line=number,
                workspace=fields.get("workspace"),
                repo=fields.get("repo"),
                commit=data.get("commit"),
                setup=data.get("setup"),
                model=data.get("model"),
                max_steps=data.get("max_steps"),
                timeout=float(data["timeout"]) if data.get("timeout") is not None else None,
                extra={k: v for k, v in data.items() if k not in KNOWN_KEYS},
                problem="; ".join(missing) or None,
            )
        )
    return LoadedTasks(tasks, errors, duplicates)
