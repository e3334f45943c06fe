"""``run_command``: bash in the workspace, with a persistent working folder and hard timeouts.

* stdin is closed; stdout and stderr are merged, in order.
* In ``default`` and ``accept-edits`` modes it runs inside the OS sandbox when one is
  available (:mod:`mycode_builtin_tools.sandbox`); API keys and tokens are removed from its
  environment in every mode but ``bypass``.
* Nothing it starts outlives the call (:mod:`mycode_builtin_tools.processes`): on exit, on
  timeout and when the run is cancelled (Ctrl-C, SIGTERM) the whole tree is stopped.
* The working folder persists between calls (``cd sub`` sticks) but never leaves the workspace.
* Long output is cut to its head and tail with the elided count; the output is saved as an
  artifact under ``MYCODE_HOME`` whose path the result gives (read it with read_file). The
  artifact itself is capped (``ARTIFACT_HEAD`` + ``ARTIFACT_TAIL`` bytes, the cut said).
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
import subprocess
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

from mycode_builtin_tools import processes, sandbox
from mycode_builtin_tools.live_output import LiveOutput
from mycode_core import RunContext, tool
from mycode_core.api import safeopen, scrub_env, unwatch_group, watch_group
from mycode_core.records import ToolResult

DESCRIPTION = (
    "Run a bash command in the workspace (cwd persists, no stdin, timeout 120 s default, max "
    "600; nothing it starts outlives it). Long output is cut; its full path is given."
)

DEFAULT_TIMEOUT = 120
MAX_TIMEOUT = 600
HEAD_CHARS = 10_000
TAIL_CHARS = 15_000
CAP_CHARS = HEAD_CHARS + TAIL_CHARS + 5_000
ARTIFACT_HEAD = 32 * 1024 * 1024
ARTIFACT_TAIL = 8 * 1024 * 1024
EXIT_GRACE = 1.0
KILL_GRACE = 2.0
CANCEL_KILL_GRACE = 0.2
CWD_KEY = "builtin_tools.cwd"
GROUPS_KEY = "builtin_tools.process_groups"
_ANSI = re.compile(r"\x1b\[[0-9;?]{0,64}[ -/]{0,8}[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?")
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


def _timeout(requested: float | None, context: Any) -> float:
    """The call's timeout: the model's ``requested`` seconds, else the configured default,
    within 1 s … ``MAX_TIMEOUT``."""
    section = context.settings.section("builtin_tools") if context.settings is not None else {}
    try:
        default = float(section.get("command_timeout", DEFAULT_TIMEOUT))
    except (TypeError, ValueError):  # validated before the run; stay safe for hand-made contexts
        default = DEFAULT_TIMEOUT
    value = float(requested) if requested is not None and requested > 0 else default
    return min(max(value, 1.0), float(MAX_TIMEOUT))


def _kill_group(pgid: int) -> None:
    processes.kill_group(pgid, KILL_GRACE)


def _untrack_group(context: Any, pgid: int) -> None:
    with context.lock:
        groups = context.store.get(GROUPS_KEY)
        if groups is not None:
            groups.discard(pgid)


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
    """Keeps the head and tail of the output in memory, and a capped copy in a file.

    The file keeps the first ``ARTIFACT_HEAD`` bytes, then the last ``ARTIFACT_TAIL`` bytes
    after a line saying how much was cut.
    """

    def __init__(self, artifact: Path) -> None:
        self.artifact = artifact
        self.file = artifact.open("wb")
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.total = 0
        self.file_tail: collections.deque[bytes] = collections.deque()
        self.file_tail_size = 0

    def feed(self, chunk: bytes) -> None:
        room_in_file = ARTIFACT_HEAD - self.total
        if room_in_file > 0:
            self.file.write(chunk[:room_in_file])
        if len(chunk) > room_in_file:
            rest = chunk[max(0, room_in_file) :]
            self.file_tail.append(rest)
            self.file_tail_size += len(rest)
            while self.file_tail and self.file_tail_size - len(self.file_tail[0]) >= ARTIFACT_TAIL:
                self.file_tail_size -= len(self.file_tail.popleft())
        self.total += len(chunk)
        room = CAP_CHARS * 4 - len(self.head)
        if room > 0:
            self.head += chunk[:room]
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail and self.tail_size - len(self.tail[0]) >= TAIL_CHARS * 4:
            self.tail_size -= len(self.tail.popleft())

    def close(self) -> None:
        if self.file_tail:
            tail = b"".join(self.file_tail)[-ARTIFACT_TAIL:]
            self.file_tail.clear()
            cut = self.total - ARTIFACT_HEAD - len(tail)
            self.file.write(
                f"\n… [artifact cut: {cut} bytes of {self.total} not kept; the first "
                f"{ARTIFACT_HEAD} and the last {len(tail)} bytes are] …\n".encode()
            )
            self.file.write(tail)
        self.file.close()

    def text(self) -> tuple[str, bool]:
        """The output for the model, and whether it was cut (the artifact then stays)."""
        if self.total <= len(self.head):
            full = _clean(bytes(self.head))
            if len(full) <= CAP_CHARS:
                return full, False
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
            f"{self.artifact} — read the rest with read_file (path as shown, offset = the "
            "first line wanted)] …\n"
        )
        return head + marker + tail, True


def _count_lines(path: Path) -> int:
    count = 0
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            count += chunk.count(b"\n")
    return count


def _clean(data: bytes) -> str:
    text = _ANSI.sub("", data.decode("utf-8", "replace")).replace("\r\n", "\n")
    return text.replace("\x1b", "\u241b")


def _environment(cwd_file: Path, token: str, context: Any) -> dict[str, str]:
    env = dict(os.environ)
    if context.permission_mode != "bypass":
        env = scrub_env(env, _config(context).env_passthrough)
    env.update(
        {
            "MYCODE_CWD_FILE": str(cwd_file),
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_EDITOR": "true",
            "NO_COLOR": "1",
            "PYTHONUNBUFFERED": "1",
            processes.MARKER: token,
        }
    )
    return env


def _pump(
    proc: subprocess.Popen[bytes],
    capture: _Capture,
    timeout: float,
    cancelled: Any,
    live: LiveOutput,
) -> bool:
    """Copy output until the command ends, times out or the run is cancelled (True then)."""
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
            return False
        if exited_at is None and (now >= deadline or cancelled.is_set()):
            return True
        live.tick()
        if eof:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=min(0.2, max(0.01, deadline - now)))
            continue
        ready, _, _ = select.select([fd], [], [], min(0.05, max(0.01, deadline - now)))
        if ready:
            chunk = os.read(fd, 65536)
            if chunk:
                capture.feed(chunk)
                live.feed(chunk)
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


def _config(context: Any, writable_roots: Iterable[Path] = ()) -> sandbox.SandboxConfig:
    """The run's sandbox settings, with the folders plugins opened to commands added."""
    try:
        cfg = sandbox.config(context.settings)
    except sandbox.SandboxConfigError:
        return sandbox.SandboxConfig(mode="on")
    cfg.writable += [Path(p) for p in writable_roots if Path(p) not in cfg.writable]
    return cfg


