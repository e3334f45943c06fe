"""Running one task: its copy, its ``setup``, a real ``mycode -p`` process, its files.

:func:`run_task` is what a local worker thread or a Ray task calls. It takes plain data (a
:class:`RunSpec` as a dict) and returns the task's ``results.jsonl`` record; everything the
task produced is written under ``OUT/tasks/<id>/``:

``transcript.jsonl`` (the run's stream-json events), ``diff.patch``, ``final.txt``,
``log.txt`` (setup output, the run's stderr, what the batch did) and ``home/`` (the run's own
``MYCODE_HOME`` with its session).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from mycode_batch import warm
from mycode_batch.sandbox import (
    SandboxError,
    diff,
    keep_copy,
    make_copy,
    remove_copy,
    snapshot,
)
from mycode_core.api import unwatch_group, watch_group
from mycode_core.sessions import json_objects

BATCH_STOP_REASONS = ("setup_failed", "timeout", "error", "worker_lost", "cancelled")
"""Stop reasons a batch record may carry besides the run's own (SPEC §4)."""

HOME_SKIP = {"sessions", "cache", "artifacts", "tmp", "batch"}
KILL_GRACE = 5.0


@dataclass
class RunSpec:
    """Everything a worker needs to run one task (plain data: it crosses process boundaries)."""

    task: dict[str, Any]
    out_dir: str
    flags: list[str] = field(default_factory=list)
    """``mycode`` options shared by every task (model, base URL, permission mode, ...)."""
    env: dict[str, str] = field(default_factory=dict)
    """Extra environment for the run (the API key travels here, not on the command line)."""
    user_home: str | None = None
    timeout: float = 1800.0
    keep_workspace: bool = False
    python: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A plain dict for pickling."""
        return asdict(self)


class _Log:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.fh: IO[str] = path.open("a", encoding="utf-8")

    def note(self, message: str) -> None:
        stamp = time.strftime("%H:%M:%S")
        self.fh.write(f"[batch {stamp}] {message}\n")
        self.fh.flush()

    def close(self) -> None:
        self.fh.close()


def _copy_user_home(source: str | None, dest: Path) -> None:
    """The user's config, hooks, MCP servers, skills and agents for the task's own home."""
    dest.mkdir(parents=True, exist_ok=True)
    if not source or not Path(source).is_dir():
        return
    for entry in Path(source).iterdir():
        if entry.name in HOME_SKIP or entry.name.startswith("."):
            continue
        try:
            if entry.is_file():
                shutil.copy2(entry, dest / entry.name)
            elif entry.is_dir():
                shutil.copytree(entry, dest / entry.name, symlinks=True, dirs_exist_ok=True)
        except OSError:
            continue


class _Running(Protocol):
    """A started process: a :class:`subprocess.Popen` or a :class:`~mycode_batch.warm.WarmRun`."""

    pid: int

    def wait(self, timeout: float | None = None) -> int:
        """Its exit code; :class:`subprocess.TimeoutExpired` if it still runs."""
        ...


def _kill_group(proc: _Running) -> None:
    """Stop ``proc`` and every process below it, even those in sessions of their own (a
    ``run_command`` of the agent): SIGTERM, a grace period, then SIGKILL."""
    import psutil

    try:
        tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    except psutil.Error:
        tree = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for member in tree:
            try:
                member.send_signal(sig)
            except psutil.Error:
                pass
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        _, alive = psutil.wait_procs(tree, timeout=KILL_GRACE)
        tree = alive
        try:
            proc.wait(timeout=KILL_GRACE if tree else 0.5)
        except subprocess.TimeoutExpired:
            continue
        if not tree:
            return


def _wait(proc: _Running, deadline: float, cancelled: Callable[[], bool]) -> str | None:
    """Wait for ``proc``; kill it at the deadline or on cancel. Returns why it was killed.

    Meanwhile its process group dies with the batch, even a SIGKILLed one (the lifeline)."""
    watch_group(proc.pid)
    try:
        while True:
            try:
                proc.wait(timeout=0.2)
                return None
            except subprocess.TimeoutExpired:
                pass
            if cancelled():
                _kill_group(proc)
                return "cancelled"
            if time.monotonic() >= deadline:
                _kill_group(proc)
                return "timeout"
    except BaseException:  # KeyboardInterrupt from ray.cancel: take the process down with us
        _kill_group(proc)
        raise
    finally:
        unwatch_group(proc.pid)


def _spawn(
    cmd: list[str], cwd: Path, env: dict[str, str], stdout: IO[Any], stderr: IO[Any], stdin: Any
) -> subprocess.Popen[Any]:
    return subprocess.Popen(
        cmd,
        cwd=str(cwd),
        env=env,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        start_new_session=True,
        preexec_fn=warm.die_with_parent,  # noqa: PLW1509 - only an async-signal-safe prctl call
    )


def _run_setup(
    command: str, copy: Path, deadline: float, log: _Log, cancelled: Callable[[], bool]
) -> str | None:
    """Run ``setup`` in the copy; ``None`` when it succeeded, else why it failed."""
    log.note(f"setup: {command}")
    log.fh.flush()
    proc = _spawn(
        ["bash", "-c", command], copy, dict(os.environ), log.fh, log.fh, subprocess.DEVNULL
    )
    killed = _wait(proc, deadline, cancelled)
    if killed:
        return killed
    if proc.returncode != 0:
        return f"setup exited with {proc.returncode}"
    return None


def read_events(path: Path) -> list[dict[str, Any]]:
    """The JSON events of a transcript file (a cut last line is skipped)."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    return list(json_objects(lines))


