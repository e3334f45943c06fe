"""The keyboard while an interactive turn runs: Esc cancels the turn (as Ctrl-C does), and
what the user types meanwhile waits for the next prompt instead of being echoed over the live
view.

While the turn runs the terminal is put in non-canonical mode without echo (signals stay on,
so Ctrl-C still arrives as SIGINT) and a watcher thread reads the keys. A lone Esc cancels;
an escape sequence (an arrow key, a terminal's reply) is dropped; other keys are kept
(Backspace and Ctrl-U edit them), the live view shows them after the spinner's words
(:func:`queued_note`), and :attr:`TurnKeys.typed` hands them to the next prompt.
A question asked during the turn takes the terminal back with :meth:`TurnKeys.paused`.
"""

from __future__ import annotations

import codecs
import os
import select
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

try:
    import termios
except ImportError:  # no POSIX terminal (Windows): keys are not watched
    termios = None  # type: ignore[assignment]

ESC = 0x1B
SEQUENCE_WAIT = 0.05
"""How long the rest of an escape sequence may take to follow its Esc byte (seconds)."""
ERASE = (0x7F, 0x08)
KILL_LINE = 0x15


class TurnKeys:
    """A ``with`` block for one turn: Esc calls ``cancel``; other keys are kept."""

    def __init__(
        self,
        cancel: Callable[[], None],
        fd: int | None = None,
        on_typed: Callable[[str], None] | None = None,
    ) -> None:
        """``cancel`` stops the running turn; ``fd`` is the terminal (default: stdin);
        ``on_typed`` is told :attr:`typed` each time it changes (on the watcher's thread)."""
        self.cancel = cancel
        self.fd = sys.stdin.fileno() if fd is None else fd
        self.on_typed = on_typed
        self.typed = ""
        """What was typed during the turn (Enter as ``"\\n"``), for the next prompt."""
        self.escaped = False
        """Whether Esc cancelled the turn."""
        self._saved: list[Any] | None = None
        self._cond = threading.Condition()
        self._paused = False
        self._stopped = False
        self._reading = False
        self._wake_r = self._wake_w = -1
        self._thread: threading.Thread | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def __enter__(self) -> TurnKeys:
        try:
            if termios is None or not os.isatty(self.fd):
                return self
            self._saved = termios.tcgetattr(self.fd)
            self._quiet()
        except (OSError, termios.error):
            self._saved = None
            return self
        self._wake_r, self._wake_w = os.pipe()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="mycode-keys")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is None:
            return
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        os.write(self._wake_w, b"!")
        self._thread.join()
        self._restore()
        for fd in (self._wake_r, self._wake_w):
            os.close(fd)
        self._thread = None

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Give the terminal back as it was (a question reads it) for the block."""
        if self._thread is None:
            yield
            return
        with self._cond:
            self._paused = True
            os.write(self._wake_w, b"!")
            while self._reading:
                self._cond.wait()
        self._restore()
        try:
            yield
        finally:
            self._quiet()
            with self._cond:
                self._paused = False
                self._cond.notify_all()

    def _quiet(self) -> None:
        """Keys one at a time, not echoed; Ctrl-C still a signal."""
        if self._saved is None:
            return
        attrs = termios.tcgetattr(self.fd)
        attrs[3] &= ~(termios.ICANON | termios.ECHO)
        attrs[6][termios.VMIN] = 1
        attrs[6][termios.VTIME] = 0
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)

    def _restore(self) -> None:
        if self._saved is not None:
            try:
                termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)
            except (OSError, termios.error):
                pass  # the terminal is gone

    def _watch(self) -> None:
        while True:
            with self._cond:
                while self._paused and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
                self._reading = True
            try:
                ready, _, _ = select.select([self.fd, self._wake_r], [], [])
                if self._wake_r in ready:
                    os.read(self._wake_r, 64)  # a pause or the end: look again
                elif self.fd in ready:
                    data = os.read(self.fd, 1024)
                    if not data:
                        return  # the terminal closed
                    self._feed(data)
            except OSError:
                return
            finally:
                with self._cond:
                    self._reading = False
                    self._cond.notify_all()

    def _more(self) -> bytes:
        """The rest of an escape sequence, if it follows at once."""
        ready, _, _ = select.select([self.fd], [], [], SEQUENCE_WAIT)
        return os.read(self.fd, 1024) if ready else b""

    def _feed(self, data: bytes) -> None:
        before = self.typed
        try:
            self._keys(data)
        finally:
            if self.typed != before and self.on_typed is not None:
                self.on_typed(self.typed)

    def _keys(self, data: bytes) -> None:
        index = 0
        while index < len(data):
            byte = data[index]
            if byte == ESC:
                if index + 1 == len(data):
                    data += self._more()
                if index + 1 == len(data):  # a lone Esc: stop the turn
                    self.escaped = True
                    self.cancel()
                    return
                index = _after_sequence(data, index)
                continue
            index += 1
            if byte in ERASE:
                self.typed = self.typed[:-1]
            elif byte == KILL_LINE:
                self.typed = ""
            elif byte == 0x0D or byte == 0x0A:
                self.typed += "\n"
            elif byte >= 0x20 or byte == 0x09:
                self.typed += self._decoder.decode(bytes([byte]))


def queued_note(typed: str, room: int = 60) -> str:
    """What the spinner adds for keys typed during a turn: `` · queued: fix the tests`` (the
    lines ended with Enter, sent when the turn ends), `` · typing: half a li…`` (the rest)."""
    *lines, rest = typed.split("\n")
    lines = [line.strip() for line in lines if line.strip()]

    def short(text: str) -> str:
        return text if len(text) <= room else text[: room - 1] + "…"

    note = f" · queued: {short(' ⏎ '.join(lines))}" if lines else ""
    return note + (f" · typing: {short(rest.strip())}" if rest.strip() else "")


def held_note(typed: str) -> None:
    """After a cancelled turn, on a dumb terminal (its prompt shows nothing it holds): what
    was typed during the turn, not sent, waiting in the prompt."""
    from prompt_toolkit.utils import is_dumb_terminal

    if is_dumb_terminal():
        import click

        shown = " ⏎ ".join(line for line in typed.strip("\n").split("\n"))
        click.echo(
            f"(not sent, the turn was cancelled; in the prompt: {shown} — Enter sends it,"
            " Ctrl-U clears it)",
            err=True,
        )


def _after_sequence(data: bytes, start: int) -> int:
    """The index just past the escape sequence at ``data[start]`` (CSI/SS3 up to its final
    byte; else Esc and one key, as Alt+key sends)."""
    index = start + 1
    if data[index] not in b"[O":
        return index + 1
    index += 1
    while index < len(data) and not 0x40 <= data[index] <= 0x7E:
        index += 1
    return index + 1
