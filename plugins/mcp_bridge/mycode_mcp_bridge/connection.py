"""One MCP server: its process (or HTTP connection), its session, its tools, its restarts.

Everything here runs on the bridge's background event loop. A *supervisor* task owns the
transport and the :class:`mcp.ClientSession` (anyio scopes must be entered and left by the
same task); calls and refreshes from other tasks use the session it publishes. The server's
stderr goes to a log file, never to the terminal.

This module imports ``mcp``: import it only when servers are configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any, TypeVar

import anyio
import mcp_types as types
from mcp import ClientSession
from mcp.client.session import ClientRequestContext
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError

from mycode_core.api import unwatch_group, watch_group
from mycode_mcp_bridge.config import DEFAULT_MAX_CALL_TIME, ServerSpec
from mycode_mcp_bridge.procwatch import ExitWatch
from mycode_mcp_bridge.results import SCHEMA_PROBLEM
from mycode_mcp_bridge.serverlog import (
    SERVER_LOG,
    open_log,
    read_tail,
    route_sdk_logs,
    write_server_log,
)
from mycode_mcp_bridge.tools import TASK_ONLY, callable_tool
from mycode_mcp_bridge.transports import (
    HttpReplies,
    WatchedStream,
    connection_lost,
    describe_error,
    end_group,
    mcp_error_text,
    open_transport,
    server_group,
    timed_out,
)

MAX_RESTARTS = 1
T = TypeVar("T")
_log = logging.getLogger("mcp.mycode_bridge")
"""Under ``mcp``: its records go to the server's log (:mod:`mycode_mcp_bridge.serverlog`)."""

_SCHEMA_PROBLEM: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "mycode_mcp_schema_problem", default=None
)
"""Why the result of the call running in this task does not match its tool's output schema."""


class _Session(ClientSession):
    """The SDK's session, except that a result that does not match its tool's output schema
    (structured content of another shape, none at all, a schema whose ``$ref`` leads nowhere)
    is passed on with a note rather than raised as an error: the server ran the tool, so
    "could not run" would be wrong, and the model, told so, could run it again (twice
    creating what it created). The mismatch is noted in the result and in the server's log."""

    async def validate_tool_result(self, name: str, result: types.CallToolResult) -> None:
        try:
            await super().validate_tool_result(name, result)
        except RuntimeError as exc:
            problem = " ".join((str(exc).strip().splitlines() or [type(exc).__name__])[0].split())
            _log.warning("%s (the result is passed on as it is)", problem)
            _SCHEMA_PROBLEM.set(problem[:500])


def _with_schema_note(result: Any, problem: str | None) -> Any:
    """``result`` carrying ``problem`` (its mismatch with the output schema) in its ``_meta``,
    under :data:`~mycode_mcp_bridge.results.SCHEMA_PROBLEM`, for the model's note."""
    if problem is None or not isinstance(result, types.CallToolResult):
        return result
    meta = {**(result.meta or {}), SCHEMA_PROBLEM: problem}
    return result.model_copy(update={"meta": meta})


ProgressCallback = ProgressFnT


