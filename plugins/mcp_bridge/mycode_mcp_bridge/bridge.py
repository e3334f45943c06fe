"""The bridge for one run: starts its servers, publishes their tools, routes calls, stops them.

Life of a run:

1. ``register_tools`` builds a :class:`Bridge` and calls :meth:`Bridge.start`: every server
   starts concurrently on the shared background loop; the call returns at once.
2. The core runs :meth:`Bridge.wait_and_register` (a startup task) before the first model
   request: it waits for the servers (each bounded by its start-up timeout) and adds their
   tools to ``context.tools``. Servers that failed are reported once; the run goes on.
3. Tool handlers (synchronous, in the core's worker threads) submit calls to the loop.
4. :meth:`Bridge.shutdown` (a cleanup callable, and an atexit safety net) stops them all.

This module does not import ``mcp`` itself; :mod:`mycode_mcp_bridge.connection` does, on the
background thread.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mycode_core.events import NoticeEvent, ProgressEvent
from mycode_core.records import RunContext, Tool, ToolResult
from mycode_mcp_bridge import outside, runtime
from mycode_mcp_bridge.config import ServerSpec, workspace_trusted
from mycode_mcp_bridge.naming import NameAllocator, allocation_order, sanitize
from mycode_mcp_bridge.tools import PLUGIN, Options, callable_tool, make_tool

if TYPE_CHECKING:
    from mycode_mcp_bridge.connection import ServerConnection

RESOURCE_CHECK_S = 5.0
"""How long start-up waits, at most, to learn whether the servers have resources."""


class Bridge:
    """The MCP servers of one run and the tools they contribute."""

    def __init__(
        self, context: RunContext, specs: list[ServerSpec], options: Options | None = None
    ) -> None:
        self.context = context
        self.specs = sorted(specs, key=lambda s: s.name)
        self.options = options or Options()
        self.loop = runtime.BackgroundLoop.get()
        self.emitter = runtime.Emitter.get()
        self.connections: dict[str, ServerConnection] = {}
        self.exposed: dict[str, dict[str, str]] = {}
        self.invalid: dict[str, dict[str, str]] = {}
        """Per server: its tools whose schema no validator accepts → why (not offered)."""
        self.with_resources: list[str] = []
        """Servers that had a resource or a template at start-up."""
        self.published = False
        self.closed = False
        self._reported: set[str] = set()
        self._lock = threading.RLock()
        self._startup: concurrent.futures.Future[None] | None = None
        self._allocator = NameAllocator(is_taken=self._taken_elsewhere)
        runtime.track(self)

    # ----------------------------------------------------------------- start-up

    def log_path(self, name: str) -> Path:
        """Where a server's stderr goes: a file of its own, also for names that differ only
        in characters a file name cannot keep (``a.b``, ``a_b``) — the log also tells which
        process is the server's (:func:`~mycode_mcp_bridge.transports.server_group`)."""
        safe = sanitize(name)
        if safe != name:
            safe += "-" + hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:6]
        return self.context.home / "logs" / "mcp" / f"{safe}.log"

    def start(self) -> None:
        """Start every server concurrently in the background; returns at once."""
        if self._startup is None:
            self._startup = self.loop.submit(self._start_all())

    async def _start_all(self) -> None:
        import anyio

        from mycode_core import __version__
        from mycode_mcp_bridge.connection import ServerConnection

        guard_git = not workspace_trusted(self.context.settings)
        for spec in self.specs:
            self.connections[spec.name] = ServerConnection(
                spec,
                workspace=self.context.workspace,
                log_path=self.log_path(spec.name),
                startup_timeout=self.options.startup_timeout,
                call_timeout=self.options.call_timeout,
                max_call_time=self.options.max_call_time,
                client_version=__version__,
                on_tools_changed=self._on_tools_changed,
                on_crash=self._on_crash,
                guard_git=guard_git,
            )
        async with anyio.create_task_group() as group:
            for connection in self.connections.values():
                group.start_soon(connection.start)

    def wait(self) -> None:
        """Wait until every server is ready or has failed (bounded by the start-up timeouts)."""
        if self._startup is None:
            self.start()
        assert self._startup is not None
        longest = max(
            [s.startup_timeout or self.options.startup_timeout for s in self.specs] or [0.0]
        )
        try:
            # Ctrl-C stops the wait: the run ends (its cleanup stops the servers) rather than
            # sitting out a start-up timeout
            _wait(self._startup, longest + 15.0, self.context)
        except _Cancelled:
            return
        except Exception as exc:  # noqa: BLE001 - reported, never fatal
            self.report("startup", f"MCP servers could not be started: {exc}", direct=True)

    def wait_and_register(self) -> None:
        """Startup task: wait for the servers, add their tools, report those that failed."""
        self.wait()
        cancelled = getattr(self.context, "cancelled", None)
        with self._lock:
            if self.closed or (cancelled is not None and cancelled.is_set()):
                return
            self.published = True
            ready = [c for c in self.connections.values() if c.state == "ready"]
            pairs = [(c.name, t.name) for c in ready for t in c.tools if callable_tool(t)]
            self._allocator.allocate(pairs)
        for connection in ready:
            self._on_tools_changed(connection)
            unknown = connection.spec.unknown_tools(connection.offered)
            if unknown:
                self.report(
                    f"unknown-tools:{connection.name}",
                    f"MCP server '{connection.name}' offers no tool named "
                    + ", ".join(repr(n) for n in unknown)
                    + " (named in its enabled_tools/disabled_tools; ignored)",
                    direct=True,
                )
        for connection in list(self.connections.values()):
            if connection.state != "ready":
                self.report_failure(connection, "failed to start", direct=True)
        self.with_resources = self._with_resources([c for c in ready if c.offers("resources")])
        if self.with_resources:
            from mycode_mcp_bridge.resources import resource_tools

            for tool in resource_tools(self):
                if not self._taken_elsewhere(tool.name):
                    self.context.tools.add(tool, replace=True)

    def _with_resources(self, connections: list[ServerConnection]) -> list[str]:
        """The names of ``connections`` that have a resource or a template (asked of all at
        once, before the first request, so the tools the model sees stay the same all run):
        many servers declare the capability and offer none (``mcp-server-time``)."""
        if not connections:
            return []
        from mycode_mcp_bridge.resources import has_resources

        async def ask(connection: ServerConnection) -> bool:
            try:
                return await connection.request(has_resources)
            except Exception:  # noqa: BLE001 - a server that cannot say offers nothing here
                return False

        async def ask_all() -> list[str]:
            import asyncio

            found = await asyncio.gather(*(ask(c) for c in connections))
            return [c.name for c, has in zip(connections, found, strict=True) if has]

        future = self.loop.submit(ask_all())
        try:
            return list(_wait(future, RESOURCE_CHECK_S, self.context))
        except (_Cancelled, concurrent.futures.TimeoutError):
            future.cancel()
            return []

    # ----------------------------------------------------------------- registry

    def _taken_elsewhere(self, name: str) -> bool:
        tool = self.context.tools.get(name)
        return tool is not None and tool.plugin != PLUGIN

    def _sync_tools(self, connection: ServerConnection) -> None:
        """Make ``context.tools`` match the server's current tool list."""
        current = self.exposed.setdefault(connection.name, {})
        invalid = self.invalid[connection.name] = {}
        wanted = {t.name: t for t in connection.tools if callable_tool(t)}
        for tool_name in sorted(set(current) - set(wanted)):
            self.context.tools.remove(current.pop(tool_name))
            self._allocator.release(connection.name, tool_name)
        for _, tool_name in sorted(((connection.name, n) for n in wanted), key=allocation_order):
            exposed = self._allocator.name_for(connection.name, tool_name)
            try:
                made = self._make_tool(connection, wanted[tool_name], exposed)
            except ValueError as exc:  # e.g. a schema no validator accepts: this tool only
                self._allocator.release(connection.name, tool_name)
                if current.pop(tool_name, None) is not None:
                    self.context.tools.remove(exposed)
                why = _first_error(exc)
                invalid[tool_name] = why.removeprefix(f"tool {exposed!r}: ")
                self.report(
                    f"tool:{connection.name}:{tool_name}",
                    f"MCP tool '{tool_name}' of server '{connection.name}' is not offered: "
                    + _first_error(exc),
                )
                continue
            current[tool_name] = exposed
            self.context.tools.add(made, replace=True)

    def _make_tool(self, connection: ServerConnection, mcp_tool: Any, exposed: str) -> Tool:
        server, tool_name = connection.name, mcp_tool.name

        def handler(arguments: dict[str, Any], context: RunContext) -> ToolResult:
            return self.call(server, tool_name, exposed, arguments, context)

        made = make_tool(server, mcp_tool, exposed, handler)
        judge = outside.approval_for(server, outside.trusts_paths(connection.spec))
        # the bridge bounds its calls itself (idle and overall): the core's own bound (the
        # ``tool_timeout`` setting) must not cut a call that is still reporting progress
        timeout = _longest_call(connection) + 10.0
        return made.model_copy(update={"approval_for": judge, "timeout": timeout})

    def _on_tools_changed(self, connection: ServerConnection) -> None:
        with self._lock:
            if self.published and not self.closed:
                try:
                    self._sync_tools(connection)
                except Exception as exc:  # noqa: BLE001 - e.g. a name clash with another plugin
                    self.report(
                        f"sync:{connection.name}", f"MCP tools of '{connection.name}': {exc}"
                    )

    # ----------------------------------------------------------------- calls

    def call(
        self,
        server: str,
        tool: str,
        exposed: str,
        arguments: dict[str, Any],
        context: RunContext | None = None,
    ) -> ToolResult:
        """Call a server's tool from a synchronous handler; never raises."""
        from mycode_mcp_bridge.connection import ServerError
        from mycode_mcp_bridge.results import to_tool_result

        context = context or self.context
        connection = self.connections.get(server)
        if connection is None or self.closed:
            return ToolResult.error(f"MCP server {server!r} is not running in this session")
        emitter, emit = self.emitter, context.emit

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            event = ProgressEvent(
                source=exposed, progress=progress, total=total, message=message or ""
            )
            emitter.put(emit, event)

        future = self.loop.submit(connection.call(tool, dict(arguments or {}), progress=progress))
        try:
            result = _wait(future, _longest_call(connection), context)
        except _Cancelled:
            future.cancel()
            return ToolResult.error(f"MCP tool {exposed} was cancelled by the user.")
        except ServerError as exc:
            return self._call_failed(connection, tool, exposed, exc)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return self._call_failed(connection, tool, exposed, ServerError("timeout", "no answer"))
        except Exception as exc:  # noqa: BLE001 - a handler never raises
            if callable(getattr(exc, "errors", None)):  # pydantic: the answer's shape is wrong
                from mycode_mcp_bridge.serverlog import one_line

                message = connection.spec.redact(one_line(exc))
                return ToolResult.error(
                    f"MCP server '{server}' answered {tool} with a result that is not valid "
                    f"MCP: {message}"
                )
            message = connection.spec.redact(f"{type(exc).__name__}: {exc}")
            return ToolResult.error(f"MCP tool {exposed} failed: {message}")
        try:
            return to_tool_result(
                result,
                context=context,
                label=exposed,
                max_chars=self.options.max_output_chars,
                server=server,
                tool=tool,
            )
        except Exception as exc:  # noqa: BLE001
            return ToolResult.error(f"MCP tool {exposed} returned an unreadable result: {exc}")

    def request(self, server: str, make: Any, context: RunContext) -> Any:
        """``make(session)`` on ``server``'s session, from a synchronous handler; raises
        :class:`~mycode_mcp_bridge.connection.ServerError` (also when the user cancels)."""
        from mycode_mcp_bridge.connection import ServerError

        connection = self.connections.get(server)
        if connection is None or self.closed:
            raise ServerError("unavailable", "it is not running in this session")
        future = self.loop.submit(connection.request(make))
        try:
            return _wait(future, connection.call_timeout + connection.startup_timeout, context)
        except _Cancelled:
            future.cancel()
            raise ServerError("cancelled", "cancelled by the user") from None
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise ServerError("timeout", "no answer") from None

    def _call_failed(
        self, connection: ServerConnection, tool: str, exposed: str, exc: Any
    ) -> ToolResult:
        server = connection.name
        if exc.kind == "timeout":
            seconds = f"{connection.call_timeout:g}"
            self.report(
                f"timeout:{server}",
                f"MCP server '{server}' did not answer '{tool}' within {seconds} s; "
                "the call was cancelled",
            )
            return ToolResult.error(
                f"MCP tool {exposed} timed out after {seconds} s (server '{server}'); the call "
                "was cancelled. Try a smaller request or another approach."
            )
        if exc.kind == "overtime":
            limit = f"{connection.max_call_time:g}"
            self.report(
                f"overtime:{server}",
                f"MCP server '{server}' was still working on '{tool}' (reporting progress) after "
                f"{limit} s, the most one call may take (max_call_time); the call was cancelled",
            )
            return ToolResult.error(
                f"MCP tool {exposed} was still running after {limit} s, the most one call may "
                f"take (server '{server}'); the call was cancelled. Try a smaller request or "
                "another approach."
            )
        if exc.kind == "crashed":
            self._on_crash(connection)
            what = (
                "it will be restarted on the next call"
                if connection.restarts < 1
                else "it will not be restarted in this session"
            )
            why = f": {' '.join(connection.reason.split())}" if connection.reason else ""
            return ToolResult.error(
                f"MCP server '{server}' crashed during the call to {tool}{why}; {what}."
            )
        if exc.kind == "unavailable":
            self.report_failure(connection, "is unavailable", key=f"final:{server}")
            return ToolResult.error(
                f"MCP server '{server}' is unavailable ({exc.message}); its tools cannot be used "
                "in this session."
            )
        return ToolResult.error(f"MCP server '{server}' could not run {tool}: {exc.message}")

    # ----------------------------------------------------------------- reports

    def report(self, key: str, message: str, *, direct: bool = False) -> None:
        """Emit a warning notice once per ``key``."""
        with self._lock:
            if key in self._reported or self.closed:
                return
            self._reported.add(key)
        event = NoticeEvent(level="warning", message=message, source=PLUGIN)
        if direct:
            try:
                self.context.emit(event)
            except Exception:  # noqa: BLE001 - reporting must not break the run
                pass
        else:
            self.emitter.put(self.context.emit, event)

    def report_failure(
        self,
        connection: ServerConnection,
        what: str,
        *,
        key: str | None = None,
        direct: bool = False,
    ) -> None:
        """Report a server that failed/crashed: which, why, and the tail of its stderr."""
        reason = connection.reason or connection.state
        self.report(
            key or f"start:{connection.name}:{connection.restarts}",
            f"MCP server '{connection.name}' {what}: {reason}{_tail_note(connection)}",
            direct=direct,
        )

    def _on_crash(self, connection: ServerConnection) -> None:
        last = connection.restarts >= 1
        again = (
            "it will not be restarted again" if last else "it will be restarted on its next call"
        )
        what = "hung" if connection.hung else "crashed"
        self.report(
            f"crash:{connection.name}:{connection.restarts}",
            f"MCP server '{connection.name}' {what}: {connection.reason}; {again}"
            + _tail_note(connection),
        )
        if last:
            with self._lock:
                self._reported.add(f"final:{connection.name}")

    # ----------------------------------------------------------------- shutdown

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every server (concurrently, bounded); safe to call more than once."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        runtime.untrack(self)
        if self._startup is not None and not self._startup.done():
            try:
                self._startup.result(timeout=2.0)
            except Exception:  # noqa: BLE001 - stop whatever exists
                pass

        async def stop_all() -> None:
            import anyio

            async with anyio.create_task_group() as group:
                for connection in list(self.connections.values()):
                    group.start_soon(connection.stop, timeout - 1.0)

        try:
            self.loop.run(stop_all(), timeout=timeout + 3.0)
        except Exception:  # noqa: BLE001 - best effort
            pass

    def status(self) -> list[dict[str, Any]]:
        """One JSON-ready row per server: name, scope, state, reason, tools."""
        rows = []
        for spec in self.specs:
            connection = self.connections.get(spec.name)
            state = connection.state if connection else "not started"
            ready = connection is not None and state == "ready"
            allowed = [t.name for t in connection.tools] if connection and ready else []
            left_out = (
                {**connection.left_out, **self.invalid.get(spec.name, {})}
                if connection and ready
                else {}
            )
            tools = [name for name in allowed if name not in left_out]
            rows.append(
                {
                    "name": spec.name,
                    "scope": spec.scope,
                    "source": spec.source,
                    "transport": spec.transport,
                    "target": spec.describe(),
                    "status": state,
                    "reason": connection.reason if connection and state != "ready" else None,
                    "tools": tools,
                    "exposed": sorted(self.exposed.get(spec.name, {}).values()),
                    "hidden": sorted(set(connection.offered) - set(allowed))
                    if connection and ready
                    else [],
                    "left_out": [
                        {"name": name, "reason": reason}
                        for name, reason in sorted(left_out.items())
                    ],
                    "started_in": round(connection.started_in, 3)
                    if connection and connection.started_in
                    else None,
                    "stderr_tail": connection.stderr_tail()
                    if connection and state != "ready"
                    else "",
                }
            )
        return rows


