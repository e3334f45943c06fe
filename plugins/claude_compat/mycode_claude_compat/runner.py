"""Running hook commands: JSON on stdin, bounded output, a timeout that kills the process
tree, hooks of one event in parallel.

Nothing a hook starts outlives it: when it ends (or its timeout, or the run's cancellation —
Ctrl-C, SIGTERM, SIGHUP — stops it) what is left of its process group is killed; an ``async``
hook going on in the background is stopped when the run ends (:class:`HookProcesses`), and every
hook's group dies with mycode even when mycode is SIGKILLed (the core's lifeline)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mycode_claude_compat.names import claude_json
from mycode_claude_compat.sources import CommandHook
from mycode_core.api import unwatch_group, watch_group

MAX_OUTPUT = 1_000_000
"""Bytes kept of a hook's stdout and of its stderr; the rest is read and dropped."""
_SHELL = shutil.which("bash") or "/bin/sh"


@dataclass
class HookRun:
    """What one hook command did."""

    hook: CommandHook
    code: int | None = None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    truncated: bool = False
    error: str | None = None
    """Set when the command could not be started."""
    data: dict[str, Any] | None = None
    """The parsed JSON object of stdout (exit code 0 only)."""
    json_error: str | None = None
    interrupted: bool = False
    """Stopped because the run was cancelled (Ctrl-C, SIGTERM, SIGHUP) while it ran."""
    detached: bool = False
    """The hook declared itself async (first stdout line ``{"async": true}``) and runs on in
    the background; its output is not used."""

    @property
    def failed(self) -> bool:
        """Crashed, timed out, not started, or an exit code other than 0 and 2."""
        if self.detached:
            return False
        return self.error is not None or self.timed_out or self.code not in (0, 2)

    def problem(self) -> str:
        """One readable line saying what went wrong (empty if nothing did)."""
        name = self.hook.label
        if self.error is not None:
            return f"hook {name} could not start: {self.error}"
        if self.interrupted:
            return f"hook {name} was stopped: the run was interrupted"
        if self.timed_out:
            return f"hook {name} timed out after {self.hook.timeout:g}s and was killed"
        if self.code not in (0, 2):
            tail = self.stderr.strip().splitlines()[-1:] or [""]
            detail = f": {tail[0][:200]}" if tail[0] else ""
            return f"hook {name} failed with exit code {self.code}{detail}"
        if self.json_error is not None:
            said = "gave an answer it cannot read" if self.hook.prompt else "printed invalid JSON"
            return f"hook {name} {said}: {self.json_error}"
        return ""


def _declares_async(sink: bytearray) -> bool:
    """Whether the first stdout line is Claude Code's ``{"async": true, ...}``."""
    first = bytes(sink.split(b"\n", 1)[0]).strip()
    if not first.startswith(b"{") or b"async" not in first:
        return False
    try:
        data = json.loads(first)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get("async") is True


def _pump(
    stream: IO[bytes],
    sink: bytearray,
    flags: dict[str, bool],
    wake: threading.Event | None = None,
) -> None:
    checked = wake is None
    try:
        while True:
            chunk = stream.read1(65536) if hasattr(stream, "read1") else stream.read(65536)
            if not chunk:
                break
            room = MAX_OUTPUT - len(sink)
            if room > 0:
                sink.extend(chunk[:room])
            if len(chunk) > room:
                flags["truncated"] = True
            if not checked and b"\n" in sink:
                checked = True
                if _declares_async(sink) and wake is not None:
                    flags["async"] = True
                    wake.set()
    except (OSError, ValueError):
        pass


