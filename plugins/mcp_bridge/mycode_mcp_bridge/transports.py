"""Transports to an MCP server (stdio, streamable HTTP, SSE) and reading their failures.

Imports ``mcp``: loaded only on the background thread, when servers are configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import os
import re
import shutil
import signal
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import IO, Any, TextIO, cast

import anyio
import mcp_types as types
from mcp import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from mycode_core.events import without_lone_surrogates
from mycode_mcp_bridge.config import ServerSpec
from mycode_mcp_bridge.gitguard import git_env
from mycode_mcp_bridge.serverlog import one_line, write_line
from mycode_mcp_bridge.tools import lenient_content, lenient_listing

PASSED_ENV = ("LANG", "LC_ALL", "LC_CTYPE", "TMPDIR", "TZ")
"""Variables passed to stdio servers besides the SDK's safe defaults (HOME, PATH, ...)."""


def describe_error(exc: BaseException, spec: ServerSpec, replies: HttpReplies | None = None) -> str:
    """A short, readable reason for a start-up or transport failure (expanded ``${VAR}``
    values written back as ``${VAR}``); ``replies`` tells what an HTTP server refused."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    reason = _describe_error(exc, spec, replies)
    if spec.transport != "stdio" and (unset := _unset_in_headers(spec)):
        if _illegal_header(exc):  # "Bearer ${TOKEN}" with no TOKEN: "Bearer " is refused
            reason = f"{unset}: the header's value is not valid without it"
        else:
            reason += f"; {unset}"
    return spec.redact(reason)


LOST_CONNECTION = (
    "Connection closed",  # the SDK's dispatcher: end of stream, or a send after it
    "the server process exited",  # ours: the process exited during the handshake
    "SSE stream ",  # the streamable-HTTP client: a request's event stream broke or ended
)
"""How the messages of the ``CONNECTION_CLOSED`` errors that the SDK (and the bridge) make up
themselves begin; a server's own error with that code reads otherwise."""


def connection_lost(exc: MCPError) -> bool:
    """Whether ``exc`` says the connection to the server is gone, as the SDK reports it, rather
    than being an error the server sent: -32000 (the SDK's ``CONNECTION_CLOSED``) is also the
    first code of JSON-RPC's range for a server's own errors, which many servers answer any
    failure with (``{"code": -32000, "message": "Server error"}``)."""
    return (
        exc.code == types.CONNECTION_CLOSED
        and exc.data is None
        and exc.message.startswith(LOST_CONNECTION)
    )


def timed_out(exc: MCPError) -> bool:
    """Whether ``exc`` is the SDK's own request timeout (``Request 'tools/call' timed out``),
    not a server's error with the same code (-32001), e.g. an upstream API that timed out."""
    return (
        exc.code == types.REQUEST_TIMEOUT
        and exc.data is None
        and re.fullmatch(r"Request '[^']*' timed out", exc.message) is not None
    )


ERROR_DATA_CHARS = 500
"""How much of an error's ``data`` is shown (as compact JSON) after its message."""


def mcp_error_text(exc: MCPError) -> str:
    """``MCP error CODE: MESSAGE``, once: servers built on the TypeScript SDK put that prefix
    in the message already; the error's ``data`` (what went wrong in detail, e.g. which
    argument), when the server sent any, follows as compact JSON."""
    prefix = f"MCP error {exc.code}:"
    text = exc.message if exc.message.startswith(prefix) else f"{prefix} {exc.message}"
    if exc.data is not None:
        data = exc.data if isinstance(exc.data, str) else _compact(exc.data)
        if data and data not in text:
            cut = data if len(data) <= ERROR_DATA_CHARS else data[: ERROR_DATA_CHARS - 1] + "…"
            text += f" ({cut})"
    return text