def _last_line(path: Path) -> str:
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    except OSError:
        return ""
    lines = [ln for ln in lines if ln.strip() and not ln.startswith("[batch ")]
    return lines[-1].strip() if lines else ""


def _record(task: dict[str, Any], task_dir: Path, started: float, **values: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "id": task["id"],
        "stop_reason": "error",
        "verdict": "none",
        "steps": 0,
        "usage": {"input_tokens": 0, "output_tokens": 0},
        "duration_ms": int((time.monotonic() - started) * 1000),
        "session_id": None,
        "patch": str(task_dir / "diff.patch"),
        "model": task.get("model"),
        "exit_code": None,
        "error": None,
        "host": socket.gethostname(),
    }
    record.update(values)
    return record


def _command(spec: RunSpec, task: dict[str, Any], copy: Path) -> list[str]:
    cmd = [spec.python or sys.executable, "-m", "mycode_core", "-p"]
    cmd += ["--output-format", "stream-json", "--cwd", str(copy), *spec.flags]
    if task.get("model"):
        cmd += ["--model", str(task["model"])]
    if task.get("max_steps"):
        cmd += ["--max-steps", str(task["max_steps"])]
    return cmd


def run_task(
    spec_data: dict[str, Any],
    cancelled: Callable[[], bool] = lambda: False,
    *,
    warm_start: bool = True,
) -> dict:
    """Run one task to its end and return its record; never raises for a task's failure.

    ``warm_start`` lets the run fork from the warm server (:mod:`mycode_batch.warm`)."""
    spec = RunSpec(**spec_data)
    task = spec.task
    out = Path(spec.out_dir)
    task_dir = out / "tasks" / task["id"]
    started = time.monotonic()
    if task_dir.exists():  # an earlier attempt (a lost worker, or an unrecorded run)
        copy_dir = task_dir / "workspace"
        if copy_dir.exists():
            remove_copy(copy_dir, _worktree_owner(copy_dir))
        shutil.rmtree(task_dir, ignore_errors=True)
    task_dir.mkdir(parents=True, exist_ok=True)
    log = _Log(task_dir / "log.txt")
    (task_dir / "diff.patch").write_text("", encoding="utf-8")
    (task_dir / "final.txt").write_text("", encoding="utf-8")
    timeout = float(task.get("timeout") or spec.timeout)
    deadline = started + timeout
    copy = task_dir / "workspace"
    owner: Path | None = None
    try:
        log.note(f"task {task['id']} on {socket.gethostname()} pid {os.getpid()}")
        if task.get("problem"):
            log.note(str(task["problem"]))
            return _record(task, task_dir, started, error=str(task["problem"]))
        try:
            copy, owner = make_copy(
                workspace=task.get("workspace"),
                repo=task.get("repo"),
                commit=task.get("commit"),
                dest=copy,
                skip=out,
            )
        except (SandboxError, OSError) as exc:
            log.note(f"could not make the task's copy: {exc}")
            return _record(task, task_dir, started, error=f"could not make the copy: {exc}")
        if task.get("setup"):
            failure = _run_setup(str(task["setup"]), copy, deadline, log, cancelled)
            if failure:
                log.note(failure)
                reason = failure if failure in ("timeout", "cancelled") else "setup_failed"
                return _record(task, task_dir, started, stop_reason=reason, error=failure)
        index = task_dir / ".batch-index"
        start_tree = snapshot(copy, index)
        home = task_dir / "home"
        _copy_user_home(spec.user_home, home)
        env = {**os.environ, **spec.env, "MYCODE_HOME": str(home)}
        env.setdefault("PYTHONIOENCODING", "utf-8")
        transcript = task_dir / "transcript.jsonl"
        command = _command(spec, task, copy)
        if warm_start and warm.enabled(spec.python):
            log.note("run: mycode -p, forked warm (prompt on stdin)")
            prompt = task_dir / ".prompt"
            prompt.write_text(str(task["prompt"]), encoding="utf-8")
            proc: Any = warm.start(command[3:], copy, env, prompt, transcript, log.path)
            killed = _wait(proc, deadline, cancelled)
            prompt.unlink(missing_ok=True)
        else:
            log.note("run: mycode -p (prompt on stdin)")
            with transcript.open("w", encoding="utf-8") as events_fh:
                proc = _spawn(command, copy, env, events_fh, log.fh, subprocess.PIPE)
                assert proc.stdin is not None
                try:
                    proc.stdin.write(str(task["prompt"]).encode("utf-8"))
                    proc.stdin.close()
                except OSError:
                    pass
                killed = _wait(proc, deadline, cancelled)
        patch = diff(copy, start_tree, index)
        (task_dir / "diff.patch").write_text(patch, encoding="utf-8")
        events = read_events(transcript)
        return _finish(task, task_dir, started, events, proc.returncode, killed, log)
    except (SandboxError, OSError) as exc:
        log.note(f"error: {exc}")
        return _record(task, task_dir, started, error=str(exc))
    finally:
        if not spec.keep_workspace and copy.exists():
            remove_copy(copy, owner)
        elif copy.exists():
            _keep(copy, log)
        (task_dir / ".batch-index").unlink(missing_ok=True)
        log.close()


