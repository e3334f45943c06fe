"""``edit_file``: exact string replacement that keeps everything else byte for byte.

Line endings, the byte-order mark, the encoding, the trailing newline and the file mode are
kept; the write is atomic; a file that changed on disk since it was read is refused.
"""

from __future__ import annotations

from pathlib import Path

from mycode_builtin_tools import encoding, readstate
from mycode_builtin_tools.atomic import atomic_write
from mycode_builtin_tools.diffs import closest_region, line_numbers_of, short_diff
from mycode_core import RunContext, WritePath, tool
from mycode_core.api import safeopen
from mycode_core.paths import relative
from mycode_core.records import ToolResult

DESCRIPTION = (
    "Replace an exact unique old_string (every match with replace_all) in a file read "
    "earlier; no line-number prefixes. Refused if it changed since."
)


def _adapt_newlines(text: str, old: str, new: str) -> tuple[str, str]:
    """Match the file's line endings: models send ``\\n`` even for CRLF files."""
    if text.count(old) == 0:
        if "\r\n" in text and "\n" in old and "\r\n" not in old:
            crlf_old = old.replace("\n", "\r\n")
            if crlf_old in text:
                return crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
        if "\r\n" in old and "\r\n" not in text:
            lf_old = old.replace("\r\n", "\n")
            if lf_old in text:
                return lf_old, new.replace("\r\n", "\n")
    return old, new


def _not_found(text: str, old: str, rel: str) -> ToolResult:
    message = f"old_string was not found in {rel}; the file is unchanged."
    stripped = old.strip()
    if stripped and stripped != old and stripped in text:
        message += " The text exists with different surrounding whitespace or line breaks."
    region = closest_region(text, old)
    if region:
        message += f"\nThe closest region is:\n{region}"
    message += "\nCopy old_string exactly from read_file output (without the line-number prefix)."
    return ToolResult.error(message)


@tool(name="edit_file", description=DESCRIPTION)
def edit_file(
    context: RunContext,
    path: WritePath,
    old_string: str,
    new_string: str,
    replace_all: bool = False,
) -> ToolResult:
    """Replace ``old_string`` with ``new_string`` in a file read earlier in the session."""
    rel = relative(path, context)
    old, new = old_string, new_string
    if path.is_dir():
        return ToolResult.error(f"{rel} is a directory; edit_file works on files.")
    if not path.exists():
        return ToolResult.error(
            f"{rel} does not exist. Use write_file to create a new file, or glob to find it."
        )
    if not path.is_file():  # stat only: a FIFO is never opened
        return ToolResult.error(f"{rel} is not a regular file (a device, socket or FIFO).")
    if old == new:
        return ToolResult.error("old_string and new_string are identical; nothing to change.")
    if old == "":
        return ToolResult.error(
            "old_string is empty. To add text, include a unique piece of the surrounding text "
            "in old_string; to replace the whole file, use write_file."
        )
    with readstate.exclusive(path):
        return _edit(context, path, rel, old, new, replace_all)


def _edit(
    context: RunContext, path: Path, rel: str, old: str, new: str, replace_all: bool
) -> ToolResult:
    """The stale check, the replacement and the write, under the folder's lock."""
    stale = readstate.stale_reason(context, path, rel)
    if stale:
        return ToolResult.error(stale)
    try:
        data, _info = safeopen.read_bytes(path)
    except OSError as exc:
        return ToolResult.error(f"cannot read {rel}: {exc.strerror or exc}")
    kind = encoding.binary_kind(data[: encoding.SNIFF_BYTES])
    if kind is not None:
        return ToolResult.error(f"{rel} is a binary file ({kind}); edit_file only edits text.")
    decoded = encoding.decode(data)
    if not decoded.lossless or encoding.encode(decoded.text, decoded) != data:
        return ToolResult.error(
            f"{rel} could not be decoded reversibly ({decoded.label}); refusing to edit it so "
            "its bytes stay intact. Use run_command (e.g. sed or a script) if needed."
        )
    text = decoded.text
    old, new = _adapt_newlines(text, old, new)
    count = text.count(old)
    if count == 0:
        return _not_found(text, old, rel)
    if count > 1 and not replace_all:
        lines = line_numbers_of(text, old)
        shown = ", ".join(str(n) for n in lines[:20]) + (" …" if len(lines) > 20 else "")
        return ToolResult.error(
            f"old_string occurs {count} times in {rel} (lines {shown}); the file is unchanged. "
            "Add surrounding lines to make it unique, or set replace_all to true."
        )
    updated = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    try:
        payload = encoding.encode(updated, decoded)
    except UnicodeEncodeError as exc:
        bad = updated[exc.start : exc.end]
        return ToolResult.error(
            f"{rel} is {decoded.label}, which cannot hold {bad!r} from new_string; the file is "
            "unchanged. Use characters that exist in that encoding."
        )
    try:
        atomic_write(path, payload)
    except OSError as exc:
        return ToolResult.error(f"cannot write {rel}: {exc.strerror or exc}; file unchanged.")
    readstate.record_write(context, path, payload)
    replaced = count if replace_all else 1
    header = f"Edited {rel} ({replaced} replacement{'s' if replaced != 1 else ''})"
    diff = short_diff(text, updated, rel)
    return ToolResult(
        content=f"{header}\n{diff}",
        metadata={"mutated": [rel], "resources": [f"file:{rel}"], "diff": diff},
    )