class ServerError(Exception):
    """A call could not complete.

    ``kind`` is ``unavailable``, ``crashed``, ``timeout`` (no answer nor progress within the
    call timeout), ``overtime`` (still reporting progress at the end of the most a call may
    take) or ``error``.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class ServerConnection:
    """A configured server and its live session (if any)."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        workspace: Path,
        log_path: Path,
        startup_timeout: float,
        call_timeout: float,
        max_call_time: float = DEFAULT_MAX_CALL_TIME,
        client_version: str,
        on_tools_changed: Callable[[ServerConnection], None],
        on_crash: Callable[[ServerConnection], None],
        guard_git: bool = False,
    ) -> None:
        self.spec = spec
        self.guard_git = guard_git
        """Whether git run by this server must ignore the repository's configuration (an
        untrusted workspace)."""
        self.name = spec.name
        self.workspace = workspace
        self.log_path = log_path
        self.startup_timeout = spec.startup_timeout or startup_timeout
        self.call_timeout = spec.call_timeout or call_timeout
        self.max_call_time = max(spec.max_call_time or max_call_time, self.call_timeout)
        """A call that keeps reporting progress may run this long in all (never less than
        :attr:`call_timeout`, the longest it may stay silent)."""
        self.client_version = client_version
        self.on_tools_changed = on_tools_changed
        self.on_crash = on_crash
        self.state = "new"
        self.reason: str | None = None
        self.tools: list[types.Tool] = []
        """The server's tools that its entry allows (``enabled_tools``/``disabled_tools``)."""
        self.offered: list[str] = []
        """The names of every tool the server listed, allowed or not."""
        self.left_out: dict[str, str] = {}
        """Tools the server listed that cannot be called through MCP at all → why."""
        self.restarts = 0
        self.list_changes = 0
        """``notifications/tools/list_changed`` received (each one triggers a refresh)."""
        self.started_in: float | None = None
        self._session: ClientSession | None = None
        self._scope: anyio.CancelScope | None = None
        self._wake: anyio.Event | None = None
        self._finished: anyio.Event | None = None
        self._changed: anyio.Event | None = None
        self._lock: anyio.Lock | None = None
        self.hung = False
        self._checking: anyio.Event | None = None
        self._stopping = False
        self._cancel_requested = False
        self._eof = False
        self._watch: ExitWatch | None = None
        self._log_offset = 0
        self._task: asyncio.Task[None] | None = None
        self._log: IO[str] | None = None
        self._listing_gaps: dict[str, str] = {}
        self._replies: HttpReplies | None = None
        """What the streamable-HTTP server of this session refused (``None`` for others)."""
        route_sdk_logs()

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> bool:
        """Start the server and wait for it (bounded by the start-up timeout); ``True`` if ready."""
        self.state, self.reason, self._eof, self.hung = "starting", None, False, False
        self._cancel_requested = False
        ready, wake, finished = anyio.Event(), anyio.Event(), anyio.Event()
        self._wake, self._finished = wake, finished
        began = time.monotonic()
        self._task = asyncio.get_running_loop().create_task(
            self._supervise(ready, wake, finished), name=f"mcp-{self.name}"
        )
        with anyio.move_on_after(self.startup_timeout):
            await ready.wait()
        if self.state == "starting":
            self.state = "failed"
            self.reason = f"did not start within {self.startup_timeout:g} s"
            self._cancel()
        if self.state == "ready":
            self.started_in = time.monotonic() - began
        return self.state == "ready"

    def _cancel(self) -> None:
        self._cancel_requested = True
        if self._scope is not None:
            self._scope.cancel()

    def _on_eof(self, wake: anyio.Event) -> None:
        if not self._stopping:
            self._eof = True
        wake.set()

    async def _notice_exit(self, watch: ExitWatch, wake: anyio.Event) -> None:
        """The server's process exited: end the session as at the end of its stdout (which a
        process it started may hold open), so pending calls fail as a crash at once."""
        await watch.exited()
        self._on_eof(wake)

    async def _handshake(self, session: ClientSession, watch: ExitWatch | None) -> list[types.Tool]:
        """Initialize and list the tools; a server process that exits meanwhile fails it at
        once, also when a process it started holds its stdout open (no end of stream)."""
        if watch is None:
            await session.initialize()
            return await self._list_tools(session)
        tools: list[types.Tool] | None = None

        async def shake(scope: anyio.CancelScope) -> None:
            nonlocal tools
            await session.initialize()
            tools = await self._list_tools(session)
            scope.cancel()

        async def wait_exit(scope: anyio.CancelScope) -> None:
            await watch.exited()
            scope.cancel()

        with watch.call_pending():
            async with anyio.create_task_group() as group:
                group.start_soon(shake, group.cancel_scope)
                group.start_soon(wait_exit, group.cancel_scope)
        if tools is None:  # the handshake did not finish: the process exited first
            raise MCPError(types.CONNECTION_CLOSED, "the server process exited")
        return tools

    async def _supervise(
        self, ready: anyio.Event, wake: anyio.Event, finished: anyio.Event
    ) -> None:
        log: IO[str] | None = None
        pgid: int | None = None
        replies = self._replies = HttpReplies() if self.spec.transport == "http" else None
        try:
            log = self._log = open_log(self.log_path, self.name, self.spec.describe())
            self._log_offset = log.tell()
            SERVER_LOG.set(log)  # this task's and its children's SDK log records go there
            self._changed = anyio.Event()  # a list_changed during start-up refreshes once ready
            with anyio.CancelScope() as scope:
                self._scope = scope
                if self._cancel_requested:
                    scope.cancel()
                async with contextlib.AsyncExitStack() as stack:
                    transport = open_transport(
                        self.spec, self.workspace, log, guard_git=self.guard_git, replies=replies
                    )
                    read, write = await stack.enter_async_context(transport)
                    if self.spec.transport == "stdio":
                        pgid = server_group(self.log_path)
                        watch_group(pgid)  # its group dies with mycode, even a SIGKILLed one
                    watch = ExitWatch(pgid) if pgid is not None else None
                    if watch is not None:
                        stack.callback(watch.close)
                    watched = WatchedStream(
                        read, lambda: self._on_eof(wake), write.send, log, self._listing_gaps
                    )
                    session = _Session(
                        watched,  # type: ignore[arg-type]
                        write,
                        message_handler=self._on_message,
                        list_roots_callback=self._list_roots,
                        client_info=types.Implementation(
                            name="mycode", version=self.client_version
                        ),
                    )
                    session = await stack.enter_async_context(session)
                    tools = await self._handshake(session, watch)
                    if self.state != "starting":
                        return
                    self._session, self.tools, self.state = session, tools, "ready"
                    self._watch = watch
                    ready.set()
                    async with anyio.create_task_group() as group:
                        group.start_soon(self._refresh_loop, session)
                        if watch is not None:
                            group.start_soon(self._notice_exit, watch, wake)
                        await wake.wait()
                        group.cancel_scope.cancel()
        except Exception as exc:  # noqa: BLE001 - every failure becomes a reported reason
            if self.state in ("starting", "ready") and not self._stopping:
                self.reason = describe_error(exc, self.spec, replies)
                if self._eof and self.state == "ready":
                    self.reason = self._went_away
        finally:
            self._session, self._watch = None, None
            crashed = self.state == "ready" and not self._stopping
            if crashed:
                self.state = "crashed"
                self.reason = self.reason or self._went_away
            elif self.state == "starting":
                self.state = "failed"
                if self.reason is None:
                    self.reason = "stopped during start-up"
            if pgid is not None:  # what the server left running in its group goes too
                with anyio.CancelScope(shield=True):
                    await end_group(pgid)
                unwatch_group(pgid)
            ready.set()
            finished.set()
            if log is not None:
                log.close()
            if crashed:
                self._notify(self.on_crash)

    @property
    def _went_away(self) -> str:
        """Why a ready session ended by itself."""
        if self.spec.transport == "stdio":
            return "the server process exited unexpectedly"
        return "the connection to the server closed"

    async def stop(self, timeout: float = 8.0) -> None:
        """Stop the server (close its stdin, then terminate the process tree), bounded."""
        self._stopping = True
        if self._wake is not None:
            self._wake.set()
        if self.state != "ready":
            self._cancel()
        finished = self._finished
        if finished is not None:
            with anyio.move_on_after(timeout):
                await finished.wait()
            if not finished.is_set():
                self._cancel()
                with anyio.move_on_after(3.0):
                    await finished.wait()
        if self.state in ("ready", "starting", "crashed"):
            self.state = "stopped"

    async def _restart_if_crashed(self) -> None:
        if self._lock is None:
            self._lock = anyio.Lock()
        async with self._lock:
            if self.state != "crashed" or self._stopping:
                return
            # The old supervisor reports the crash as it finishes; that report must still
            # see the old restart count.
            if self._finished is not None:
                with anyio.move_on_after(8.0):
                    await self._finished.wait()
            if self.state != "crashed" or self._stopping:
                return
            if self.restarts >= MAX_RESTARTS:
                self.state = "failed"
                self.reason = f"{self.reason}; not restarted again"
                return
            self.restarts += 1
            previous = self.tools
            if await self.start():
                if [t.name for t in self.tools] != [t.name for t in previous]:
                    self._notify(self.on_tools_changed)

    def mark_hung(self, reason: str, *, hung: bool = True) -> None:
        """The server stopped answering (or, ``hung=False``, the connection to an HTTP/SSE
        server broke): end this session; the next call starts a new one (once)."""
        if self.state == "ready" and self._wake is not None:
            self.reason, self.hung = reason, hung
            self.state, self._session = "crashed", None
            self._wake.set()
            self._notify(self.on_crash)

    def _notify(self, callback: Callable[[ServerConnection], None]) -> None:
        """Tell the bridge something changed; its failures must not touch the session."""
        try:
            callback(self)
        except Exception:  # noqa: BLE001 - the bridge reports its own problems
            pass

    def _check_health_soon(self) -> None:
        """After a call timed out: ping the server; if even that fails, treat it as hung."""
        if self._checking is not None or self.state != "ready":
            return
        checking = self._checking = anyio.Event()

        async def check() -> None:
            try:
                if self.state == "ready" and not await self.ping(min(5.0, self.call_timeout)):
                    self.mark_hung("it stopped answering (even a ping) and was stopped")
            finally:
                self._checking = None
                checking.set()

        asyncio.get_running_loop().create_task(check())

    # ----------------------------------------------------------------- protocol

    async def _list_tools(self, session: ClientSession) -> list[types.Tool]:
        tools: list[types.Tool] = []
        cursor: str | None = None
        self._listing_gaps.clear()  # filled as the pages are read
        for _ in range(100):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            result = await session.list_tools(params=params)
            tools.extend(result.tools)
            cursor = result.next_cursor
            if not cursor:
                break
        self.offered = [t.name for t in tools]
        gaps = dict(self._listing_gaps)
        gaps.update({t.name: TASK_ONLY for t in tools if not callable_tool(t)})
        self.left_out = gaps
        return [t for t in tools if self.spec.allows(t.name)]

    async def _list_roots(
        self, context: ClientRequestContext
    ) -> types.ListRootsResult | types.ErrorData:
        root = types.Root(uri=self.workspace.resolve().as_uri(), name=self.workspace.name)  # type: ignore[arg-type]
        return types.ListRootsResult(roots=[root])

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification):
            write_server_log(self._log, message.params)
        if isinstance(message, types.ToolListChangedNotification):
            self.list_changes += 1
            if self._changed is not None:
                self._changed.set()

    async def _refresh_loop(self, session: ClientSession) -> None:
        while True:
            assert self._changed is not None
            await self._changed.wait()
            self._changed = anyio.Event()
            try:
                with anyio.fail_after(self.startup_timeout):
                    tools = await self._list_tools(session)
            except Exception:  # noqa: BLE001 - keep the old list if the refresh fails
                continue
            self.tools = tools
            self._notify(self.on_tools_changed)

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        again: bool = False,
    ) -> types.CallToolResult:
        """Call a tool; raises :class:`ServerError` with a readable message on failure.

        The call is cancelled when ``timeout`` seconds pass without its answer or a progress
        notification for it, or when it has run :attr:`max_call_time` seconds in all.
        An HTTP server that no longer knows the session (it restarted) did not run the call:
        it is made once more (``again``) in a new session."""
        timeout = timeout or self.call_timeout
        SERVER_LOG.set(self._log)
        if not self.spec.allows(tool):
            raise ServerError("refused", f"the tool {tool!r} is disabled in the server's entry")
        if self._checking is not None:
            with anyio.move_on_after(min(5.0, self.call_timeout) + 1.0):
                await self._checking.wait()
        if self._eof and self.state == "ready" and self._finished is not None:
            with anyio.move_on_after(5.0):
                await self._finished.wait()
        await self._restart_if_crashed()
        SERVER_LOG.set(self._log)  # a restart opened the log anew
        session = self._session
        if session is None or self.state != "ready":
            raise ServerError("unavailable", self.reason or f"server is {self.state}")
        pending = self._watch.call_pending() if self._watch else contextlib.nullcontext()
        clock = _CallClock(timeout, max(self.max_call_time, timeout), progress)
        try:
            with clock.scope, pending:
                _SCHEMA_PROBLEM.set(None)
                result = await session.call_tool(tool, arguments, progress_callback=clock.progress)
                return _with_schema_note(result, _SCHEMA_PROBLEM.get())
            # only the clock's deadline ends up here (the ``return`` is the other way out)
            if clock.overtime:  # it was reporting progress: alive, only slow
                raise ServerError("overtime", f"still running after {clock.limit:g} s")
            self._check_health_soon()
            raise ServerError("timeout", f"no answer within {timeout:g} s")
        except MCPError as exc:
            remote = self.spec.transport != "stdio"  # its session outlives a broken request
            if connection_lost(exc):
                if remote:
                    self.mark_hung("the connection closed during a call", hung=False)
                with anyio.move_on_after(5.0):
                    while self.state == "ready":
                        await anyio.sleep(0.02)
                raise ServerError("crashed", "the server went away during the call") from None
            if not again and self._session_gone(exc):
                return await self.call(
                    tool, arguments, timeout=timeout, progress=progress, again=True
                )
            if timed_out(exc):
                self._check_health_soon()
                raise ServerError("timeout", f"no answer within {timeout:g} s") from None
            raise ServerError("error", self.spec.redact(mcp_error_text(exc))) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ServerError("crashed", "the connection to the server is closed") from None
        except RuntimeError as exc:
            raise ServerError("error", self.spec.redact(str(exc))) from None

    @property
    def instructions(self) -> str:
        """What the server said about using its tools when the session began (may be "")."""
        return str(getattr(self._session, "instructions", None) or "").strip()

    def offers(self, capability: str) -> bool:
        """Whether the server declared ``capability`` (``resources``, ``prompts``)."""
        capabilities = getattr(self._session, "server_capabilities", None)
        return getattr(capabilities, capability, None) is not None

    def _session_gone(self, exc: MCPError) -> bool:
        """Whether an HTTP server refused a request because it no longer knows the session
        (it restarted): it ran nothing of it. The session is ended; the next request opens a
        new one (once)."""
        if self.spec.transport == "stdio":
            return False
        refused = self._replies is not None and self._replies.session_gone
        if not (refused or _session_gone(exc.message)):
            return False
        self.mark_hung("the server no longer knew the session (restarted?)", hung=False)
        return True

    async def request(
        self, make: Callable[[ClientSession], Awaitable[T]], *, again: bool = False
    ) -> T:
        """One request of the bridge's own (resources, prompts), bounded by
        the call timeout; raises :class:`ServerError` with a readable message. Like a call,
        it is made once more in a new session when the server forgot the old one."""
        await self._restart_if_crashed()
        SERVER_LOG.set(self._log)
        session = self._session
        if session is None or self.state != "ready":
            raise ServerError("unavailable", self.reason or f"server is {self.state}")
        try:
            with anyio.fail_after(self.call_timeout):
                return await make(session)
        except TimeoutError:
            raise ServerError("timeout", f"no answer within {self.call_timeout:g} s") from None
        except MCPError as exc:
            if not again and self._session_gone(exc):
                return await self.request(make, again=True)
            raise ServerError("error", self.spec.redact(mcp_error_text(exc))) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise ServerError("crashed", "the connection to the server is closed") from None

    async def ping(self, timeout: float = 5.0) -> bool:
        """Whether the server still answers (a ``ping`` within ``timeout``)."""
        session = self._session
        if session is None:
            return False
        try:
            with anyio.fail_after(timeout):
                await session.send_ping()
        except Exception:  # noqa: BLE001 - any failure means "not answering"
            return False
        return True

    # ----------------------------------------------------------------- diagnostics

    def stderr_tail(self, max_lines: int = 12, max_chars: int = 1500) -> str:
        """The last lines this server wrote to stderr since it was (re)started."""
        tail = read_tail(self.log_path, self._log_offset, max_lines)
        return self.spec.redact(tail)[-max_chars:]


