"""``read_file``: numbered lines of a text file, a window at a time; an image as an image.

Small files are decoded whole (so any encoding works); big files are streamed line by line,
so a 100-line window of a 200 MB file costs a few kilobytes of memory. A PNG, JPEG, GIF or WebP
file (known by its bytes) is an image block, as Claude Code's Read and Codex's ``view_image``
give one: the core sends it to a model that takes images and a short note to any other.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Annotated

from pydantic import Field, WithJsonSchema

from mycode_builtin_tools import encoding, readstate
from mycode_core import ReadPath, RunContext, tool
from mycode_core.api import safeopen
from mycode_core.paths import relative
from mycode_core.records import ToolResult

DESCRIPTION = (
    "Read a text file or image (or a saved output's artifact path) as numbered lines, up to "
    "2000 from offset (1-based); a partial view says where to read on."
)
_INTEGER = WithJsonSchema({"type": "integer"})
"""The announced schema of a count (its bound is checked on the call, not spelled out)."""
DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_CHARS = 60_000
WHOLE_FILE_BYTES = 8 * 1024 * 1024
MAX_WIDE_ENCODING_BYTES = 64 * 1024 * 1024
CHUNK = 64 * 1024
IMAGE_TYPES = {
    "PNG image": "image/png",
    "JPEG image": "image/jpeg",
    "GIF image": "image/gif",
    "WebP image": "image/webp",
}
MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""The largest image shown (as an ``@`` mention attaches at the most)."""


def _cut(line: str, extra: int = 0) -> str:
    if len(line) <= MAX_LINE_CHARS and not extra:
        return line
    more = len(line) - MAX_LINE_CHARS + extra
    return f"{line[:MAX_LINE_CHARS]}… [line cut: {more} more characters]"


def _strip_eol(line: str) -> str:
    if line.endswith("\r\n"):
        return line[:-2]
    if line.endswith(("\n", "\r")):
        return line[:-1]
    return line


def _bounded_lines(fh: IO[bytes]) -> Iterator[tuple[bytes, int]]:
    """Yield ``(first bytes of a line, bytes not kept)`` with bounded memory per line."""
    keep = MAX_LINE_CHARS * 4 + 8
    while True:
        head = fh.readline(keep)
        if not head:
            return
        dropped = 0
        if not head.endswith(b"\n"):
            while True:
                rest = fh.readline(CHUNK)
                if not rest:
                    break
                dropped += len(rest)
                if rest.endswith(b"\n"):
                    break
        yield head, dropped


class _Window:
    """Collects the numbered lines of one view, within the output budget."""

    def __init__(self, offset: int, limit: int) -> None:
        self.offset = offset
        self.limit = limit
        self.lines: list[str] = []
        self.chars = 0
        self.budget_hit = False

    def wants(self, number: int) -> bool:
        return number >= self.offset and len(self.lines) < self.limit and not self.budget_hit

    def add(self, number: int, text: str) -> None:
        entry = f"{number:6}\t{text}"
        if self.lines and self.chars + len(entry) > MAX_OUTPUT_CHARS:
            self.budget_hit = True
            return
        self.lines.append(entry)
        self.chars += len(entry) + 1

    @property
    def end(self) -> int:
        return self.offset + len(self.lines) - 1


def _read_whole(path: Path, data: bytes, window: _Window) -> tuple[int, str]:
    decoded = encoding.decode(data)
    lines = decoded.text.split("\n")  # "\n" only, like editors and ripgrep count lines
    if lines and lines[-1] == "":
        lines.pop()
    for number in range(window.offset, len(lines) + 1):
        if not window.wants(number):
            break
        window.add(number, _cut(_strip_eol(lines[number - 1])))
    return len(lines), decoded.label


def _read_streamed(fh: IO[bytes], window: _Window) -> tuple[bool, str]:
    head = fh.read(CHUNK)
    name, bom = encoding.sniff_stream_encoding(head)
    fh.seek(len(bom))
    number = 0
    for number, (raw, dropped) in enumerate(_bounded_lines(fh), start=1):  # noqa: B007
        if number < window.offset:
            continue
        if not window.wants(number):
            return True, name
        text = raw.decode(name, "replace")
        window.add(number, _cut(_strip_eol(text), extra=dropped))
    return False, name


