"""Helpers shared by the MCP bridge tests (imported through conftest's sys.path entry)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mycode_core.config import Settings
from mycode_core.records import RunContext, ToolResult
from mycode_core.testing.host import wait_until

HERE = Path(__file__).parent
FEATURE_SERVER = HERE / "servers" / "feature_server.py"
HTTP_SERVER = HERE / "servers" / "http_server.py"
RAW_SERVER = HERE / "servers" / "raw_server.py"
PYTHON = sys.executable
BIN = Path(sys.executable).parent


def serve_folder(folder: Path) -> contextlib.AbstractContextManager[str]:
    """A plain web server for ``folder`` on 127.0.0.1 (not an MCP server): its base URL."""
    return serve_http(functools.partial(SilentHandler, directory=str(folder)))


@contextlib.contextmanager
def serve_http(handler: Any) -> Iterator[str]:
    """A plain web server on 127.0.0.1 answering with ``handler`` (a request handler class,
    e.g. a :class:`SilentHandler` of one's own): its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class SilentHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without a log line per request."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass


def feature(*flags: str, **extra: Any) -> dict[str, Any]:
    """A ``mcpServers`` entry running the test feature server."""
    return {"command": PYTHON, "args": [str(FEATURE_SERVER), *flags], **extra}


class Run:
    """A RunContext plus the events it emitted; ``start()`` mimics the core's start-up."""

    def __init__(
        self,
        workspace: Path,
        home: Path,
        servers: dict[str, Any] | None = None,
        *,
        settings: Settings | None = None,
        interactive: bool = False,
        ask: Any = None,
    ) -> None:
        self.events: list[Any] = []
        if settings is None:
            files = [json.dumps({"mcpServers": servers})] if servers else []
            settings = Settings(mcp_config_files=files)
        self.context = RunContext(
            workspace=workspace,
            home=home,
            settings=settings,
            session_id="test",
            interactive=interactive,
            ask=ask,
            emit=self.events.append,
        )

    def start(self) -> Run:
        """Call the hook, then the startup tasks (as the core does)."""
        import mycode_mcp_bridge

        mycode_mcp_bridge.register_tools(register=lambda tool: None, context=self.context)
        for task in self.context.startup_tasks:
            task()
        return self

    def close(self) -> None:
        """Run the cleanup callables."""
        for task in self.context.cleanup:
            task()
        self.context.cleanup.clear()

    @property
    def bridge(self) -> Any:
        return self.context.session_store.get("mcp_bridge")

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> ToolResult:
        """Call a registered tool through its handler, as the core would."""
        tool = self.context.tools.get(name)
        assert tool is not None, f"{name} not registered; have {self.context.tools.names()}"
        result = tool.handler(arguments or {}, self.context)
        assert isinstance(result, ToolResult)
        return result

    def notices(self) -> list[str]:
        """Messages of the notice events so far (after flushing the emitter thread)."""
        from mycode_mcp_bridge.runtime import Emitter

        Emitter.get().flush()
        return [e.message for e in self.events if e.type == "notice"]

    def of_type(self, kind: str) -> list[Any]:
        from mycode_mcp_bridge.runtime import Emitter

        Emitter.get().flush()
        return [e for e in self.events if e.type == kind]


def free_port() -> int:
    """A TCP port that was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server(port: int, *extra: str) -> subprocess.Popen[bytes]:
    """Run the HTTP test server; returns once it accepts connections."""
    proc = subprocess.Popen(
        [PYTHON, str(HTTP_SERVER), str(port), *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    def accepting() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            return False

    if not wait_until(accepting, 20.0):
        proc.kill()
        raise RuntimeError("HTTP test server did not start")
    return proc


@contextlib.contextmanager
def http_test_server(*extra: str) -> Iterator[int]:
    """The HTTP test server on a free port for the ``with`` block; yields the port."""
    port = free_port()
    proc = start_http_server(port, *extra)
    try:
        yield port
    finally:
        proc.terminate()
        proc.wait(10)


def assert_not_imported(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``python -c CODE`` (which asserts what it must not have imported); it must pass."""
    done = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return done