def _keep(copy: Path, log: _Log) -> None:
    try:
        keep_copy(copy)
    except (SandboxError, OSError) as exc:
        log.note(f"the kept copy still borrows the source's git objects: {exc}")


def _worktree_owner(copy: Path) -> Path | None:
    marker = copy / ".git"
    if marker.is_file():  # "gitdir: /repo/.git/worktrees/NAME"
        text = marker.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            gitdir = Path(text.split(":", 1)[1].strip())
            if gitdir.parent.name == "worktrees":
                return gitdir.parent.parent.parent
    return None


def _finish(
    task: dict[str, Any],
    task_dir: Path,
    started: float,
    events: list[dict[str, Any]],
    exit_code: int | None,
    killed: str | None,
    log: _Log,
) -> dict[str, Any]:
    system = next((e for e in events if e.get("type") == "system"), {})
    result = next((e for e in reversed(events) if e.get("type") == "result"), None)
    values: dict[str, Any] = {
        "exit_code": exit_code,
        "session_id": system.get("session_id"),
        "model": system.get("model") or task.get("model"),
        "steps": sum(1 for e in events if e.get("type") == "step_start"),
    }
    if result is not None:
        usage = result.get("usage") or {}
        values.update(
            stop_reason=result.get("stop_reason") or "error",
            verdict=result.get("verdict") or "none",
            steps=int(result.get("steps") or 0),
            usage={
                "input_tokens": int(usage.get("input_tokens") or 0),
                "output_tokens": int(usage.get("output_tokens") or 0),
            },
            session_id=result.get("session_id") or values["session_id"],
        )
        (task_dir / "final.txt").write_text(str(result.get("final_text") or ""), "utf-8")
    if killed:
        values.update(stop_reason=killed, error=f"killed: {killed}")
    elif result is None:
        reason = _last_line(task_dir / "log.txt") or f"mycode exited with {exit_code}"
        values.update(error=f"no result from the run: {reason}")
    log.note(f"end: {values.get('stop_reason', 'error')} (exit {exit_code})")
    return _record(task, task_dir, started, **values)