def _longest_call(connection: ServerConnection) -> float:
    """How long a handler waits for a call at most: its overall limit, a restart before it
    and the cancellation after it; the call itself always ends first."""
    return connection.max_call_time + connection.startup_timeout + 20.0


class _Cancelled(Exception):
    """The user cancelled the turn while a call was running."""


def _wait(future: concurrent.futures.Future[Any], timeout: float, context: RunContext) -> Any:
    """``future.result(timeout)``, giving up early when ``context.cancelled`` is set."""
    cancelled = getattr(context, "cancelled", None)
    if cancelled is None:
        return future.result(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise concurrent.futures.TimeoutError()
        try:
            return future.result(timeout=min(0.1, remaining))
        except concurrent.futures.TimeoutError:
            if cancelled.is_set():
                raise _Cancelled() from None


def _first_error(exc: ValueError) -> str:
    """One line saying why a record was refused (pydantic's first error, without its
    "Value error, " prefix and its documentation link)."""
    errors = getattr(exc, "errors", None)
    text = str(errors()[0].get("msg", exc)) if callable(errors) and errors() else str(exc)
    return " ".join(text.removeprefix("Value error, ").split())


def _tail_note(connection: ServerConnection) -> str:
    tail = connection.stderr_tail()
    if not tail:
        return f" (log: {connection.log_path})"
    return f". Last stderr lines ({connection.log_path}):\n{tail}"