def _image(fh: IO[bytes], rel: str, mime: str, size: int) -> ToolResult:
    if size > MAX_IMAGE_BYTES:
        return ToolResult.error(
            f"{rel} is a {size / 2**20:.0f} MB image, over the {MAX_IMAGE_BYTES // 2**20} MB "
            "limit of an image shown to the model."
        )
    fh.seek(0)
    data = base64.b64encode(fh.read(MAX_IMAGE_BYTES)).decode("ascii")
    return ToolResult(
        content=[
            {"type": "text", "text": f"{rel}: {mime} image, {size:,} bytes"},
            {"type": "image", "mime_type": mime, "data": data},
        ],
        metadata={"resources": [f"file:{rel}"]},
    )


def _binary_refusal(rel: str, kind: str, size: int) -> ToolResult:
    return ToolResult.error(
        f"{rel} is a binary file ({kind}, {size} bytes) and cannot be shown as text. "
        "Use run_command with a suitable tool (e.g. `file`, `xxd | head`) to inspect it."
    )


@tool(name="read_file", read_only=True, description=DESCRIPTION)
def read_file(
    context: RunContext,
    path: ReadPath,
    offset: Annotated[int | None, Field(ge=1), _INTEGER] = None,
    limit: Annotated[int | None, Field(ge=1), _INTEGER] = None,
) -> ToolResult:
    """Show ``limit`` numbered lines of a file from line ``offset`` (1-based)."""
    rel = relative(path, context)
    offset = max(1, offset or 1)
    limit = max(1, limit or DEFAULT_LIMIT)
    if path.is_dir():
        return ToolResult.error(
            f"{rel} is a directory, not a file. List it with glob (pattern '{rel}/*') "
            f"or run_command `ls {rel}`."
        )
    if path.exists() and not path.is_file():
        return ToolResult.error(f"{rel} is not a regular file (a device, socket or FIFO).")
    try:
        fh = os.fdopen(safeopen.open_read(path), "rb")  # no symlink followed (issue 13)
    except FileNotFoundError:
        return ToolResult.error(f"{rel} does not exist. Use glob to find the right path.")
    except OSError as exc:
        return ToolResult.error(f"cannot open {rel}: {exc.strerror or exc}")
    window = _Window(offset, limit)
    with fh:
        stat = os.fstat(fh.fileno())
        head = fh.read(encoding.SNIFF_BYTES)
        kind = encoding.binary_kind(head)
        if kind in IMAGE_TYPES:
            return _image(fh, rel, IMAGE_TYPES[kind], stat.st_size)
        if kind is not None:
            return _binary_refusal(rel, kind, stat.st_size)
        fh.seek(0)
        total: int | None = None
        more_after = False
        found = encoding.bom_encoding(head)
        wide = found is not None and found[1] != "utf-8"
        if stat.st_size <= WHOLE_FILE_BYTES or wide:
            if stat.st_size > MAX_WIDE_ENCODING_BYTES:
                return ToolResult.error(
                    f"{rel} is a {stat.st_size}-byte UTF-16/32 file, too big to window. "
                    "Convert it with run_command (iconv) or search it with grep."
                )
            total, label = _read_whole(path, fh.read(), window)
        else:
            more_after, label = _read_streamed(fh, window)
    if stat.st_size == 0:
        readstate.record_read(context, path, stat, 0, 0)
        return ToolResult(content=f"({rel} is empty)", metadata={"resources": [f"file:{rel}"]})
    if not window.lines:
        where = f"it has {total} lines" if total is not None else "the file ends before it"
        return ToolResult.error(f"offset {offset} is past the end of {rel}: {where}.")
    readstate.record_read(context, path, stat, offset, window.end)
    notes = []
    if label != "utf-8":
        notes.append(f"decoded as {label}")
    next_line = window.end + 1
    if total is not None and (offset > 1 or window.end < total):
        notes.append(f"showing lines {offset}-{window.end} of {total}")
        if window.end < total:
            notes.append(f"read on with offset={next_line}")
    elif total is None and (more_after or window.budget_hit or offset > 1):
        notes.append(f"showing lines {offset}-{window.end} of a {stat.st_size}-byte file")
        if more_after or window.budget_hit:
            notes.append(f"more lines follow: read on with offset={next_line}")
    if window.budget_hit:
        notes.append("output size limit reached")
    body = "\n".join(window.lines)
    if notes:
        body += "\n(" + "; ".join(notes) + ")"
    return ToolResult(
        content=body,
        metadata={"resources": [f"file:{rel}:{offset}-{window.end}"]},
    )
