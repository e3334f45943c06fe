"""Errors every layer shares, and telling a plugin's own ``KeyboardInterrupt`` from a real Ctrl-C
(a base module: it imports nothing of mycode, so every layer can use it)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from types import FrameType


class SetupError(Exception):
    """A run cannot start (no model, unknown provider, bad script); exit code 2."""


class ToolDefinitionError(ValueError):
    """A ``@tool`` cannot be built (a bad name, schema or option); ``where`` is the
    ``file:line`` of the decorated function, so the error points into the plugin."""

    def __init__(self, message: str, where: str = "") -> None:
        super().__init__(f"{message} (at {where})" if where else message)
        self.where = where


def error_line(exc: BaseException, typed: bool = True) -> str:
    """An exception as one readable line: ``Type: message`` (pydantic: the first error);
    without ``typed``, the message alone."""
    errors = getattr(exc, "errors", None)
    text = ""
    if callable(errors):
        with suppress(IndexError, TypeError, AttributeError, KeyError):
            first = errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            text = str(first.get("msg", "")).removeprefix("Value error, ")
            text = f"{where}: {text}" if where and text else text
    if not text:
        text = "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())
    if text and not typed:
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class _CtrlC:
    watching = False
    seen = False


@contextmanager
def watching_ctrl_c() -> Iterator[None]:
    """While plugins import: a real Ctrl-C is recorded (and raised as Python does), so that
    :func:`raised_by_plugin` can tell it from a ``KeyboardInterrupt`` a plugin raises itself."""
    on_main = threading.current_thread() is threading.main_thread()
    if not on_main or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return

    def handle(signum: int, frame: FrameType | None) -> None:
        _CtrlC.seen = True
        signal.default_int_handler(signum, frame)

    _CtrlC.watching, _CtrlC.seen = True, False
    signal.signal(signal.SIGINT, handle)
    try:
        yield
    finally:
        if signal.getsignal(signal.SIGINT) is handle:  # a plugin may have set its own
            signal.signal(signal.SIGINT, signal.default_int_handler)
        _CtrlC.watching = False


def raised_by_plugin(exc: BaseException) -> bool:
    """Whether ``exc``, caught while a plugin imports, is the plugin's failure (a load error):
    anything but a real Ctrl-C, which :func:`watching_ctrl_c` records."""
    if not isinstance(exc, KeyboardInterrupt):
        return True
    if _CtrlC.watching or threading.current_thread() is not threading.main_thread():
        return not _CtrlC.seen
    return signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # e.g. ignored
