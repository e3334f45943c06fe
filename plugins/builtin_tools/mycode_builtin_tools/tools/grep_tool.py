"""``grep``: regex search with ripgrep semantics (ripgrep itself, else Python ``re``)."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, WithJsonSchema

from mycode_builtin_tools import encoding
from mycode_builtin_tools.permissions.rules import read_denied
from mycode_builtin_tools.ripgrep import Stalled, Stopped, rg_path, run_rg
from mycode_builtin_tools.tools.glob_tool import compile_glob
from mycode_builtin_tools.walk import home_skip, python_files, rg_skip_args, skip_dirs_for
from mycode_core import ReadPath, RunContext, tool
from mycode_core.api import safeopen
from mycode_core.paths import relative
from mycode_core.records import ToolResult

DESCRIPTION = (
    "Regex search of file contents (ripgrep, respects .gitignore). output_mode: "
    "files_with_matches (default), content (path:line:text) or count."
)

DEFAULT_HEAD_LIMIT = 250
MAX_OUTPUT_CHARS = 30_000
MAX_COLUMNS = 500
MAX_FILE_BYTES = 64 * 1024 * 1024
MODES = ("content", "files_with_matches", "count")


class GrepError(Exception):
    """The search could not run (bad regex, …); the message is for the model."""


@dataclass(frozen=True)
class Query:
    """What to look for: the regex and the options that shape the search itself."""

    pattern: str
    glob: str | None = None
    case_insensitive: bool = False
    context: int = 0
    home: Path | None = None
    """``MYCODE_HOME``: left out of the search when it lies in the workspace."""
    denied: Callable[[str], bool] | None = None
    """The files a ``deny`` rule keeps from being read (:func:`.rules.read_denied`): left out."""


def _rg_command(query: Query, base: Path, target: str, mode: str) -> list[str]:
    rg = rg_path()
    assert rg is not None
    cmd = [rg, "--no-config", "--hidden", "--no-require-git", "--color", "never"]
    cmd += rg_skip_args(skip_dirs_for(query.glob or "") + home_skip(base, query.home))
    if mode == "content":
        cmd += ["-n", "--no-heading", "-H", "--max-columns", str(MAX_COLUMNS)]
        cmd += ["--max-columns-preview"]
        if query.context:
            cmd += ["-C", str(query.context)]
    elif mode == "files_with_matches":
        cmd += ["-l"]
    else:
        cmd += ["-c", "-H"]
    if query.case_insensitive:
        cmd += ["-i"]
    if query.denied is not None and mode != "files_with_matches":
        cmd += ["--null"]  # a NUL after each path: the path of a line is then unambiguous
    if query.glob:
        cmd += ["--glob", query.glob]
    cmd += ["-e", query.pattern, "--", target]
    return cmd


def _run_rg(cmd: list[str], cwd: Path, cancelled: threading.Event | None) -> bytes:
    try:
        code, out, err = run_rg(cmd, cwd, cancelled)
    except Stopped as exc:
        raise GrepError(f"the search {exc}; narrow the path or glob") from None
    if code == 2 and not out:
        message = os.fsdecode(err).strip().splitlines()
        raise GrepError("ripgrep error: " + " ".join(message[:6])[:1500])
    return out


def _search(
    query: Query, base: Path, target: str, mode: str, limit: int, cancelled: threading.Event
) -> tuple[list[str], int]:
    """The matching lines (the first ``limit`` in ``content`` mode) and how many in all:
    ripgrep's, else (missing, or stalled on a FIFO ``.gitignore``) the Python search's."""
    if rg_path() is not None:
        with contextlib.suppress(Stalled):
            data = _run_rg(_rg_command(query, base, target, mode), base, cancelled)
            if query.denied is not None:
                lines = _without_denied(data, mode, query.denied)
                return lines[:limit] if mode == "content" else lines, len(lines)
            if mode == "content":
                return _first_lines(data, limit)
            lines = [_strip_dot(line) for line in data.decode("utf-8", "replace").splitlines()]
            return lines, len(lines)
    lines = _python_search(query, base, target, mode)
    return lines, len(lines)


def _without_denied(data: bytes, mode: str, denied: Callable[[str], bool]) -> list[str]:
    """ripgrep's lines (``--null`` after the path but in ``files_with_matches`` mode) without
    those of the ``denied`` files, in the usual form (``path:line:text``, ``path:count``)."""
    out: list[str] = []
    for line in data.decode("utf-8", "replace").splitlines():
        path, nul, rest = line.partition("\0")
        if not nul:  # a path of files_with_matches, or the "--" between context groups
            if mode != "files_with_matches":
                out += [line] if out and out[-1] != "--" else []
            elif not denied(_strip_dot(path)):
                out.append(_strip_dot(path))
        elif not denied(_strip_dot(path)):
            digits = len(rest) - len(rest.lstrip("0123456789"))
            sep = rest[digits : digits + 1] if mode == "content" else ""
            out.append(f"{_strip_dot(path)}{sep if sep in (':', '-') else ':'}{rest}")
    return out[:-1] if out and out[-1] == "--" else out


def _first_lines(data: bytes, count: int) -> tuple[list[str], int]:
    """The first ``count`` lines of ``data`` (decoded) and the total number of lines."""
    total = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
    end = -1
    for _ in range(min(count, total)):
        end = data.find(b"\n", end + 1)
        if end < 0:
            end = len(data)
            break
    head = data[: max(end, 0)].decode("utf-8", "replace").splitlines()
    return [_strip_dot(line) for line in head], total


def _glob_filter(pattern: str | None) -> Callable[[str], bool]:
    if not pattern:
        return lambda rel: True
    regex = compile_glob(pattern)
    if "/" in pattern:
        return lambda rel: bool(regex.match(rel))
    return lambda rel: bool(regex.match(rel.rsplit("/", 1)[-1]))


def _python_search(query: Query, base: Path, target: str, mode: str) -> list[str]:
    flags = re.IGNORECASE if query.case_insensitive else 0
    try:
        regex = re.compile(query.pattern, flags)
    except re.error as exc:
        raise GrepError(f"invalid regex: {exc}") from None
    context = query.context
    keep = _glob_filter(query.glob)
    start = base / target
    files = [target] if start.is_file() else []
    if not files:
        prefix = "" if target == "." else target + "/"
        skip = skip_dirs_for(query.glob or "") + home_skip(start, query.home)
        files = [prefix + rel for rel in python_files(start, skip) if keep(rel)]
    if query.denied is not None:
        files = [rel for rel in files if not query.denied(rel)]
    out: list[str] = []
    for rel in files:
        data = _read_regular(base / rel)
        if data is None:
            continue
        if encoding.binary_kind(data[: encoding.SNIFF_BYTES]):
            continue
        lines = encoding.decode(data).text.splitlines()
        hits = [i for i, line in enumerate(lines) if regex.search(line)]
        if not hits:
            continue
        if mode == "files_with_matches":
            out.append(rel)
        elif mode == "count":
            out.append(f"{rel}:{len(hits)}")
        else:
            shown: set[int] = set()
            for i in hits:
                shown.update(range(max(0, i - context), min(len(lines), i + context + 1)))
            previous = -2
            hit_set = set(hits)
            for i in sorted(shown):
                if context and previous >= 0 and i != previous + 1:
                    out.append("--")
                sep = ":" if i in hit_set else "-"
                out.append(f"{rel}{sep}{i + 1}{sep}{lines[i][:MAX_COLUMNS]}")
                previous = i
    return out


def _read_regular(path: Path) -> bytes | None:
    """The bytes of a regular file (at most ``MAX_FILE_BYTES``); ``None`` for symlinks, FIFOs,
    sockets, device nodes, huge or unreadable files — as ripgrep skips them."""
    try:
        fd = safeopen.open_read(path)  # O_NOFOLLOW | O_NONBLOCK, then must be S_ISREG
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        if os.fstat(fh.fileno()).st_size > MAX_FILE_BYTES:
            return None
        return fh.read(MAX_FILE_BYTES + 1)[:MAX_FILE_BYTES]


def _strip_dot(line: str) -> str:
    return line[2:] if line.startswith("./") else line


def _order(lines: list[str], mode: str, base: Path) -> list[str]:
    if mode == "files_with_matches":

        def newest(rel: str) -> tuple[float, str]:
            try:
                return (-os.stat(base / rel).st_mtime, rel)
            except OSError:
                return (0.0, rel)

        return sorted(lines, key=newest)
    if mode == "count":
        return sorted(lines)
    return lines


Where = ReadPath


@tool(name="grep", read_only=True, description=DESCRIPTION)
def grep(
    run: RunContext,
    pattern: str,
    path: Where = Path("."),
    glob: str | None = None,
    output_mode: Literal["content", "files_with_matches", "count"] | None = None,
    case_insensitive: bool | None = None,
    context: Annotated[int | None, Field(ge=0, le=50)] = None,
    head_limit: Annotated[int | None, Field(ge=1), WithJsonSchema({"type": "integer"})] = None,
) -> ToolResult:
    """Search file contents for a regex; see the tool description for the arguments.

    The run's context is ``run`` here: ``context`` is the model's number of context lines.
    """
    if pattern == "":
        return ToolResult.error("pattern must be a non-empty regular expression.")
    mode = output_mode or "files_with_matches"
    start = path
    if not start.exists():
        return ToolResult.error(f"{relative(start, run)} does not exist.")
    if not start.is_dir() and not start.is_file():
        # ripgrep reads a FIFO or device it is pointed at (and blocks); never hand it one
        kind = safeopen.kind_of(os.stat(start).st_mode)
        return ToolResult.error(f"{relative(start, run)} is {kind}, not a file or folder.")
    base = Path(run.workspace).resolve()
    target = relative(start, run)
    limit = DEFAULT_HEAD_LIMIT if not head_limit or head_limit <= 0 else head_limit
    denied = read_denied(run.settings, "grep")
    query = Query(pattern, glob or None, bool(case_insensitive), context or 0, run.home, denied)
    try:
        lines, total = _search(query, base, target, mode, limit, run.cancelled)
    except GrepError as exc:
        return ToolResult.error(str(exc))
    except OSError as exc:
        return ToolResult.error(f"search failed: {exc}")
    resources = [f"grep:{target}:{pattern}"]
    if not lines:
        return ToolResult(content="No matches found.", metadata={"resources": resources})
    lines = _order(lines, mode, base)
    shown: list[str] = []
    size = 0
    for line in lines[:limit]:
        if shown and size + len(line) > MAX_OUTPUT_CHARS:
            break
        shown.append(line)
        size += len(line) + 1
    body = "\n".join(shown)
    hidden = total - len(shown)
    if hidden > 0:
        body += f"\n({hidden} more lines not shown; raise head_limit or narrow the search)"
    if mode == "count":
        total = sum(
            int(line.rsplit(":", 1)[1]) for line in lines if line.rsplit(":", 1)[-1].isdigit()
        )
        body += f"\n({total} matches in {len(lines)} files)"
    return ToolResult(content=body, metadata={"resources": resources})
