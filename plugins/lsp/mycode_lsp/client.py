"""A language server over stdio: JSON-RPC 2.0 framed by ``Content-Length`` headers.

One reader thread parses what the server writes: responses wake the request waiting for them,
notifications (``textDocument/publishDiagnostics``) go to a callback, and the few requests a
server makes of its client (``workspace/configuration``, ``client/registerCapability``,
``window/workDoneProgress/create``) are answered at once. The server runs in its own process
group, so :meth:`LspClient.close` leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from mycode_core.api import scrub_env, unwatch_group, watch_group
from mycode_lsp.specs import ServerSpec


class LspError(Exception):
    """The server could not be started, failed a request, or did not answer in time."""


class _Pending:
    __slots__ = ("done", "result", "error")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: str | None = None


CLIENT_CAPABILITIES: dict[str, Any] = {
    "general": {"positionEncodings": ["utf-16"]},
    "textDocument": {
        "synchronization": {"didSave": True, "dynamicRegistration": False},
        "definition": {"linkSupport": True},
        "implementation": {"linkSupport": True},
        "references": {},
        "hover": {"contentFormat": ["markdown", "plaintext"]},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "callHierarchy": {},
        "publishDiagnostics": {"relatedInformation": False},
    },
    "workspace": {
        "symbol": {},
        "configuration": True,
        "workspaceFolders": True,
        "didChangeConfiguration": {"dynamicRegistration": False},
    },
    "window": {"workDoneProgress": True},
}


def frame(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message as the bytes sent on the wire."""
    body = json.dumps(message, ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_message(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message from ``stream`` (``None`` at its end); headers other than
    ``Content-Length`` are read and ignored."""
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue  # stray blank line between messages
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    body = stream.read(length)
    if len(body) < length:
        return None
    data = json.loads(body.decode("utf-8"))
    return data if isinstance(data, dict) else {}


class LspClient:
    """One running language server for one workspace."""

    def __init__(
        self,
        spec: ServerSpec,
        root: Path,
        log: Path,
        on_notification: Callable[[str, Any], None],
    ) -> None:
        self.spec = spec
        self.root = root
        self.log = log
        self.on_notification = on_notification
        self.process: subprocess.Popen[bytes] | None = None
        self.capabilities: dict[str, Any] = {}
        self._pending: dict[int, _Pending] = {}
        self._next_id = 0
        self._lock = threading.Lock()
        self._closed = False
        self._gone: str | None = None
        """Why the server can no longer answer (its output ended), once it cannot."""

    # ----------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start the server and complete the ``initialize`` handshake (``LspError`` if not)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        env = {**scrub_env(os.environ), **self.spec.env}  # its own env entries are kept
        try:
            with open(self.log, "ab") as errors:
                self.process = subprocess.Popen(
                    [self.spec.command, *self.spec.args],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    cwd=str(self.spec.cwd or self.root),
                    env=env,
                    start_new_session=True,
                )
        except OSError as exc:
            raise LspError(f"cannot start {self.spec.command!r}: {exc.strerror or exc}") from None
        watch_group(self.process.pid)  # its group dies with mycode, even a SIGKILLed one
        threading.Thread(target=self._read, daemon=True, name=f"lsp-{self.spec.name}").start()
        uri = self.root.as_uri()
        result = self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "clientInfo": {"name": "mycode"},
                "rootUri": uri,
                "rootPath": str(self.root),
                "workspaceFolders": [{"uri": uri, "name": self.root.name}],
                "capabilities": CLIENT_CAPABILITIES,
                "initializationOptions": self.spec.initialization_options,
            },
            timeout=self.spec.startup_timeout,
        )
        self.capabilities = (result or {}).get("capabilities") or {}
        self.notify("initialized", {})
        if self.spec.settings is not None:
            self.notify("workspace/didChangeConfiguration", {"settings": self.spec.settings})

    def close(self, timeout: float = 3.0) -> None:
        """Ask the server to shut down; kill its whole process group if it does not."""
        if self._closed:
            return
        self._closed = True
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(LspError):
                self.request("shutdown", None, timeout=timeout)
            with contextlib.suppress(LspError):
                self.notify("exit", None)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        unwatch_group(process.pid)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
        for stream in (process.stdin, process.stdout):
            with contextlib.suppress(OSError, ValueError):
                if stream is not None:
                    stream.close()
        self._fail_pending("the language server was stopped")

    @property
    def alive(self) -> bool:
        """Whether the server can still answer (running, its output still open)."""
        running = self.process is not None and self.process.poll() is None
        return running and self._gone is None and not self._closed

    # ----------------------------------------------------------------- messages

    def _send(self, message: dict[str, Any]) -> None:
        process = self.process
        if self._gone is not None:
            raise LspError(self._gone)
        if process is None or process.stdin is None:
            raise LspError(f"the language server {self.spec.name} is not running")
        if (code := process.poll()) is not None:  # before the reader has seen its output end
            raise LspError(self._exited(code))
        data = frame({"jsonrpc": "2.0", **message})
        with self._lock:
            try:
                process.stdin.write(data)
                process.stdin.flush()
            except (OSError, ValueError) as exc:
                # a closed pipe is most often a server that is exiting: say so once it has
                if (code := self._exit_code(wait=1.0)) is not None:
                    raise LspError(self._exited(code)) from None
                raise LspError(f"the language server {self.spec.name} went away ({exc})") from None

    def _exit_code(self, wait: float) -> int | None:
        """The server's exit code, waiting up to ``wait`` seconds for it to end."""
        with contextlib.suppress(subprocess.TimeoutExpired):
            return self.process.wait(wait) if self.process is not None else None
        return None

    def _exited(self, code: int | None) -> str:
        """The line for a server that has ended (with its exit code when known)."""
        said = f"the language server {self.spec.name} exited"
        return f"{said} (exit code {code})" if code is not None else said

    def notify(self, method: str, params: Any) -> None:
        """Send a notification (no answer expected)."""
        self._send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float) -> Any:
        """Send a request and wait for its result (``LspError`` on an error or no answer)."""
        with self._lock:
            if self._gone is not None:
                raise LspError(f"{self.spec.name}: {method} failed: {self._gone}")
            self._next_id += 1
            request_id = self._next_id
            pending = self._pending[request_id] = _Pending()
        try:
            self._send({"id": request_id, "method": method, "params": params})
            if not pending.done.wait(timeout):
                with contextlib.suppress(LspError):
                    self.notify("$/cancelRequest", {"id": request_id})
                raise LspError(f"{self.spec.name} did not answer {method} in {timeout:g} s")
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise LspError(f"{self.spec.name}: {method} failed: {pending.error}")
        return pending.result

    def _read(self) -> None:
        stdout = self.process.stdout if self.process is not None else None
        while stdout is not None:
            try:
                message = read_message(stdout)
            except (OSError, ValueError):
                message = None
            if message is None:
                break
            try:
                self._dispatch(message)
            except Exception:  # noqa: BLE001, S112 - one odd message must not stop the reader
                continue
        gone = self._exited(self._exit_code(wait=1.0))
        with self._lock:  # a request sent from now on fails at once instead of waiting
            self._gone = gone
        self._fail_pending(self._gone)

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is None:  # a response
            pending = self._pending.get(message.get("id"))  # type: ignore[arg-type]
            if pending is not None:
                error = message.get("error")
                if error is not None:
                    pending.error = str(error.get("message") if isinstance(error, dict) else error)
                pending.result = message.get("result")
                pending.done.set()
        elif "id" in message:  # the server asks something of us
            self._answer(message["id"], str(method), message.get("params"))
        else:
            self.on_notification(str(method), message.get("params"))

    def _answer(self, request_id: Any, method: str, params: Any) -> None:
        if method == "workspace/configuration":
            items = (params or {}).get("items") or []
            settings = self.spec.settings
            result: Any = [_section(settings, item.get("section")) for item in items]
        elif method in (
            "client/registerCapability",
            "client/unregisterCapability",
            "window/workDoneProgress/create",
            "window/showMessageRequest",
        ):
            result = None
        elif method == "workspace/workspaceFolders":
            result = [{"uri": self.root.as_uri(), "name": self.root.name}]
        else:
            self._send({"id": request_id, "error": {"code": -32601, "message": "not supported"}})
            return
        with contextlib.suppress(LspError):
            self._send({"id": request_id, "result": result})

    def _fail_pending(self, reason: str) -> None:
        for pending in list(self._pending.values()):
            pending.error = reason
            pending.done.set()


def _section(settings: Any, section: Any) -> Any:
    """The part of ``settings`` a ``workspace/configuration`` item names (dotted path)."""
    if not isinstance(settings, dict) or not section:
        return settings if isinstance(settings, dict) else None
    value: Any = settings
    for part in str(section).split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value