async def all_pages(
    ask: Callable[..., Awaitable[Any]], key: str, limit: int
) -> tuple[list[Any], bool]:
    """The items under ``key`` of every page of a paginated list request (``ask(params=…)``:
    ``session.list_prompts``, ``list_resources``…), at most ``limit``; and whether more were
    left out."""
    items: list[Any] = []
    cursor = None
    while len(items) < limit:
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await ask(params=params)
        items += getattr(page, key)
        cursor = page.next_cursor
        if not cursor:
            break
    return items[:limit], len(items) > limit or bool(cursor)


class _CallClock:
    """The deadline of one call: ``idle`` seconds after it was sent or after the server last
    reported progress for it (``notifications/progress`` with the call's progress token, which
    the SDK sends with every call given a progress callback), never more than ``limit``
    seconds after it was sent. Progress is passed on to ``forward``."""

    def __init__(self, idle: float, limit: float, forward: ProgressCallback | None) -> None:
        self.idle, self.limit, self.forward = idle, limit, forward
        self.began = anyio.current_time()
        self.scope = anyio.CancelScope(deadline=self.began + idle)
        self.progressed = False

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        if not self.scope.cancel_called:  # late progress neither revives nor re-labels the end
            self.progressed = True
            self.scope.deadline = min(anyio.current_time() + self.idle, self.began + self.limit)
        if self.forward is not None:
            await self.forward(progress, total, message)

    @property
    def overtime(self) -> bool:
        """Whether the call was cut at ``limit`` while it was reporting progress."""
        return self.progressed and self.scope.deadline >= self.began + self.limit


def _session_gone(message: str) -> bool:
    """Whether an HTTP server's error says it does not know the session (MCP: start anew)."""
    text = message.lower()
    return any(m in text for m in ("session not found", "session terminated", "no valid session"))
