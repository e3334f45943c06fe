"""``run_command``: bash in the workspace, with a persistent working folder and hard timeouts.

* stdin is closed; stdout and stderr are merged, in order.
* The command runs in its own session (process group); on timeout the whole group gets
  SIGTERM then SIGKILL, so grandchildren (``sleep``, servers) die too. When the user
  interrupts the turn (``context.cancelled``), the group is killed at once and the result
  says so. Groups still alive when the run ends are killed by a cleanup task.
* The working folder persists between calls (``cd sub`` sticks) but never leaves the workspace.
* Long output is cut to its head and tail with the elided count; the full output is saved
  as an artifact under ``MYCODE_HOME`` whose path the result gives (read it with read_file).
* A non-zero exit is reported with its code and marks the result as an error (``is_error``),
  so a failing ``mv`` or test run is visible to the model and to policies.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import select
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

from mycode_builtin_tools import sandbox
from mycode_core.records import ToolResult

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
HEAD_CHARS = 10_000
TAIL_CHARS = 15_000
CAP_CHARS = HEAD_CHARS + TAIL_CHARS + 5_000
EXIT_GRACE = 1.0
KILL_GRACE = 2.0
CANCEL_KILL_GRACE = 0.2
CWD_KEY = "builtin_tools.cwd"
GROUPS_KEY = "builtin_tools.process_groups"
NOTICE_KEY = "builtin_tools.sandbox_notice"
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")
_TRAP = "trap '__mycode_rc=$?; pwd -P >\"$MYCODE_CWD_FILE\" 2>/dev/null; exit $__mycode_rc' EXIT\n"


def current_cwd(context: Any) -> Path:
    """The persistent working folder of ``run_command`` (the workspace root at first)."""
    root = Path(context.workspace).resolve()
    raw = context.store.get(CWD_KEY)
    if raw:
        path = Path(raw)
        if path.is_dir() and (path == root or root in path.parents):
            return path
    return root


def _timeout(arguments: dict[str, Any], context: Any) -> float:
    section = context.settings.section("builtin_tools") if context.settings is not None else {}
    try:
        default = float(section.get("command_timeout", DEFAULT_TIMEOUT))
    except (TypeError, ValueError):  # validated before the run; stay safe for hand-made contexts
        default = DEFAULT_TIMEOUT
    raw = arguments.get("timeout")
    value = float(raw) if isinstance(raw, int | float) and raw > 0 else default
    return min(max(value, 1.0), float(MAX_TIMEOUT))


def _kill_group(pgid: int, grace: float = KILL_GRACE) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _track_group(context: Any, pgid: int) -> None:
    with context.lock:
        groups = context.store.get(GROUPS_KEY)
        if groups is None:
            groups = set()
            context.store[GROUPS_KEY] = groups

            def cleanup() -> None:
                for leftover in list(groups):
                    _kill_group(leftover)

            context.cleanup.append(cleanup)
        groups.add(pgid)


class _Capture:
    """Keeps the head and tail of the output in memory and everything in a file."""

    def __init__(self, artifact: Path) -> None:
        self.artifact = artifact
        self.file = artifact.open("wb")
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.file.write(chunk)
        self.total += len(chunk)
        room = CAP_CHARS * 4 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= TAIL_CHARS * 4:
            self.tail_size -= len(self.tail.popleft())

    def close(self) -> None:
        self.file.close()

    def text(self) -> tuple[str, bool]:
        """The output for the model, and whether it was cut (the artifact then stays)."""
        if self.total <= len(self.head):
            full = _clean(bytes(self.head))
            if len(full) <= CAP_CHARS:
                return full, False
        else:
            full = ""
        head = _clean(bytes(self.head))[:HEAD_CHARS]
        head = head[: head.rfind("\n") + 1] or head
        tail = _clean(b"".join(self.tail))[-TAIL_CHARS:]
        cut = tail.find("\n")
        tail = tail[cut + 1 :] if 0 <= cut < len(tail) - 1 else tail
        all_lines = _count_lines(self.artifact)
        elided_lines = max(0, all_lines - head.count("\n") - tail.count("\n") - 1)
        elided_bytes = max(0, self.total - len(head.encode()) - len(tail.encode()))
        marker = (
            f"\n… [{elided_lines} lines ({elided_bytes} bytes) elided; full output: "
            f"{self.artifact}] …\n"
        )
        return head + marker + tail, True


def _count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
    return count


def _clean(data: bytes) -> str:
    return _ANSI.sub("", data.decode("utf-8", "replace")).replace("\r\n", "\n")


def _environment(cwd_file: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "MYCODE_CWD_FILE": str(cwd_file),
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_EDITOR": "true",
            "NO_COLOR": "1",
            "PYTHONUNBUFFERED": "1",
        }
    )
    return env


def _pump(
    proc: subprocess.Popen[bytes], capture: _Capture, timeout: float, cancelled: Any = None
) -> str | None:
    """Copy output until the command ends. Returns ``"timeout"``, ``"cancelled"`` (the user
    interrupted the turn: ``cancelled`` is set) or ``None`` when it ended by itself."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + timeout
    exited_at: float | None = None
    eof = False
    while True:
        now = time.monotonic()
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and (eof or now - exited_at > EXIT_GRACE):
            return None
        if exited_at is None and now >= deadline:
            return "timeout"
        if exited_at is None and cancelled is not None and cancelled.is_set():
            return "cancelled"
        if eof:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=min(0.2, max(0.01, deadline - now)))
            continue
        ready, _, _ = select.select([fd], [], [], min(0.05, max(0.01, deadline - now)))
        if ready:
            chunk = os.read(fd, 65536)
            if chunk:
                capture.feed(chunk)
            else:
                eof = True


