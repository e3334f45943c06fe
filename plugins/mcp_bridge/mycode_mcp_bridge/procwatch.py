"""Noticing at once that a stdio server's own process died.

The session learns that a server went away from the end of its stdout. A server that dies
while a process it started still holds that pipe open never gets there, and its pending
calls would wait for their timeout. So the server's process is watched too (its pid comes
from :func:`mycode_mcp_bridge.transports.server_group`): on Linux through a pidfd, which costs
nothing until the process exits; where there is none (a kernel before 5.3, a sandbox that
refuses the call), by a check every :data:`POLL_INTERVAL` s, only while a call is pending.
Without ``/proc`` there is no pid and nothing is watched.

Imports ``anyio``: loaded only on the background thread, when servers are configured.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import anyio

POLL_INTERVAL = 1.0
"""Seconds between checks of a server's process when no pidfd can be had."""


def _open_pidfd(pid: int) -> int | None:
    """A pidfd for ``pid``; ``-1`` if that process is already gone, ``None`` if unsupported."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except ProcessLookupError:
        return -1
    except OSError:
        return None
    return fd


def has_exited(pid: int) -> bool:
    """Whether our child ``pid`` has exited, without reaping it (the SDK's event loop does)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True  # already reaped
    except (OSError, AttributeError):
        return False


class ExitWatch:
    """Waits for one server process to exit; see the module docstring."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._pidfd = _open_pidfd(pid)
        self._calls = 0
        self._calling = anyio.Event()

    @contextlib.contextmanager
    def call_pending(self) -> Iterator[None]:
        """Mark a call as pending for the ``with`` block (the poll runs only then)."""
        self._calls += 1
        self._calling.set()
        try:
            yield
        finally:
            self._calls -= 1
            if self._calls == 0:
                self._calling = anyio.Event()

    async def exited(self) -> None:
        """Return once the process has exited."""
        if self._pidfd == -1:
            return
        if self._pidfd is not None:
            await anyio.wait_readable(self._pidfd)
            return
        while True:
            await self._calling.wait()
            await anyio.sleep(POLL_INTERVAL)
            if has_exited(self.pid):
                return

    def close(self) -> None:
        """Release the pidfd (after :meth:`exited` is no longer awaited)."""
        fd, self._pidfd = self._pidfd, None
        if fd is not None and fd >= 0:
            os.close(fd)
