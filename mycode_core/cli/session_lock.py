"""One writer per session: a run holds an ``flock`` on ``MYCODE_HOME/locks/<id>.lock`` while it
writes a session's transcript, so a second ``--resume``/``--continue`` (or ``/resume``) of a
session another live mycode is writing stops with one line instead of interleaving two
histories. The kernel releases the lock when the process ends however it ends (``kill -9``
included), so it never outlives its run; the small lock files stay (empty of meaning once
unlocked)."""

from __future__ import annotations

import os
from pathlib import Path

_held: dict[str, int] = {}
"""The sessions this process holds, with the descriptor of each lock."""


def claim_session(home: Path, session_id: str) -> bool:
    """Hold ``session_id`` for this process; ``False`` when another live process holds it (a
    system without ``flock`` has no lock: always ``True``)."""
    try:
        import fcntl
    except ImportError:  # Windows: no lock
        return True
    if session_id in _held:
        return True
    folder = home / "locks"
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"{session_id}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return False
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode())  # who holds it, for the other's message
    _held[session_id] = fd
    return True


def release_session(session_id: str) -> None:
    """Let go of a session this process held (``/clear``, ``/resume`` of another)."""
    fd = _held.pop(session_id, None)
    if fd is not None:
        os.close(fd)


def busy_line(home: Path, session_id: str) -> str:
    """Why ``session_id`` cannot be written now, naming the process that writes it."""
    try:
        pid = (home / "locks" / f"{session_id}.lock").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        pid = ""
    holder = f" (pid {pid})" if pid.isdigit() else ""
    return (
        f"session {session_id} is in use by another mycode process{holder}; wait for it to "
        "end, or start a new session"
    )
