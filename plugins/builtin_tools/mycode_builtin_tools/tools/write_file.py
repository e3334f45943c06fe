"""``write_file``: create a file (and its folders) or replace one that was read first."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mycode_builtin_tools import encoding, readstate
from mycode_builtin_tools.atomic import atomic_write
from mycode_builtin_tools.diffs import short_diff
from mycode_core import RunContext, WritePath, tool
from mycode_core.api import safeopen
from mycode_core.paths import relative
from mycode_core.records import ToolResult

DESCRIPTION = (
    "Write a whole file (creating folders); read an existing one first. For changes prefer "
    "edit_file."
)


def _payload_for_existing(data: bytes, content: str) -> tuple[bytes, str, str, str | None]:
    """Encode ``content`` like the file it replaces: BOM, encoding, CRLF. Returns the bytes,
    the old text, the new text and a note when the file's encoding could not be kept."""
    decoded = encoding.decode(data)
    if encoding.newline_style(decoded.text) == "\r\n" and "\r\n" not in content:
        content = content.replace("\n", "\r\n")
    try:
        return encoding.encode(content, decoded), decoded.text, content, None
    except UnicodeEncodeError as exc:
        bad = content[exc.start : exc.end]
        note = (
            f"the file was {decoded.label}, which cannot hold {bad!r}; it is now written as UTF-8"
        )
        return content.encode("utf-8"), decoded.text, content, note


@tool(name="write_file", description=DESCRIPTION)
def write_file(
    context: RunContext,
    path: WritePath,
    content: str,
) -> ToolResult:
    """Write ``content`` to ``path``; overwriting needs a prior ``read_file`` of it."""
    rel = relative(path, context)
    if path.is_dir():
        return ToolResult.error(f"{rel} is a directory; give a file path.")
    if os.path.lexists(path) and not path.is_file():  # stat only: a FIFO is never opened
        return ToolResult.error(f"{rel} is not a regular file (a device, socket or FIFO).")
    with readstate.exclusive(path):
        return _write(context, path, rel, content)


def _write(context: RunContext, path: Path, rel: str, content: str) -> ToolResult:
    """The check and the write, under the folder's lock."""
    existed = os.path.lexists(path)
    before = ""
    note = None
    if existed:
        stale = readstate.stale_reason(context, path, rel)
        if stale:
            return ToolResult.error(stale.replace("make the change", "overwrite it"))
        try:
            data, _info = safeopen.read_bytes(path)
            payload, before, content, note = _payload_for_existing(data, content)
        except OSError as exc:
            return ToolResult.error(f"cannot read {rel}: {exc.strerror or exc}")
        if payload == data:  # not written: no change for the gate, checkpoints or the watcher
            return ToolResult(
                content=f"{rel} already has this content; nothing was written.",
                metadata={"mutated": [], "resources": [f"file:{rel}"]},
            )
    else:
        payload = content.encode("utf-8")
    try:
        atomic_write(path, payload, create_parents=True)
    except safeopen.SymlinkRace:
        return ToolResult.error(f"cannot write {rel}: a folder on its path became a symlink.")
    except FileExistsError:
        return ToolResult.error(f"cannot create {rel}: a parent path is a file, not a folder.")
    except NotADirectoryError:
        return ToolResult.error(f"cannot create {rel}: a parent path is a file, not a folder.")
    except OSError as exc:
        return ToolResult.error(f"cannot write {rel}: {exc.strerror or exc}")
    readstate.record_write(context, path, payload)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    meta: dict[str, Any] = {"mutated": [rel], "resources": [f"file:{rel}"]}
    if not existed:
        meta["diff"] = short_diff("", content, rel)  # for people (the CLI); not in the content
        return ToolResult(
            content=f"Created {rel} ({lines} lines, {len(payload)} bytes)", metadata=meta
        )
    diff = short_diff(before, content, rel) or "(the same text, written in a new encoding)"
    meta["diff"] = diff if diff.startswith("---") else ""
    said = f" ({note})" if note else ""
    return ToolResult(content=f"Overwrote {rel} ({lines} lines){said}\n{diff}", metadata=meta)