def sandboxed(context: Any) -> bool:
    """Whether commands of this run go through the OS sandbox."""
    try:
        return sandbox.status(context.settings, context.permission_mode).active
    except sandbox.SandboxConfigError:
        return False


def _sandbox_argv(
    argv: list[str], context: Any, cwd: Path, state_dir: Path, command: str = ""
) -> list[str]:
    if not sandboxed(context):
        return argv
    # the command judgement is big to import: loaded with the first command, not at start-up
    from mycode_builtin_tools.permissions import gitwrites

    return sandbox.wrap(
        argv,
        git_writable=gitwrites.git_only_writes(command),
        workspace=Path(context.workspace).resolve(),
        cwd=cwd,
        cfg=_config(context, getattr(context, "writable_roots", None) or ()),
        home=Path(context.home),
        state_dir=state_dir,
        readable=list(getattr(context, "readable_roots", None) or ()),
        tmp=session_tmp(context),
        protected=_protected(context),
    )


def _protected(context: Any) -> list[Path]:
    """``context.protected_roots`` that lie in the workspace (:func:`sandbox.protected_binds`)."""
    roots = list(getattr(context, "protected_roots", None) or ())
    return sandbox.protected_binds(Path(context.workspace), roots)


_SESSION_TMP: dict[str, Path] = {}
"""The sandbox ``/tmp`` folder of each session that ran a sandboxed command, by session id."""


