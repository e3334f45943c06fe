"""The ``mycode`` console script: :func:`~mycode_core.cli.main.main`, then an instant exit.

By the time ``main`` returns or raises ``SystemExit`` the run is over: the ``result`` event is
written and flushed, the transcript fsynced and closed, observers drained, MCP servers and
commands' children reaped (all inside the run). What is left is interpreter teardown —
hundreds of milliseconds of freeing modules — which nobody waits for: after the ``atexit``
handlers and a flush of stdout/stderr the process leaves with ``os._exit`` and the right code.

Only the console script (and ``python -m mycode_core``) exits this way; ``main`` itself, as
tests call it in-process, returns or raises as before.
"""

from __future__ import annotations

import atexit
import os
import sys
from collections.abc import Callable

BEFORE_EXIT: list[Callable[[], object]] = []
"""Last calls before the process leaves (after ``main`` returned), e.g. draining observers
that outlive a run; each failure is ignored."""


def _code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)  # what ``sys.exit("text")`` prints
    return 1


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def leave(code: int) -> None:
    """Drain observers, run the last calls and ``atexit`` handlers, flush, and leave without
    teardown."""
    from mycode_core.observers import drain_observers

    try:
        drain_observers()  # every observer gets every event before exit (SPEC §7)
    except Exception:  # noqa: BLE001,S110 - leaving anyway
        pass
    for call in BEFORE_EXIT:
        try:
            call()
        except Exception:  # noqa: BLE001,S110 - leaving anyway
            pass
    try:
        atexit._run_exitfuncs()
    except Exception:  # noqa: BLE001,S110 - a failing handler must not keep the process
        pass
    _flush()
    os._exit(code)


def console_main() -> None:
    """Entry point of the ``mycode`` script."""
    from mycode_core.cli.main import main

    try:
        main()
    except SystemExit as exc:
        leave(_code(exc.code))
    leave(0)
