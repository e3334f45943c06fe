"""Making sure no process a command starts outlives its ``run_command`` call.

Sandboxed commands live in their own pid namespace: when the command ends, bubblewrap's init
ends and the kernel kills everything left. Unsandboxed commands get a marker in their
environment (``MYCODE_CALL``) and mycode becomes a child subreaper
(``prctl(PR_SET_CHILD_SUBREAPER)``) while such a call runs, so orphans (``setsid sleep &``,
double forks) are re-parented to mycode instead of init: after the call its process group is
killed, every process still carrying the call's marker is killed, and so is every process
re-parented to mycode during the call that is neither a child mycode had before the call (MCP
servers, hooks) nor another running call's own process — a double-forked ``setsid`` daemon with
a cleared environment included. Strays are then reaped.

mycode also makes itself non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``) before the first
unsandboxed command, so other processes of the same user cannot read its
``/proc/<pid>/environ`` or ``/proc/<pid>/mem`` (root still can).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator

MARKER = "MYCODE_CALL"
PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4
KILL_GRACE = 2.0


_lock = threading.Lock()
_users = 0
_roots: set[int] = set()
"""The pids of unsandboxed calls running now (their own processes are not strays)."""


def protect_self() -> bool:
    """Make mycode non-dumpable (Linux): its ``/proc`` environ and memory become unreadable
    to other processes of the user. Children are dumpable again after they ``exec``."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def children() -> set[int]:
    """Pids of mycode's live children (its own and those re-parented to it)."""
    me = os.getpid()
    found: set[int] = set()
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if entry.isdigit() and _parent_of(int(entry)) == me:
            found.add(int(entry))
    return found


@contextlib.contextmanager
def call_scope(pid_box: list[int]) -> Iterator[set[int]]:
    """The children mycode had when a call started; the call's pid (``pid_box[0]`` once
    started) is registered as a running call for the scope's duration."""
    before = children()
    try:
        yield before
    finally:
        with _lock:
            for pid in pid_box:
                _roots.discard(pid)


def register_call(pid: int) -> None:
    """Record the pid of an unsandboxed call that has started."""
    with _lock:
        _roots.add(pid)


def _set_subreaper(on: bool) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@contextlib.contextmanager
def subreaper() -> Iterator[None]:
    """Be a child subreaper (Linux) while unsandboxed commands run, and only then, so orphans
    of anything else (hooks, MCP servers, a test runner's other children) still go to init."""
    global _users
    with _lock:
        _users += 1
        if _users == 1:
            protect_self()
            _set_subreaper(True)
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0:
                _set_subreaper(False)


def kill_group(pgid: int, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process group, then SIGKILL it if it is still there after ``grace``."""
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


def _marked(token: str) -> list[int]:
    """Pids of live processes whose environment carries ``MYCODE_CALL=token``."""
    needle = f"{MARKER}={token}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                data = fh.read()
        except OSError:
            continue
        if needle in data.split(b"\0"):
            found.append(int(entry))
    return found


def _parent_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def _reap(pids: list[int]) -> None:
    me = os.getpid()
    for pid in pids:
        if _parent_of(pid) == me:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)


def _orphans(before: set[int], pgid: int) -> list[int]:
    with _lock:
        running = set(_roots) - {pgid}
    return sorted(children() - before - running - {pgid})


def end_call(pgid: int, token: str, before: set[int] | None = None) -> int:
    """Kill what is left of a call (its group, then marked strays and, given the children
    mycode had ``before`` the call, the processes re-parented to it since); returns how many
    strays."""
    kill_group(pgid, grace=0.5)
    strays = [pid for pid in _marked(token) if pid != os.getpid()]
    for _ in range(4 if before is not None else 0):  # orphans of killed orphans come back
        extra = [pid for pid in _orphans(before or set(), pgid) if pid not in strays]
        if not extra:
            break
        for pid in extra:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and any(_parent_of(pid) == os.getpid() for pid in extra):
            _reap(extra)  # wait until they are gone, so their own orphans are re-parented
            time.sleep(0.01)
        strays += extra
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in strays:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        if sig == signal.SIGTERM and strays:
            deadline = time.monotonic() + 0.5
            while time.monotonic() < deadline and _marked(token):
                _reap(strays)
                time.sleep(0.05)
    deadline = time.monotonic() + 1.0
    while strays and time.monotonic() < deadline:
        _reap(strays)
        if not _marked(token):
            break
        time.sleep(0.05)
    _reap(strays)
    return len(strays)