def _drain(proc: subprocess.Popen[bytes], capture: _Capture, limit: float = 0.5) -> None:
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    end = time.monotonic() + limit
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        capture.feed(chunk)


def _sandbox_argv(argv: list[str], context: Any, cwd: Path, state_dir: Path) -> list[str]:
    settings = context.settings
    if not sandbox.requested(settings):
        return argv
    if sandbox.bwrap_path() is None:
        if not context.store.get(NOTICE_KEY):
            context.store[NOTICE_KEY] = True
            with contextlib.suppress(Exception):
                from mycode_core.runtime.events import NoticeEvent

                context.emit(
                    NoticeEvent(
                        level="warning",
                        source="builtin_tools",
                        message="sandbox = true but bubblewrap (bwrap) is not usable here; "
                        "commands run unsandboxed",
                    )
                )
        return argv
    return sandbox.wrap(
        argv,
        workspace=Path(context.workspace).resolve(),
        writable=[state_dir],
        cwd=cwd,
        network=sandbox.network_allowed(settings),
    )


def run_command(arguments: dict[str, Any], context: Any) -> ToolResult:
    """Run ``command`` with bash in the persistent working folder; see the module docstring."""
    command = arguments.get("command")
    if not isinstance(command, str) or not command.strip():
        return ToolResult.error("command must be a non-empty shell command.")
    if "\x00" in command:
        return ToolResult.error("command contains a NUL byte.")
    timeout = _timeout(arguments, context)
    root = Path(context.workspace).resolve()
    cwd = current_cwd(context)
    state_dir = Path(context.artifacts_dir)
    token = uuid.uuid4().hex[:10]
    cwd_file = state_dir / f".cwd-{token}"
    artifact = state_dir / f"command-{time.strftime('%H%M%S')}-{token}.log"
    shell = shutil.which("bash") or "/bin/sh"
    argv = _sandbox_argv([shell, "-c", _TRAP + command], context, cwd, state_dir)
    capture = _Capture(artifact)
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_environment(cwd_file),
        )
    except OSError as exc:
        capture.close()
        artifact.unlink(missing_ok=True)
        return ToolResult.error(f"could not start {shell}: {exc}")
    _track_group(context, proc.pid)
    with proc:
        stopped = _pump(proc, capture, timeout, getattr(context, "cancelled", None))
        timed_out = stopped == "timeout"
        if stopped is not None:
            quick = stopped == "cancelled"
            _kill_group(proc.pid, CANCEL_KILL_GRACE if quick else KILL_GRACE)
            _drain(proc, capture, 0.1 if quick else 0.5)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KILL_GRACE)
    capture.close()
    elapsed = time.monotonic() - started
    output, cut = capture.text()
    if not cut:
        artifact.unlink(missing_ok=True)
    notes = _update_cwd(context, cwd_file, cwd, root)
    code = proc.returncode if proc.returncode is not None else -1
    metadata: dict[str, Any] = {"exit_code": code, "resources": [f"command:{command.strip()}"]}
    if cut:
        metadata["artifact"] = str(artifact)
    text = output.rstrip("\n") if output.strip() else "(no output)"
    if stopped == "cancelled":
        metadata["exit_code"] = 130
        metadata["interrupted"] = True
        text += (
            "\nInterrupted by the user: the command was stopped (its whole process group was "
            "killed) before it finished."
        )
    elif timed_out:
        metadata["exit_code"] = 124
        metadata["timed_out"] = True
        text += (
            f"\nCommand timed out after {timeout:g} s and was stopped (its whole process group "
            "was killed). Start servers and watchers in the background with their output "
            "redirected, e.g. `cmd > server.log 2>&1 &`, or pass a larger timeout (max 600)."
        )
    else:
        text += f"\nexit code: {code}" if code >= 0 else f"\nkilled by signal {-code}"
    text += "".join(f"\n{note}" for note in notes)
    metadata["duration_s"] = round(elapsed, 3)
    failed = stopped is not None or code != 0
    return ToolResult(content=text, is_error=failed, metadata=metadata)


def _update_cwd(context: Any, cwd_file: Path, before: Path, root: Path) -> list[str]:
    try:
        raw = cwd_file.read_text().strip()
    except OSError:
        return []
    finally:
        cwd_file.unlink(missing_ok=True)
    if not raw:
        return []
    after = Path(raw).resolve()
    if after == before:
        return []
    if after == root or root in after.parents:
        with context.lock:
            context.store[CWD_KEY] = str(after)
        rel = after.relative_to(root).as_posix() or "."
        return [f"(working directory is now {rel})"]
    return [
        f"(the command ended in {after}, outside the workspace; the working directory stays "
        f"{before.relative_to(root).as_posix() or '.'})"
    ]
