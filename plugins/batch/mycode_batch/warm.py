"""Warm starts: each task's ``mycode -p`` forked from a server that has mycode loaded already.

Starting ``mycode -p`` costs a good part of a second of CPU before the first request
(importing click, pydantic and its models, the runtime and the plugins). A batch pays
that once per task, and on a small machine that CPU is what caps the speed-up of more workers.
Here a :mod:`multiprocessing` fork server imports all of it once (:mod:`mycode_batch.preload`);
each task is then a fresh process forked from it that runs the ``mycode`` command line with the
task's own arguments, folder, environment and files — its own session, plugin manager and
config, as in a cold start — in a session of its own so the batch can kill its whole tree.

``MYCODE_BATCH_WARM=0`` turns it off (every task then execs ``python -m mycode_core``).
"""

from __future__ import annotations

import atexit
import ctypes
import multiprocessing
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

_lock = threading.Lock()
_context: Any = None

try:  # children die with the process that started them (Linux)
    _PRCTL: Any = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):
    _PRCTL = None


def die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent dies (``PR_SET_PDEATHSIG``)."""
    if _PRCTL is not None:
        _PRCTL(1, 9)


def enabled(python: str | None) -> bool:
    """Whether tasks run from the warm server (same interpreter, Linux, not turned off)."""
    if os.environ.get("MYCODE_BATCH_WARM", "1").strip().lower() in ("0", "false", "no", "off"):
        return False
    if python and os.path.realpath(python) != os.path.realpath(sys.executable):
        return False
    return "forkserver" in multiprocessing.get_all_start_methods()


def _fork_context() -> Any:
    global _context
    with _lock:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(["mycode_batch.preload"])
            _context = context
        return _context


class WarmRun:
    """A started task process, with the part of :class:`subprocess.Popen` the worker uses."""

    def __init__(self, process: Any) -> None:
        self._process = process
        self.pid: int = process.pid

    @property
    def returncode(self) -> int | None:
        """The exit code (negative: the signal that killed it), ``None`` while it runs."""
        code = self._process.exitcode
        return None if code is None else int(code)

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the process; :class:`subprocess.TimeoutExpired` if it still runs."""
        self._process.join(timeout)
        code = self.returncode
        if code is None:
            raise subprocess.TimeoutExpired("mycode -p", timeout or 0.0)
        return code


def start(
    args: list[str], cwd: Path, env: dict[str, str], stdin: Path, stdout: Path, stderr: Path
) -> WarmRun:
    """Run ``mycode ARGS`` in a process forked from the warm server.

    ``stdin`` is read as its standard input; ``stdout`` is written, ``stderr`` appended to.
    """
    process = _fork_context().Process(
        target=_child_main,
        args=(list(args), str(cwd), dict(env), str(stdin), str(stdout), str(stderr)),
        daemon=False,
    )
    process.start()
    return WarmRun(process)


def _child_main(
    args: list[str], cwd: str, env: dict[str, str], stdin: str, stdout: str, stderr: str
) -> None:
    """In the forked process: become the task's ``mycode`` run, then exit with its code."""
    os.setsid()
    die_with_parent()
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    _redirect(0, stdin, os.O_RDONLY)
    _redirect(1, stdout, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    _redirect(2, stderr, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    encoding = env.get("PYTHONIOENCODING", "utf-8").split(":")[0] or "utf-8"
    streams = {
        "stdin": open(0, encoding=encoding, closefd=False),  # noqa: SIM115
        "stdout": open(1, "w", encoding=encoding, closefd=False),  # noqa: SIM115
        "stderr": open(  # noqa: SIM115
            2, "w", encoding=encoding, errors="backslashreplace", closefd=False, buffering=1
        ),
    }
    for name, stream in streams.items():
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    sys.argv = ["mycode", *args]
    code = 1
    try:
        from mycode_core.api import main

        main(args)
        code = 0
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # noqa: BLE001 - as the interpreter would: a traceback, exit 1
        import traceback

        traceback.print_exc()
    finally:
        _end_like_the_interpreter()
    os._exit(code)


def _redirect(fd: int, path: str, flags: int) -> None:
    opened = os.open(path, flags, 0o644)
    os.dup2(opened, fd)
    os.close(opened)


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _end_like_the_interpreter() -> None:
    """What a normal exit does before the process goes: wait for non-daemon threads, run the
    ``atexit`` handlers (the MCP bridge stops its servers there), flush the streams."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