def session_tmp(context: Any) -> Path:
    """The folder sandboxed commands of this session — its subagents' too — see as ``/tmp``
    (only its owner may enter it): kept from one command to the next, removed when the
    session ends (:func:`drop_session_tmp`)."""
    # not inside ``.commands``, which commands may write: swapped for a symlink there, it
    # would have bound any folder of the host writable as the next command's /tmp
    folder = Path(context.artifacts_dir) / ".command-tmp"
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        folder.unlink()
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    _SESSION_TMP[str(context.session_id)] = folder
    return folder


def drop_session_tmp(session_id: str) -> None:
    """Remove the session's sandbox ``/tmp`` and what its commands left there."""
    folder = _SESSION_TMP.pop(session_id, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


@tool(name="run_command", risk="high", timeout=660, description=DESCRIPTION)
def run_command(
    context: RunContext,
    command: str,
    timeout: Annotated[float | None, "Seconds."] = None,
    description: str | None = None,
) -> ToolResult:
    """Run ``command`` with bash in the persistent working folder; see the module docstring.

    ``description`` is the model's note for people reading the call; the command ignores it.
    """
    if not command.strip():
        return ToolResult.error("command must be a non-empty shell command.")
    if "\x00" in command:
        return ToolResult.error("command contains a NUL byte.")
    seconds = _timeout(timeout, context)
    root = Path(context.workspace).resolve()
    cwd = current_cwd(context)
    state_dir = Path(context.artifacts_dir)
    token = uuid.uuid4().hex[:10]
    try:
        state_dir = Path(context.artifacts_dir) / ".commands"
        state_dir.mkdir(exist_ok=True)
    except OSError as exc:
        return ToolResult.error(f"cannot prepare the command: {exc.strerror or exc} ({exc})")
    cwd_file = state_dir / f"cwd-{token}"
    artifact = Path(context.artifacts_dir) / f"command-{time.strftime('%H%M%S')}-{token}.log"
    shell = shutil.which("bash") or "/bin/sh"
    try:
        argv = _sandbox_argv([shell, "-c", _TRAP + command], context, cwd, state_dir, command)
        capture = _Capture(artifact)
    except (OSError, RuntimeError) as exc:
        return ToolResult.error(f"cannot start the command: {exc}")
    isolated = argv[0] != shell
    with contextlib.ExitStack() as stack:
        pid_box: list[int] = []
        before: set[int] | None = None
        if not isolated:  # what it starts dies with mycode, even a SIGKILLed one
            watch_group(marker=f"{processes.MARKER}={token}")  # before the children are listed
            stack.callback(unwatch_group, None, f"{processes.MARKER}={token}")
            stack.enter_context(processes.subreaper())
            before = stack.enter_context(processes.call_scope(pid_box))
        return _run(context, command, argv, cwd, root, capture, artifact, cwd_file, token, seconds,
                    isolated, before, pid_box)  # fmt: skip


def _run(
    context: Any,
    command: str,
    argv: list[str],
    cwd: Path,
    root: Path,
    capture: _Capture,
    artifact: Path,
    cwd_file: Path,
    token: str,
    timeout: float,
    isolated: bool,
    before: set[int] | None = None,
    pid_box: list[int] | None = None,
) -> ToolResult:
    """Start the command, pump its output, stop what is left, and build the result."""
    started = time.monotonic()
    missing = sandbox.missing_config_folders(root) if isolated else []
    entries = sandbox.config_entries(root, _protected(context)) if isolated else {}
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=_environment(cwd_file, token, context),
        )
    except OSError as exc:
        capture.close()
        artifact.unlink(missing_ok=True)
        return ToolResult.error(f"could not start {argv[0]}: {exc}")
    _track_group(context, proc.pid)
    if pid_box is not None and not isolated:
        pid_box.append(proc.pid)
        processes.register_call(proc.pid)
        watch_group(proc.pid)
    with proc:
        timed_out = _pump(proc, capture, timeout, context.cancelled, LiveOutput(context))
        if timed_out:  # a cancelled turn (Ctrl-C, SIGTERM) kills at once, a timeout politely
            quick = context.cancelled.is_set()
            processes.kill_group(proc.pid, CANCEL_KILL_GRACE if quick else KILL_GRACE)
            _drain(proc, capture, 0.1 if quick else 0.5)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=KILL_GRACE)
        strays = 0 if isolated else processes.end_call(proc.pid, token, before)
        if isolated:
            processes.kill_group(proc.pid, grace=0.2)
        else:
            unwatch_group(proc.pid)
    _untrack_group(context, proc.pid)
    interrupted = timed_out and context.cancelled.is_set()
    capture.close()
    elapsed = time.monotonic() - started
    output, cut = capture.text()
    if not cut:
        artifact.unlink(missing_ok=True)
    notes = _update_cwd(context, cwd_file, cwd, root)
    notes += sandbox.take_back(missing, Path(context.artifacts_dir) / "taken-back" / token, root)
    keep = Path(context.artifacts_dir) / "taken-back" / token
    notes += sandbox.take_back_relinked(entries, keep, root)
    if strays:
        notes.append(
            f"({strays} background process(es) it left were stopped: nothing outlives a "
            "command; run servers within one command, e.g. `srv & sleep 1; curl ...`)"
        )
    code = proc.returncode if proc.returncode is not None else -1
    metadata: dict[str, Any] = {"exit_code": code, "resources": [f"command:{command.strip()}"]}
    if cut:
        metadata["artifact"] = str(artifact)
    text = output.rstrip("\n") if output.strip() else "(no output)"
    if interrupted:
        metadata["exit_code"] = 130
        metadata["interrupted"] = True
        text += (
            "\nInterrupted by the user (Ctrl-C, or a signal to mycode): the command was "
            "interrupted before it finished and its whole process tree killed."
        )
    elif timed_out:
        metadata["exit_code"] = 124
        metadata["timed_out"] = True
        text += (
            f"\nCommand timed out after {timeout:g} s and was stopped (its whole process group "
            "was killed). Nothing a command starts outlives it, so start a server and use it in "
            "the same command (e.g. `srv > srv.log 2>&1 & sleep 1; curl ...`), or pass a larger "
            "timeout (max 600)."
        )
    else:
        text += f"\nexit code: {code}" if code >= 0 else f"\nkilled by signal {-code}"
    text += "".join(f"\n{note}" for note in notes)
    metadata["duration_s"] = round(elapsed, 3)
    metadata["sandboxed"] = isolated
    return ToolResult(content=text, is_error=timed_out or code != 0, metadata=metadata)


def _update_cwd(context: Any, cwd_file: Path, before: Path, root: Path) -> list[str]:
    try:  # the command may have swapped its file for a link to a secret, or a FIFO
        with safeopen.open_regular(cwd_file) as handle:
            raw = handle.read(8192).decode("utf-8", "replace").strip()
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
