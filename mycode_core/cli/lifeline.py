"""What mycode starts dies with it, even when mycode itself is killed with SIGKILL.

A run stops what it started when it ends, on Ctrl-C, SIGTERM and SIGHUP. A process killed
with SIGKILL (the OOM killer, ``kill -9``, a batch worker lost) runs no code at all, so a
process group of its own that it started (an unsandboxed command, an MCP or language server,
a hook) would live on. The lifeline is a tiny watcher process, started with the first group it
is given, in a session of its own and holding nothing of mycode's but the read end of a pipe:
:func:`watch_group` and :func:`unwatch_group` tell it which process groups (and which
``NAME=VALUE`` environment markers) are mycode's right now. When the pipe ends — mycode is
gone, however it went — it SIGKILLs those groups and every process carrying a marker (Linux
``/proc``; a process that left its group and cleared its environment is out of its reach).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

_WATCHER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN); signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups, marks = set(), set()
for line in sys.stdin.buffer:
    op, _, what = line.strip().partition(b" ")
    kept = groups if op in (b"+g", b"-g") else marks
    (kept.add if op[:1] == b"+" else kept.discard)(what)
for group in groups:
    try: os.killpg(int(group), signal.SIGKILL)
    except OSError: pass
for pid in [p for p in os.listdir("/proc") if p.isdigit()] if marks else []:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            if marks & set(fh.read().split(b"\\0")): os.kill(int(pid), signal.SIGKILL)
    except OSError: pass
"""
_lock = threading.Lock()
_watcher: subprocess.Popen[bytes] | None = None
_held: set[str] = set()


def _send(line: str) -> None:
    global _watcher
    with _lock:
        (_held.add if line[0] == "+" else _held.discard)(line[1:])
        if _watcher is None and not _held:
            return
        for _attempt in range(2):
            if _watcher is None or _watcher.poll() is not None:
                with contextlib.suppress(OSError):
                    _watcher = subprocess.Popen(  # noqa: S603 - our own interpreter
                        [sys.executable, "-I", "-S", "-c", _WATCHER], stdin=subprocess.PIPE,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                        start_new_session=True,
                    )  # fmt: skip
                lines = [f"+{held}\n" for held in sorted(_held)]
            else:
                lines = [line + "\n"]
            try:
                assert _watcher is not None and _watcher.stdin is not None
                _watcher.stdin.write("".join(lines).encode())
                _watcher.stdin.flush()
                return
            except (AssertionError, OSError, ValueError):
                _watcher = None


def watch_group(pgid: int | None = None, marker: str | None = None) -> None:
    """Have process group ``pgid`` and the processes whose environment holds ``marker``
    (``NAME=VALUE``) SIGKILLed should mycode die before :func:`unwatch_group` says so."""
    for line in ([f"+g {pgid}"] if pgid else []) + ([f"+m {marker}"] if marker else []):
        _send(line)


def unwatch_group(pgid: int | None = None, marker: str | None = None) -> None:
    """Stop watching ``pgid`` and ``marker`` (their processes have been dealt with)."""
    for line in ([f"-g {pgid}"] if pgid else []) + ([f"-m {marker}"] if marker else []):
        _send(line)
