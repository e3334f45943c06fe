"""A server's log file (``$MYCODE_HOME/logs/mcp/<server>.log``): its stderr, its MCP log
messages, the MCP SDK's log records about it, and the tail of it shown when it fails.

Imports neither ``mcp`` nor anything heavy.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import time
from pathlib import Path
from typing import IO, Any

MAX_LOG_BYTES = 2_000_000
"""A server's log is rotated (one old copy kept) when it grows past this."""


def open_log(path: Path, name: str, target: str) -> IO[str]:
    """Open (append) a server's log, rotated when too big, with a line marking this start."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if path.stat().st_size > MAX_LOG_BYTES:
            path.replace(path.with_name(path.name + ".1"))
    except OSError:
        pass
    log = open(path, "a", encoding="utf-8", errors="replace")  # noqa: SIM115
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    log.write(f"--- mycode: starting {name!r} ({target}) at {stamp} ---\n")
    log.flush()
    return log


def read_tail(path: Path, offset: int, max_lines: int) -> str:
    """The last lines of a log from ``offset`` on (this start's), without mycode's markers."""
    try:
        with open(path, "rb") as fh:
            fh.seek(offset)
            data = fh.read()[-20_000:]
    except OSError:
        return ""
    lines = [line for line in data.decode("utf-8", "replace").splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith("--- mycode: ")]
    return "\n".join(lines[-max_lines:])


def write_server_log(log: IO[str] | None, params: Any) -> None:
    """A server's ``notifications/message`` as one line of its log (``[server LEVEL] ...``)."""
    if log is None or log.closed:
        return
    data = params.data if isinstance(params.data, str) else json.dumps(params.data, default=str)
    where = f"{params.logger}: " if params.logger else ""
    with contextlib.suppress(OSError, ValueError):
        log.write(f"[server {params.level}] {where}{' '.join(data.split())[:2000]}\n")
        log.flush()


def write_line(log: IO[str] | None, line: str) -> None:
    """One line of mycode's own in a server's log (what it did about the server)."""
    if log is None or log.closed:
        return
    with contextlib.suppress(OSError, ValueError):
        log.write(" ".join(line.split())[:2000] + "\n")
        log.flush()


SERVER_LOG: contextvars.ContextVar[IO[str] | None] = contextvars.ContextVar(
    "mycode_mcp_server_log", default=None
)
"""The log file of the server whose task is running (set by its supervisor and its calls)."""


class _ServerLogHandler(logging.Handler):
    """Writes the SDK's log records (a line on stdout that is not JSON-RPC, a broken SSE
    stream) to the log of the server they are about, one line each: never to the terminal."""

    def emit(self, record: logging.LogRecord) -> None:
        log = SERVER_LOG.get()
        if log is None or log.closed:
            return
        try:
            text = record.getMessage()
            if record.exc_info and record.exc_info[1] is not None:
                text += f": {one_line(record.exc_info[1])}"
            parse = "Failed to parse JSONRPC message from server"
            if text.startswith(parse):  # the SDK's words for what the server printed
                text = "a line on stdout that is not JSON-RPC" + text[len(parse) :]
            line = " ".join(text.split())[:1000]
            log.write(f"[mcp sdk {record.levelname.lower()}] {line}\n")
            log.flush()
        except Exception:  # noqa: BLE001 - logging must never break a session
            pass


class _SdkRecords(logging.Filter):
    """On a logger the SDK shares with others by name: its own records go to the server's log
    (and no further), anyone else's pass on as usual."""

    def __init__(self, handler: logging.Handler) -> None:
        super().__init__()
        self.handler = handler

    def filter(self, record: logging.LogRecord) -> bool:
        if not _from_sdk(record.pathname):
            return True
        self.handler.handle(record)
        return False


def _from_sdk(pathname: str) -> bool:
    parts = Path(pathname).parts
    return "mcp" in parts[-3:-1]  # .../mcp/client/session.py, .../mcp/session.py


SDK_LOGGERS = ("client",)
"""Loggers of the SDK outside ``mcp``: ``mcp.client.session`` logs as ``client`` (e.g. "Tool X
not listed by server, cannot validate any structured content", a call made just after a
restart), which Python would print on the terminal."""


def route_sdk_logs() -> None:
    """Send the ``mcp`` package's log records to the servers' logs (once per process);
    Python would otherwise print its warnings, with tracebacks, on the user's terminal."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(h, _ServerLogHandler) for h in logger.handlers):
        handler = _ServerLogHandler()
        logger.addHandler(handler)
        logger.propagate = False
        for name in SDK_LOGGERS:
            logging.getLogger(name).addFilter(_SdkRecords(handler))


def one_line(exc: BaseException) -> str:
    """An exception as one line: pydantic's first error with the input it refused (not its
    whole report), else the first line of the message (not httpx's documentation link)."""
    errors = getattr(exc, "errors", None)
    if callable(errors):
        with contextlib.suppress(Exception):
            first = errors()[0]
            text = f"{first['msg']} (input: {first.get('input')!r:.200})"
            return " ".join(text.split())
    lines = str(exc).strip().splitlines()
    return lines[0].strip() if lines else type(exc).__name__
