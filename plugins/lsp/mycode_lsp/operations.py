"""The ``lsp`` tool: what a language server knows about the code, in lines the model can use.

The operations are Claude Code's LSP tool's: ``goToDefinition``, ``findReferences``, ``hover``,
``documentSymbol``, ``workspaceSymbol``, ``goToImplementation``, ``prepareCallHierarchy``,
``incomingCalls`` and ``outgoingCalls``. Positions are 1-based, as an editor shows them;
locations come back as ``path:line:column`` (relative to the workspace when inside it) with
the line's text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from mycode_lsp.client import LspClient
from mycode_lsp.servers import Servers, path_of

Operation = Literal[
    "goToDefinition",
    "findReferences",
    "hover",
    "documentSymbol",
    "workspaceSymbol",
    "goToImplementation",
    "prepareCallHierarchy",
    "incomingCalls",
    "outgoingCalls",
]
MAX_ITEMS = 100
SYMBOL_KINDS = (
    "file module namespace package class method property field constructor enum interface "
    "function variable constant string number boolean array object key null enum-member struct "
    "event operator type-parameter"
).split()


def _kind(value: Any) -> str:
    index = int(value) - 1 if isinstance(value, int) else -1
    return SYMBOL_KINDS[index] if 0 <= index < len(SYMBOL_KINDS) else "symbol"


class Formatter:
    """Turns LSP answers into lines, paths relative to the workspace."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self._lines: dict[Path, list[str]] = {}

    def where(self, uri: str, position: dict[str, Any]) -> str:
        """``path:line:column  text of the line`` for a position in a file."""
        path = path_of(uri)
        line, column = int(position.get("line", 0)), int(position.get("character", 0))
        try:
            shown = str(path.relative_to(self.workspace))
        except ValueError:
            shown = str(path)
        text = self._line(path, line)
        return f"{shown}:{line + 1}:{column + 1}" + (f"  {text}" if text else "")

    def _line(self, path: Path, line: int) -> str:
        if path not in self._lines:
            try:
                self._lines[path] = path.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                self._lines[path] = []
        lines = self._lines[path]
        return lines[line].strip()[:160] if 0 <= line < len(lines) else ""

    def locations(self, answer: Any) -> list[str]:
        """Location, Location[] or LocationLink[] as lines."""
        items = answer if isinstance(answer, list) else [answer] if answer else []
        out = []
        for item in items[:MAX_ITEMS]:
            if not isinstance(item, dict):
                continue
            uri = item.get("uri") or item.get("targetUri")
            where = item.get("range") or item.get("targetSelectionRange") or {}
            if uri:
                out.append(self.where(str(uri), where.get("start") or {}))
        return out

    def symbols(self, answer: Any, uri: str | None = None, depth: int = 0) -> list[str]:
        """DocumentSymbol[] (nested) or SymbolInformation[] as lines."""
        out: list[str] = []
        for item in (answer or [])[:MAX_ITEMS] if isinstance(answer, list) else []:
            if not isinstance(item, dict):
                continue
            name, kind = item.get("name", "?"), _kind(item.get("kind"))
            if "location" in item:  # SymbolInformation
                location = item["location"]
                where = self.where(location["uri"], location["range"]["start"])
                container = f" (in {item['containerName']})" if item.get("containerName") else ""
                out.append(f"{kind} {name}{container} — {where}")
                continue
            start = (item.get("selectionRange") or item.get("range") or {}).get("start") or {}
            out.append(f"{'  ' * depth}{kind} {name} (line {int(start.get('line', 0)) + 1})")
            out += self.symbols(item.get("children"), uri, depth + 1)
        return out

    def calls(self, answer: Any, key: str) -> list[str]:
        """CallHierarchyIncomingCall[] (``key="from"``) or OutgoingCall[] (``"to"``)."""
        out = []
        for item in (answer or [])[:MAX_ITEMS] if isinstance(answer, list) else []:
            target = item.get(key) if isinstance(item, dict) else None
            if isinstance(target, dict):
                start = (target.get("selectionRange") or {}).get("start") or {}
                where = self.where(target["uri"], start)
                out.append(f"{_kind(target.get('kind'))} {target.get('name', '?')} — {where}")
        return out


def hover_text(answer: Any) -> str:
    """The text of a Hover (MarkupContent, MarkedString or a list of them)."""
    contents = answer.get("contents") if isinstance(answer, dict) else None
    parts = contents if isinstance(contents, list) else [contents]
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("value"), str):
            texts.append(part["value"])
    return "\n\n".join(t.strip() for t in texts if t and t.strip())


def _word_at(path: Path, line: int, character: int) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()[line]
    except (OSError, IndexError):
        return ""
    start = end = min(max(character, 0), len(text))
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
        start -= 1
    while end < len(text) and (text[end].isalnum() or text[end] == "_"):
        end += 1
    return text[start:end]


def run_operation(
    servers: Servers,
    operation: str,
    path: Path,
    line: int,
    character: int,
    query: str,
    timeout: float,
) -> str:
    """Ask the server for ``path``; the answer as text (``LspError`` when it cannot)."""
    client, uri = servers.sync(path)
    fmt = Formatter(servers.workspace)
    document = {"textDocument": {"uri": uri}}
    at = {**document, "position": {"line": max(line - 1, 0), "character": max(character - 1, 0)}}

    def ask(method: str, params: Any) -> Any:
        return client.request(method, params, timeout=timeout)

    if operation == "hover":
        return hover_text(ask("textDocument/hover", at)) or "no hover information here"
    if operation in ("goToDefinition", "goToImplementation", "findReferences"):
        method = {
            "goToDefinition": "textDocument/definition",
            "goToImplementation": "textDocument/implementation",
            "findReferences": "textDocument/references",
        }[operation]
        params = {**at, "context": {"includeDeclaration": True}} if "Ref" in operation else at
        lines = fmt.locations(ask(method, params))
        return "\n".join(lines) or f"{operation}: nothing found at {path.name}:{line}:{character}"
    if operation == "documentSymbol":
        return "\n".join(fmt.symbols(ask("textDocument/documentSymbol", document), uri)) or (
            f"no symbols in {path.name}"
        )
    if operation == "workspaceSymbol":
        word = query or _word_at(path, line - 1, character - 1)
        lines = fmt.symbols(ask("workspace/symbol", {"query": word}))
        return "\n".join(lines) or f"no symbol matching {word!r} in the workspace"
    return _call_hierarchy(client, operation, at, fmt, timeout)


def _call_hierarchy(
    client: LspClient, operation: str, at: dict[str, Any], fmt: Formatter, timeout: float
) -> str:
    items = client.request("textDocument/prepareCallHierarchy", at, timeout=timeout) or []
    if not items:
        return "no function or method at this position"
    if operation == "prepareCallHierarchy":
        return "\n".join(fmt.calls([{"item": item} for item in items], "item"))
    method, key = (
        ("callHierarchy/incomingCalls", "from")
        if operation == "incomingCalls"
        else ("callHierarchy/outgoingCalls", "to")
    )
    lines = fmt.calls(client.request(method, {"item": items[0]}, timeout=timeout), key)
    return "\n".join(lines) or f"{operation}: none for {items[0].get('name', 'this function')}"
