"""Transports to an MCP server (stdio, streamable HTTP, SSE) and reading their failures.

Imports ``mcp``: loaded only on the background thread, when servers are configured.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
import mcp_types as types
from mcp import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from mycode_mcp_bridge.config import ServerSpec

PASSED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
"""Variables passed to stdio servers besides the SDK's safe defaults (HOME, PATH, ...)."""


def describe_error(exc: BaseException, spec: ServerSpec) -> str:
    """A short, readable reason for a start-up or transport failure (expanded ``${VAR}``
    values written back as ``${VAR}``)."""
    return spec.redact(_describe_error(exc, spec))


def _describe_error(exc: BaseException, spec: ServerSpec) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError) or (
        isinstance(exc, OSError) and exc.errno == errno.ENOENT
    ):
        return f"command not found: {spec.command!r}"
    if isinstance(exc, PermissionError):
        return f"command is not executable: {spec.command!r}"
    if isinstance(exc, MCPError):
        if exc.code == types.CONNECTION_CLOSED:
            if spec.transport == "stdio":
                return "the server process exited before completing the MCP handshake"
            return "the connection closed before completing the MCP handshake"
        return f"MCP error {exc.code}: {exc.message}"
    text = str(exc).strip() or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


class WatchedStream:
    """Wraps a transport's read stream to learn when the server went away (end of stream)."""

    def __init__(self, inner: Any, on_eof: Callable[[], None]) -> None:
        self._inner = inner
        self._on_eof = on_eof

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self._on_eof()
            raise

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self._inner.__anext__()
        except (StopAsyncIteration, anyio.ClosedResourceError):
            self._on_eof()
            raise

    async def __aenter__(self) -> WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


@contextlib.asynccontextmanager
async def _http_transport(spec: ServerSpec) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(headers=spec.headers, timeout=httpx2.Timeout(30.0, read=300.0))
    async with client:
        async with streamable_http_client(spec.url, http_client=client) as streams:
            yield streams


def open_transport(
    spec: ServerSpec, workspace: Path, log: IO[str]
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The transport for ``spec``: a stdio process (stderr to ``log``, cwd the workspace by
    default) or an HTTP/SSE connection with the configured headers."""
    if spec.transport == "stdio":
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env.update(spec.env)
        cwd = Path(spec.cwd).expanduser() if spec.cwd else workspace
        if not cwd.is_absolute():
            cwd = workspace / cwd
        params = StdioServerParameters(
            command=spec.command, args=list(spec.args), env=env, cwd=str(cwd)
        )
        return stdio_client(params, errlog=cast(TextIO, log))
    if spec.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(spec.url, headers=spec.headers)
    return _http_transport(spec)