def _compact(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except ValueError:  # a circular structure cannot come from JSON; be safe anyway
        return str(value)


def _refusal(status: int, phrase: str, url: str) -> str:
    """An HTTP server's refusal, with what to check."""
    what = f"HTTP {status} {phrase}".strip()
    if status in (401, 403):
        return f"{what}: check the entry's headers / token"
    if status == 404:
        return f"{what} for {url}: check the URL"
    return f"{what} from {url}"


def _http_status(exc: BaseException) -> tuple[int, str, str] | None:
    """``(status, phrase, URL)`` of an ``HTTPStatusError`` under ``exc`` (the SSE client raises
    it when the server refuses the stream)."""
    seen: BaseException | None = exc
    while seen is not None:
        response = getattr(seen, "response", None)
        status = getattr(response, "status_code", None)
        if isinstance(status, int):
            url = getattr(getattr(response, "request", None), "url", "")
            return status, str(getattr(response, "reason_phrase", "")), str(url)
        seen = seen.__cause__ or seen.__context__
    return None


def _unset_in_headers(spec: ServerSpec) -> str:
    """``header 'Authorization' uses ${TOKEN}, which is not set`` for each unset variable
    the entry's headers use ("" if none)."""
    headers = spec.raw.get("headers")
    return "; ".join(
        f"header {name!r} uses ${{{var}}}, which is not set"
        for name, value in (headers.items() if isinstance(headers, dict) else ())
        for var in spec.missing_vars
        if isinstance(value, str) and f"${{{var}}}" in value
    )


def _illegal_header(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if type(seen).__name__ == "LocalProtocolError" and "header" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _describe_error(exc: BaseException, spec: ServerSpec, replies: HttpReplies | None) -> str:
    if isinstance(exc, FileNotFoundError) or (
        isinstance(exc, OSError) and exc.errno == errno.ENOENT
    ):
        return f"command not found: {spec.command!r}{_split_hint(spec.command)}"
    if isinstance(exc, PermissionError):
        return f"command is not executable: {spec.command!r}"
    if isinstance(exc, MCPError):
        if connection_lost(exc):
            if spec.transport == "stdio":
                return "the server process exited before completing the MCP handshake"
            return "the connection closed before completing the MCP handshake"
        if replies is not None and replies.refused is not None:
            return _refusal(*replies.refused)
        return mcp_error_text(exc)
    if isinstance(exc, StartProblem):
        return str(exc)
    if spec.transport != "stdio" and (refused := _http_status(exc)) is not None:
        return _refusal(*refused)
    if spec.transport != "stdio" and (reason := _connect_reason(exc)) is not None:
        return f"cannot connect to {spec.url}: {reason}"
    text = one_line(exc)
    return f"{type(exc).__name__}: {text}" if type(exc).__name__ not in text else text


def _split_hint(command: str) -> str:
    """What to do about a ``command`` holding a whole command line (``"npx -y pkg"``), which is
    run as one program name: its first word is a program, so the rest belongs in ``args``."""
    words = command.split()
    if len(words) < 2 or shutil.which(words[0]) is None:
        return ""
    return f" (a program with its arguments: give {words[0]!r} as 'command' and the rest in 'args')"


def _connect_reason(exc: BaseException) -> str | None:
    """What the system said under a failed connection (refused, host not found, unreachable):
    the HTTP client's own message ("All connection attempts failed") names none of it."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused (is the server running?)"
        if isinstance(seen, socket.gaierror):
            return f"host not found ({seen.strerror})"
        if isinstance(seen, OSError) and seen.errno is not None and seen.strerror:
            return str(seen.strerror)
        seen = seen.__cause__ or seen.__context__
    return None


class StartProblem(Exception):
    """A reason a server cannot start, already worded for the user."""


class HttpReplies:
    """What the HTTP client saw of an HTTP server's refusals, which the SDK's errors leave
    out: it turns a 400 into "Server returned an error response" (-32603) and a 404 into
    "Not Found" (-32601). An ``httpx2`` response hook of the connection's client."""

    def __init__(self) -> None:
        self.refused: tuple[int, str, str] | None = None
        """The last refused POST: ``(status, reason phrase, URL)``."""
        self.session_gone = False
        """A request carrying the session id was refused (400/404) other than as an answer
        to that request: the server no longer knows the session (it restarted), so it ran
        nothing of it."""

    async def on_response(self, response: Any) -> None:
        if response.request.method != "POST" or response.status_code < 400:
            return
        status = response.status_code
        self.refused = (status, response.reason_phrase, str(response.request.url))
        if status in (400, 404) and "mcp-session-id" in response.request.headers:
            self.session_gone = not await _answers_the_request(response)


async def _answers_the_request(response: Any) -> bool:
    """Whether a refusal's body is a JSON-RPC error naming a request id (a spec-correct
    server's 400 for invalid params, 404 for an unknown method), not one about the session
    (no id, as server-everything's "Bad Request: No valid session ID provided")."""
    if "json" not in response.headers.get("content-type", ""):
        return False
    try:
        body = json.loads(await response.aread())
    except Exception:  # noqa: BLE001 - unreadable: not an answer
        return False
    return isinstance(body, dict) and body.get("id") is not None


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return without_lone_surrogates(value)
    if isinstance(value, list):
        return [_clean(item) for item in value]
    if isinstance(value, dict):
        return {_clean(k): _clean(v) for k, v in value.items()}
    return value


def readable(item: Any) -> Any:
    """An item of a transport's read stream, with a line the SDK refused only because its JSON
    escapes a lone UTF-16 surrogate (``"\\ud83d"``: a JavaScript server that cut a string
    inside an emoji) read after all, U+FFFD in its place: dropped, its call would hang."""
    errors = getattr(item, "errors", None)
    if not isinstance(item, Exception) or not callable(errors):
        return item
    try:
        first = errors()[0]
        line = first.get("input")
        if first.get("type") != "json_invalid" or not isinstance(line, str) or "\\u" not in line:
            return item
        message = types.jsonrpc_message_adapter.validate_python(
            _clean(json.loads(line)), by_name=False
        )
    except Exception:  # noqa: BLE001 - not that case: the SDK's own error stands
        return item
    return SessionMessage(message)


REFUSED = {
    "elicitation/create": (
        types.ElicitResult(action="decline"),
        "the server asked the user for input (elicitation/create{what}); declined: mycode "
        "does not offer elicitation",
    ),
    "sampling/createMessage": (
        types.ErrorData(
            code=types.METHOD_NOT_FOUND, message="sampling is not supported by this client"
        ),
        "the server asked for a reply of the client's model (sampling/createMessage); "
        "refused: mycode does not offer sampling",
    ),
}
"""What mycode answers to the requests of a capability it does not declare, and the line the
server's log gets for each."""


class WatchedStream:
    """Wraps a transport's read stream to learn when the server went away (end of stream);
    reads what it can with :func:`readable` and ``tools/list`` answers with
    :func:`~mycode_mcp_bridge.tools.lenient_listing` (the tools it leaves out go to
    ``left_out``); answers a request in :data:`REFUSED`
    itself (with ``reply``, in a task of its own), a line in ``log`` each."""

    def __init__(
        self,
        inner: Any,
        on_eof: Callable[[], None],
        reply: Callable[[SessionMessage], Awaitable[None]] | None = None,
        log: IO[str] | None = None,
        left_out: dict[str, str] | None = None,
    ) -> None:
        self._inner, self._on_eof = inner, on_eof
        self._reply, self._log, self._left_out = reply, log, left_out
        self._replies: set[asyncio.Task[None]] = set()

    def _refused(self, item: Any) -> bool:
        """Whether ``item`` is a request mycode answers itself (then it has been answered)."""
        message = getattr(item, "message", None)
        if self._reply is None or not isinstance(message, types.JSONRPCRequest):
            return False
        refusal = REFUSED.get(message.method)
        if refusal is None:
            return False
        answer, line = refusal
        quoted = (message.params or {}).get("message")
        what = f": {' '.join(str(quoted).split())[:200]!r}" if quoted else ""
        write_line(self._log, "[mycode] " + line.format(what=what))
        if isinstance(answer, types.ErrorData):
            out: Any = types.JSONRPCError(jsonrpc="2.0", id=message.id, error=answer)
        else:
            result = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
            out = types.JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)
        task = asyncio.get_running_loop().create_task(self._send(SessionMessage(out)))
        self._replies.add(task)
        task.add_done_callback(self._replies.discard)
        return True

    async def _send(self, message: SessionMessage) -> None:
        assert self._reply is not None
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            await self._reply(message)

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        return await self._next(self._inner.receive, (anyio.EndOfStream, anyio.ClosedResourceError))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        return await self._next(
            self._inner.__anext__, (StopAsyncIteration, anyio.ClosedResourceError)
        )

    async def _next(
        self, read: Callable[[], Awaitable[Any]], ends: tuple[type[BaseException], ...]
    ) -> Any:
        """The next message the session should see (a refused request is answered here and
        skipped); the end of the stream is reported to ``on_eof``."""
        try:
            while True:
                item = readable(await read())
                if not self._refused(item):
                    return lenient_content(lenient_listing(item, self._left_out))
        except ends:
            self._on_eof()
            raise

    async def __aenter__(self) -> WatchedStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> bool | None:
        return await self._inner.__aexit__(*exc)


GROUP_GRACE = 2.0
"""Seconds a server's leftover processes get between SIGTERM and SIGKILL."""


def server_group(log_path: Path) -> int | None:
    """The process group of the stdio server just started with stderr to ``log_path``.

    The SDK starts each server as a direct child in a session (and group) of its own but does
    not say which process it is: it is the child of ours that leads its group and whose stderr
    is this server's log (one per server). Linux (``/proc``) only; ``None`` when not found."""
    try:
        want = os.path.realpath(log_path)
        entries = os.listdir("/proc")
    except OSError:
        return None
    me = os.getpid()
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8", errors="replace") as fh:
                fields = fh.read().rpartition(")")[2].split()
            ppid, pgrp = int(fields[1]), int(fields[2])
            if ppid != me or pgrp != int(entry):
                continue
            if os.readlink(f"/proc/{entry}/fd/2") == want:
                return pgrp
        except (OSError, ValueError, IndexError):
            continue
    return None


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def end_group(pgid: int, grace: float = GROUP_GRACE) -> None:
    """Terminate what is left of a stopped server's process group (children it started in
    the background survive their parent otherwise): SIGTERM, then SIGKILL after ``grace``."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    with anyio.move_on_after(grace):
        while _group_alive(pgid):
            await anyio.sleep(0.02)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


async def _headers(spec: ServerSpec, workspace: Path) -> dict[str, str]:
    """The entry's ``headers``, with what its ``headersHelper`` prints laid over them."""
    if not spec.headers_helper:
        return spec.headers
    from mycode_mcp_bridge.headers_helper import HelperFailed, helper_headers

    try:
        printed = await anyio.to_thread.run_sync(helper_headers, spec, workspace)
    except HelperFailed as exc:
        raise StartProblem(str(exc)) from None
    return {**spec.headers, **printed}


@contextlib.asynccontextmanager
async def _http_transport(
    spec: ServerSpec, workspace: Path, replies: HttpReplies | None
) -> AsyncIterator[Any]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = await _headers(spec, workspace)
    hooks = {"response": [replies.on_response]} if replies is not None else {}
    client = httpx2.AsyncClient(
        headers=headers, timeout=httpx2.Timeout(30.0, read=300.0), event_hooks=hooks
    )
    async with client:
        async with streamable_http_client(spec.url, http_client=client) as streams:
            yield streams


@contextlib.asynccontextmanager
async def _sse_transport(spec: ServerSpec, workspace: Path) -> AsyncIterator[Any]:
    from mcp.client.sse import sse_client

    async with sse_client(spec.url, headers=await _headers(spec, workspace)) as streams:
        yield streams


def open_transport(
    spec: ServerSpec,
    workspace: Path,
    log: IO[str],
    *,
    guard_git: bool = False,
    replies: HttpReplies | None = None,
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The transport for ``spec``: a stdio process (stderr to ``log``, cwd the workspace by
    default) or an HTTP/SSE connection with the configured headers. With ``guard_git`` (an
    untrusted workspace) a stdio server's git ignores what the repository's configuration
    would run (:mod:`~mycode_mcp_bridge.gitguard`); ``replies`` learns what a streamable-HTTP
    server refused."""
    if spec.transport == "stdio":
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        env["CLAUDE_PROJECT_DIR"] = str(workspace)  # as Claude Code gives its servers
        env.update(spec.env)
        if guard_git:
            env.update(git_env(workspace, env))
        cwd = Path(spec.cwd).expanduser() if spec.cwd else workspace
        if not cwd.is_absolute():
            cwd = workspace / cwd
        if not cwd.is_dir():  # else the spawn's ENOENT would read as "command not found"
            raise StartProblem(f"working directory not found: {str(cwd)!r}")
        # bytes that are not UTF-8 become U+FFFD: a strict decoder would end the reading of
        # stdout for good while the server lives on, so every later call would hang
        params = StdioServerParameters(
            command=spec.command,
            args=list(spec.args),
            env=env,
            cwd=str(cwd),
            encoding_error_handler="replace",
        )
        return stdio_client(params, errlog=cast(TextIO, log))
    if spec.transport == "sse":
        return _sse_transport(spec, workspace)
    return _http_transport(spec, workspace, replies)
