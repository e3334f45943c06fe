"""One run's language servers: which apply, the ``lsp`` tool, and diagnostics after writes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from mycode_core import ReadPath, ToolResult, tool, trust
from mycode_core.events import NoticeEvent
from mycode_core.records import RunContext, Tool, ToolCall
from mycode_lsp.client import LspError
from mycode_lsp.diagnostics import diagnostics_block
from mycode_lsp.operations import Operation, run_operation
from mycode_lsp.servers import Servers
from mycode_lsp.session import LspSession, keep, session_of
from mycode_lsp.settings import LspSettings
from mycode_lsp.specs import ServerSpec, parse_spec


def _notice(context: RunContext, message: str, level: str = "warning") -> None:
    try:
        context.emit(NoticeEvent(level=level, message=message, source="lsp"))  # type: ignore[arg-type]
    except Exception:  # noqa: BLE001, S110 - a notice must never break the run
        pass


def lsp_settings(context: RunContext) -> LspSettings:
    """The ``[lsp]`` table, defaults applied (also where the table was not registered)."""
    section = context.settings.section("lsp")
    return (
        section if isinstance(section, LspSettings) else LspSettings.model_validate(section or {})
    )


def parse_entries(entries: list[tuple[str, Any, str]]) -> tuple[list[ServerSpec], list[str]]:
    """The servers of the entries (the first of a name wins: the config's), and the problems
    of those that could not be read."""
    specs: dict[str, ServerSpec] = {}
    problems: list[str] = []
    for name, entry, source in entries:
        if source == "register_lsp_servers":
            problems.append(f"register_lsp_servers failed: {entry}")
        elif name not in specs:
            try:
                specs[name] = parse_spec(name, entry, source)
            except ValueError as exc:
                problems.append(f"language server {name!r} ({source}): {exc}; skipped")
    return list(specs.values()), problems


def start_for_run(register: Any, context: RunContext, entries: list[tuple[str, Any, str]]) -> None:
    """Register the ``lsp`` tool and keep the servers for the session (started on first use;
    its subagents find them through :func:`~mycode_lsp.session.session_of`)."""
    if session_of(context) is not None:
        return
    specs, problems = parse_entries(entries)
    for problem in problems:
        _notice(context, problem)
    if not specs:
        return
    names = ", ".join(spec.name for spec in specs)
    if not trust.state(context.settings)["trusted"]:
        _notice(
            context,
            f"language servers not started ({names}): this workspace is untrusted and a language "
            "server reads — some build — the project's code. Trust it with `mycode trust` "
            "(or --trust for one run).",
        )
        return
    missing = [spec for spec in specs if not _installed(spec)]
    specs = [spec for spec in specs if spec not in missing]
    servers = Servers(specs, context.workspace, context.home / "logs" / "lsp") if specs else None
    keep(context, LspSession(servers, missing))
    if servers is not None:
        context.cleanup.append(servers.close)
        register(lsp_tool(servers))


def _installed(spec: ServerSpec) -> bool:
    """Whether the server's command exists."""
    command = spec.command
    return Path(command).is_file() if os.sep in command else shutil.which(command) is not None


def tell_missing(call: ToolCall, tool_: Tool | None, context: RunContext) -> None:
    """The first time a call names a file a server that is not installed would serve: one
    notice saying so (typescript-lsp installed warned in every run of a Python project)."""
    session = session_of(context)
    if session is None or not session.missing or tool_ is None:
        return
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    paths = [arguments.get(name) for name in tool_.paths]
    suffixes = {Path(raw).suffix for raw in paths if isinstance(raw, str) and raw}
    with session.lock:
        told = [spec for spec in session.missing if any(spec.language_of(s) for s in suffixes)]
        for spec in told:
            session.missing.remove(spec)
    for spec in told:
        where = f" ({spec.source})" if spec.source != "config" else ""
        _notice(
            context,
            f"language server {spec.name}{where}: {spec.command!r} is not installed (not found "
            f"on PATH); install it to use it on {' '.join(sorted(spec.extensions))} files",
        )


def lsp_tool(servers: Servers) -> Tool:
    """The ``lsp`` tool, its description naming the servers and the files each serves (it
    asks ``servers`` whichever agent calls it: a subagent gets its parent's tools)."""
    served = "; ".join(f"{s.name} for {' '.join(sorted(s.extensions))}" for s in servers.specs)
    description = (
        "Ask the workspace's language server about code: where a symbol is defined "
        "(goToDefinition, goToImplementation), where it is used (findReferences), its type and "
        "docs (hover), the symbols of a file (documentSymbol) or of the workspace "
        "(workspaceSymbol, by `query` or the word at the position), and the calls into or out "
        "of a function (prepareCallHierarchy, incomingCalls, outgoingCalls). `line` and "
        "`character` are 1-based, as an editor shows them. Servers: " + served + "."
    )

    def lsp(
        operation: Operation,
        path: ReadPath,
        context: RunContext,
        line: int = 1,
        character: int = 1,
        query: str = "",
    ) -> str | ToolResult:
        """Ask the language server of ``path``.

        :param operation: what to ask.
        :param path: the file (its server is chosen by its extension).
        :param line: 1-based line of the symbol.
        :param character: 1-based column of the symbol.
        :param query: workspaceSymbol only: the name to look for.
        """
        timeout = float(lsp_settings(context).request_timeout_s)
        try:
            return run_operation(servers, operation, Path(path), line, character, query, timeout)
        except LspError as exc:
            return ToolResult.error(str(exc))

    return tool(name="lsp", description=description, read_only=True)(lsp)


def _told(context: RunContext, path: Path, found: list[dict[str, Any]]) -> None:
    """One line for the user: what the model is now told about the file it wrote."""
    errors = sum(1 for d in found if int(d.get("severity") or 1) == 1)
    warnings = sum(1 for d in found if int(d.get("severity") or 1) == 2)
    try:
        shown = path.resolve().relative_to(context.workspace)
    except ValueError:
        shown = path
    _notice(context, f"lsp: {shown}: {errors} error(s), {warnings} warning(s)", level="info")


def with_diagnostics(
    call: ToolCall, tool_: Tool | None, result: ToolResult, context: RunContext
) -> ToolResult | None:
    """``result`` with the diagnostics of each file the call wrote (``None``: unchanged)."""
    session = session_of(context)
    section = lsp_settings(context)
    if session is None or session.servers is None or tool_ is None:
        return None
    if result.is_error or not section.diagnostics:
        return None
    servers = session.servers
    if not isinstance(result.content, str):
        return None
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    blocks = []
    for name, mode in tool_.paths.items():
        raw = arguments.get(name)
        if mode != "write" or not isinstance(raw, str) or not raw:
            continue
        path = Path(raw) if Path(raw).is_absolute() else context.workspace / raw
        if servers.spec_for(path) is None or not path.is_file():
            continue
        try:
            found = servers.diagnostics(path, float(section.diagnostics_wait_s))
        except LspError as exc:
            with session.lock:
                new = str(exc) not in session.said
                session.said.add(str(exc))
            if new:
                _notice(context, str(exc))
            continue
        if found and (block := diagnostics_block(context.workspace, path.resolve(), found)):
            blocks.append(block)
            _told(context, path, found)
    if not blocks:
        return None
    return result.model_copy(update={"content": result.content + "\n\n" + "\n".join(blocks)})
