"""``write_file``: create a file (and its folders) or replace one that was read first."""

from __future__ import annotations

from typing import Any

from mycode_builtin_tools import encoding, readstate
from mycode_builtin_tools.atomic import atomic_write
from mycode_builtin_tools.diffs import short_diff
from mycode_core.paths import BoundaryError, relative, resolve_in_workspace
from mycode_core.records import ToolResult


def _payload_for_existing(data: bytes, content: str) -> tuple[bytes, str, str]:
    """Encode ``content`` like the file it replaces: BOM, encoding, CRLF. Returns bytes too."""
    decoded = encoding.decode(data)
    if encoding.newline_style(decoded.text) == "\r\n" and "\r\n" not in content:
        content = content.replace("\n", "\r\n")
    try:
        return encoding.encode(content, decoded), decoded.text, content
    except UnicodeEncodeError:
        return content.encode("utf-8"), decoded.text, content


def write_file(arguments: dict[str, Any], context: Any) -> ToolResult:
    """Write ``content`` to ``path``; overwriting needs a prior ``read_file`` of it."""
    try:
        path = resolve_in_workspace(arguments.get("path"), context, write=True)
    except BoundaryError as exc:
        return ToolResult.error(str(exc))
    rel = relative(path, context)
    content = arguments.get("content")
    if not isinstance(content, str):
        return ToolResult.error("content must be a string.")
    if path.is_dir():
        return ToolResult.error(f"{rel} is a directory; give a file path.")
    existed = path.exists()
    before = ""
    if existed:
        stale = readstate.stale_reason(context, path, rel)
        if stale:
            return ToolResult.error(stale.replace("make the change", "overwrite it"))
        try:
            payload, before, content = _payload_for_existing(path.read_bytes(), content)
        except OSError as exc:
            return ToolResult.error(f"cannot read {rel}: {exc.strerror or exc}")
    else:
        payload = content.encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, payload)
    except FileExistsError:
        return ToolResult.error(f"cannot create {rel}: a parent path is a file, not a folder.")
    except NotADirectoryError:
        return ToolResult.error(f"cannot create {rel}: a parent path is a file, not a folder.")
    except OSError as exc:
        return ToolResult.error(f"cannot write {rel}: {exc.strerror or exc}")
    readstate.record_write(context, path)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    meta: dict[str, Any] = {"mutated": [rel], "resources": [f"file:{rel}"]}
    if not existed:
        meta["diff"] = short_diff("", content, rel)  # for people (the CLI); not in the content
        return ToolResult(
            content=f"Created {rel} ({lines} lines, {len(payload)} bytes)", metadata=meta
        )
    diff = short_diff(before, content, rel) or "(content unchanged)"
    meta["diff"] = diff if diff.startswith("---") else ""
    return ToolResult(content=f"Overwrote {rel} ({lines} lines)\n{diff}", metadata=meta)