def _feed(stream: IO[bytes], payload: bytes) -> None:
    try:
        stream.write(payload)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the hook does not read its input: fine
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _kill_tree(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        try:
            process.kill()
        except OSError:
            pass


class HookProcesses:
    """The hook processes of one run: those still going are stopped when the run is cancelled
    (if they started before) and when it ends (:meth:`stop_all`)."""

    MARK = "MYCODE_HOOK_RUN"
    """The environment variable marking a hook's processes (their marker value is its own)."""

    def __init__(self, cancelled: threading.Event | None = None) -> None:
        self.cancelled = cancelled
        self.live: dict[subprocess.Popen[bytes], str] = {}
        self.lock = threading.Lock()

    def mark(self) -> str:
        """The marker (``NAME=VALUE``) of a hook about to start: from now on, what carries it in
        its environment dies with mycode, even a SIGKILLed one — before the hook can run."""
        marker = f"{self.MARK}={os.urandom(8).hex()}"
        watch_group(marker=marker)
        return marker

    def add(self, process: subprocess.Popen[bytes], marker: str) -> None:
        """A hook started with ``marker`` (its group too dies with mycode)."""
        with self.lock:
            self.live[process] = marker
        watch_group(process.pid)

    def end(self, process: subprocess.Popen[bytes]) -> None:
        """Kill what is left of the hook's process group; it is no longer ours to stop."""
        _kill_tree(process)
        with self.lock:
            marker = self.live.pop(process, None)
        unwatch_group(process.pid, marker)

    def stop_all(self) -> None:
        """The run ends: stop every hook still going (an ``async`` one in the background)."""
        with self.lock:
            live = list(self.live)
        for process in live:
            self.end(process)

    def running(self) -> bool:
        """Whether the run is going on (not cancelled), asked before a hook starts."""
        return self.cancelled is not None and not self.cancelled.is_set()

    def wait(self, wake: threading.Event, timeout: float, running: bool) -> bool:
        """Wait until ``wake`` or ``timeout``; False if the run was cancelled meanwhile. A hook
        started once the run was cancelled (``running`` false; ``SessionEnd``) gets its whole
        timeout."""
        cancelled = self.cancelled
        if cancelled is None or not running:
            wake.wait(timeout)
            return True
        deadline = time.monotonic() + timeout
        while not wake.wait(min(0.1, max(0.0, deadline - time.monotonic()))):
            if cancelled.is_set():
                return False
            if time.monotonic() >= deadline:
                break
        return True


def _async_timeout(out: bytearray, default: float) -> float:
    try:
        data = json.loads(bytes(out.split(b"\n", 1)[0]))
        value = float(data.get("asyncTimeout", 0)) / 1000
    except (ValueError, TypeError, AttributeError):
        value = 0.0
    return value if value > 0 else max(default, 600.0)


def _reap(process: subprocess.Popen[bytes], timeout: float, processes: HookProcesses) -> None:
    """Wait for a detached (async) hook; kill its tree when it outlives ``timeout``."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=timeout)
    processes.end(process)


def _parse(run: HookRun) -> None:
    text = run.stdout.strip()
    if run.code != 0 or not text.startswith("{"):
        return
    try:
        data = json.loads(text)
    except ValueError as exc:
        if _declares_async(bytearray(text.encode())):
            run.detached = True  # an async hook that finished before we looked
            return
        run.json_error = str(exc) if not run.truncated else "output cut at 1 MB"
        return
    if isinstance(data, dict):
        run.data = data
    else:
        run.json_error = "not a JSON object"


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def argv(hook: CommandHook, env: dict[str, str]) -> list[str]:
    """How ``hook`` is started: its command line through the shell, or in the exec form
    (``args``) the command and its arguments as they are, each ``${VAR}`` of ``env``
    (``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PROJECT_DIR}``…) filled in — a path with spaces
    needs no quoting; a name ``env`` lacks stays as written."""
    if hook.args is None:
        return [_SHELL, "-c", hook.command]

    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: env.get(m.group(1), m.group(0)), text)

    return [fill(hook.command), *(fill(arg) for arg in hook.args)]


def run_hook(
    hook: CommandHook,
    payload: dict[str, Any],
    workspace: Path,
    extra_env: dict[str, str] | None = None,
    ask: Callable[..., str] | None = None,
    processes: HookProcesses | None = None,
) -> HookRun:
    """Run one hook command with ``payload`` as JSON on stdin (and ``extra_env`` in its
    environment: ``CLAUDE_ENV_FILE``), or a prompt hook through ``ask``; never raises.
    ``processes`` are the run's (a cancelled run stops the hook; the run's end an async one)."""
    if hook.prompt is not None:
        from mycode_claude_compat.prompt_hooks import ask_model

        return ask_model(hook, payload, HookRun(hook=hook), ask)
    if hook.url is not None:
        from mycode_claude_compat.http_hooks import post_hook

        return post_hook(hook, payload, HookRun(hook=hook), _parse)
    run = HookRun(hook=hook)
    env = dict(os.environ)
    env.update(extra_env or {})
    env["CLAUDE_PROJECT_DIR"] = str(workspace)
    if hook.plugin_root is not None:
        env["CLAUDE_PLUGIN_ROOT"] = str(hook.plugin_root)
        env["PLUGIN_ROOT"] = str(hook.plugin_root)  # Codex folders' hooks (SPEC §11)
    if hook.plugin_data is not None:  # as Codex and Claude Code give a plugin's hooks
        env["PLUGIN_DATA"] = env["CLAUDE_PLUGIN_DATA"] = str(hook.plugin_data)
        with contextlib.suppress(OSError):
            hook.plugin_data.mkdir(parents=True, exist_ok=True)
    processes = processes or HookProcesses()
    running = processes.running()
    marker = processes.mark()
    env[HookProcesses.MARK] = marker.partition("=")[2]
    try:
        process = subprocess.Popen(  # noqa: S603 - the user's own hook, from a trusted source
            argv(hook, env),
            cwd=str(workspace),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        unwatch_group(marker=marker)
        run.error = str(exc)
        return run
    processes.add(process, marker)
    assert process.stdin and process.stdout and process.stderr
    out, err = bytearray(), bytearray()
    flags = {"truncated": False, "async": False}
    wake = threading.Event()

    def wait_exit() -> None:
        process.wait()
        wake.set()

    threads = [
        threading.Thread(
            target=_feed, args=(process.stdin, claude_json(payload).encode()), daemon=True
        ),
        threading.Thread(target=_pump, args=(process.stdout, out, flags, wake), daemon=True),
        threading.Thread(target=_pump, args=(process.stderr, err, flags), daemon=True),
        threading.Thread(target=wait_exit, daemon=True),
    ]
    for thread in threads:
        thread.start()
    run.interrupted = not processes.wait(wake, hook.timeout, running)
    if flags["async"] and process.poll() is None and not run.interrupted:
        run.detached = True  # it goes on in the background (as in Claude Code) for this run
        threading.Thread(
            target=_reap, args=(process, _async_timeout(out, hook.timeout), processes), daemon=True
        ).start()
        return run
    if process.poll() is None:
        run.timed_out = not run.interrupted
        _kill_tree(process)
        process.wait()
    processes.end(process)  # what it left running in its group goes too
    run.code = process.returncode
    for thread in threads[1:3]:
        thread.join(timeout=2.0)  # a background child may hold the pipes: stop reading
    run.stdout = out.decode("utf-8", "replace")
    run.stderr = err.decode("utf-8", "replace")
    run.truncated = flags["truncated"]
    if not run.timed_out and not run.interrupted:
        _parse(run)
    return run


_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def run_all(
    hooks: list[CommandHook],
    payload: dict[str, Any],
    workspace: Path,
    extra_env: dict[str, str] | None = None,
    ask: Callable[..., str] | None = None,
    processes: HookProcesses | None = None,
) -> list[HookRun]:
    """Run the hooks of one event in parallel (identical commands once); results in order."""
    unique: dict[str, CommandHook] = {}
    for hook in hooks:
        unique.setdefault(hook.key, hook)
    chosen = list(unique.values())
    if len(chosen) == 1:
        return [run_hook(chosen[0], payload, workspace, extra_env, ask, processes)]
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(8, thread_name_prefix="mycode-cc-hook")
    futures = [
        _pool.submit(run_hook, hook, payload, workspace, extra_env, ask, processes)
        for hook in chosen
    ]
    return [future.result() for future in futures]
