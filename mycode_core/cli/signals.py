"""SIGTERM and SIGHUP end a run the way Ctrl-C does, with exit code 128 + the signal.

The first signal cancels the running turn: the tool in flight stops its process tree and
reports that it was cut, the loop writes the ``result`` event (``stop_reason = "interrupted"``)
and the process exits 143 (SIGTERM) or 129 (SIGHUP). Should the turn not wind down within
``GRACE`` seconds, or a second signal arrive, the process exits at once with the same code.
In an interactive session the handler waits for the turn to end and then leaves the session.

A ``mycode -p`` run handles Ctrl-C (SIGINT, exit 130) here too: a handler that only asks the
turn to stop can never cut the main thread mid-write or mid-wait, which a
``KeyboardInterrupt`` raised at an arbitrary line can. The interactive session does the same
during a turn (:class:`CtrlCCancelsTurn`) and keeps ``KeyboardInterrupt`` for its prompts,
which read it as "deny" or "leave". A signal that was ignored when mycode
started (``nohup`` ignores SIGHUP; a non-interactive shell's ``cmd &`` ignores SIGINT) stays
ignored.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, NoReturn

INTERRUPTED = 130
"""The exit code of a run stopped by Ctrl-C (SPEC §2)."""

GRACE = 20.0
SIGNALS = ("SIGTERM", "SIGHUP")
WITH_CTRL_C = ("SIGINT", *SIGNALS)


class SignalGuard:
    """Installs the handlers for the duration of a ``with`` block."""

    def __init__(
        self,
        cancel: Callable[[], None],
        *,
        wait: Callable[[float], None] | None = None,
        signals: tuple[str, ...] = SIGNALS,
        asking: Callable[[], bool] = lambda: False,
        showing: Callable[[], bool] = lambda: False,
    ) -> None:
        """``cancel`` stops the running turn; with ``wait`` (interactive sessions, whose loop
        would otherwise go on) the handler waits for the turn to end, then exits. ``signals``
        names the signals handled (:data:`WITH_CTRL_C` adds SIGINT). While ``asking()`` (a
        question on this thread, which the turn waits for) the handler leaves at once: the
        question ends unanswered (denied) and the block's end waits for the turn instead.
        While ``showing()`` (a turn drawn on this thread) the handler only cancels: an exit
        raised mid-drawing would leave the terminal library half-way (a traceback instead of
        the exit code); the session leaves once the turn has drained (:attr:`received`), or
        the process after ``GRACE`` seconds."""
        self.cancel = cancel
        self.wait = wait
        self.asking = asking
        self.showing = showing
        self._deadline: threading.Timer | None = None
        self.signals = signals
        self.received: int | None = None
        self._previous: dict[int, Any] = {}
        self._wake_r = -1
        self._wake_w: int | None = None

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is not threading.main_thread():
            return self
        if self.wait is None:
            # the handler only writes a byte; this thread does the rest, so the handler never
            # takes a lock the interrupted main thread might be holding
            self._wake_r, self._wake_w = os.pipe()
            threading.Thread(target=self._stop_on_wake, daemon=True, name="mycode-signals").start()
        for name in self.signals:
            number = getattr(signal, name, None)
            # a signal ignored when we started stays ignored (`nohup`, a script's `cmd &`)
            if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
                self._previous[number] = signal.signal(number, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.received is not None and self.wait is not None:
            self.wait(GRACE)  # a turn a question held up ends before the process does
        if self._deadline is not None:
            self._deadline.cancel()
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()
        if self._wake_w is not None:
            os.close(self._wake_w)  # the watcher reads end-of-file and ends
            self._wake_w = None

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is not None:
            os._exit(128 + self.received)
        self.received = signum
        if signum == getattr(signal, "SIGHUP", None):
            forget_lost_terminal()
        if self._wake_w is not None:
            os.write(self._wake_w, b"!")
            return
        self.cancel()
        if self.wait is not None:
            if self.asking():
                return _end_question(128 + signum)
            if self.showing():
                self._deadline = threading.Timer(GRACE, os._exit, args=(128 + signum,))
                self._deadline.daemon = True
                self._deadline.start()
                return
            self.wait(GRACE)
            raise SystemExit(128 + signum)

    def _stop_on_wake(self) -> None:
        read_end = self._wake_r
        try:
            if not os.read(read_end, 1) or self.received is None:
                return
        finally:
            os.close(read_end)
        self.cancel()
        timer = threading.Timer(GRACE, os._exit, args=(128 + self.received,))
        timer.daemon = True
        timer.start()

    def exit_code(self, code: int) -> int:
        """``code``, or 128 + the signal when one ended the run."""
        return code if self.received is None else 128 + self.received


class CtrlCCancelsTurn:
    """Ctrl-C during an interactive turn cancels it, from a watcher thread.

    Python's own handler raises ``KeyboardInterrupt`` at whatever line the main thread is on;
    inside a queue's or a lock's bookkeeping that can leave the lock held, and the session hangs
    with its spinner still turning. While ``asking()`` is true (a question is on the main
    thread) Ctrl-C stays a ``KeyboardInterrupt``, which the prompts read as "deny". Each Ctrl-C
    cancels again; the session, not the process, decides what a turn's end means.
    """

    def __init__(self, cancel: Callable[[], None], asking: Callable[[], bool]) -> None:
        """``cancel`` stops the running turn; ``asking`` tells whether a question is open."""
        self.cancel = cancel
        self.asking = asking
        self._previous: Any = None
        self._wake_w: int | None = None

    def __enter__(self) -> CtrlCCancelsTurn:
        if threading.current_thread() is not threading.main_thread():
            return self
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return self  # ignored when we started: stays ignored
        wake_r, self._wake_w = os.pipe()
        threading.Thread(
            target=self._cancel_on_wake, args=(wake_r,), daemon=True, name="mycode-ctrl-c"
        ).start()
        self._previous = signal.signal(signal.SIGINT, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._wake_w is None:
            return
        signal.signal(signal.SIGINT, self._previous)
        os.close(self._wake_w)  # the watcher reads end-of-file and ends
        self._wake_w = None

    def _handle(self, _signum: int, _frame: FrameType | None) -> None:
        if self.asking():
            raise KeyboardInterrupt
        if self._wake_w is not None:
            os.write(self._wake_w, b"!")

    def _cancel_on_wake(self, wake_r: int) -> None:
        try:
            while os.read(wake_r, 1):
                self.cancel()
        finally:
            os.close(wake_r)


def forget_lost_terminal() -> None:
    """After a hang-up: the standard streams on a terminal that is gone (closed window, dropped
    ssh) now lead to ``/dev/null``, so what still writes on the way out (the live view's and the
    prompt's clean-up) writes nowhere instead of failing with EIO — no traceback, the exit code
    stays 129. A stream redirected to a file, or a terminal still there, is left alone."""
    import termios  # SIGHUP, hence this, is POSIX only

    null = -1
    for fd in (0, 1, 2):
        try:
            termios.tcgetattr(fd)
            continue  # the terminal is still there
        except termios.error as exc:
            if exc.args[0] != errno.EIO:
                continue  # not a terminal: a file, a pipe
        if null < 0:
            null = os.open(os.devnull, os.O_RDWR)
        os.dup2(null, fd)
    if null > 2:
        os.close(null)


def _end_question(code: int) -> None:
    """End the question on screen with ``SystemExit(code)``: through its prompt_toolkit
    application's own exit when one runs (raised inside its event loop, the exception would be
    printed as unhandled), else at once."""
    from prompt_toolkit.application.current import get_app_or_none

    app = get_app_or_none()
    if app is None or not app.is_running or app.loop is None:
        raise SystemExit(code)

    def leave() -> None:
        if app.future is not None and not app.future.done():
            app.exit(exception=SystemExit(code))

    app.loop.call_soon_threadsafe(leave)


def exit_interrupted() -> NoReturn:
    """Leave after a Ctrl-C that no run was there to handle (start-up: plugins importing,
    config loading): one readable line on stderr and exit 130, never a traceback."""
    print("mycode: interrupted (Ctrl-C) while starting up", file=sys.stderr, flush=True)
    sys.exit(INTERRUPTED)


@contextmanager
def ctrl_c_exits() -> Iterator[None]:
    """A ``KeyboardInterrupt`` escaping the block ends the process with :func:`exit_interrupted`
    (click would print "Aborted!" and exit 1)."""
    try:
        yield
    except KeyboardInterrupt:
        exit_interrupted()
