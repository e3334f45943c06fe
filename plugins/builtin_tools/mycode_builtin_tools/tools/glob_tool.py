"""``glob``: files matching a pattern such as ``**/*.py``, newest first.

``*`` and ``?`` stay within one folder, ``**`` crosses folders, ``{a,b}`` alternates and
``[...]`` is a character class. ``.gitignore`` is respected; ``.git``, ``node_modules`` and
virtualenvs are skipped unless the pattern names them.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mycode_builtin_tools.permissions.rules import read_denied
from mycode_builtin_tools.ripgrep import Stopped
from mycode_builtin_tools.walk import home_skip, list_files, skip_dirs_for
from mycode_core import ReadPath, RunContext, tool
from mycode_core.paths import BoundaryError, relative, resolve_in_workspace
from mycode_core.records import ToolResult

DESCRIPTION = "Find files by glob ('**/*.py'), newest first, at most 100; respects .gitignore."
MAX_RESULTS = 100


def _braces(pattern: str) -> list[str]:
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if not match:
        return [pattern]
    out: list[str] = []
    for option in match.group(1).split(","):
        out.extend(_braces(pattern[: match.start()] + option + pattern[match.end() :]))
    return out


def _translate(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(char))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex matching relative POSIX paths against ``pattern`` (brace-expanded)."""
    alternatives = [_translate(p) for p in _braces(pattern)]
    return re.compile("(?:" + "|".join(alternatives) + r")\Z", re.DOTALL)


def _split_pattern(pattern: str, base: Path, context: RunContext) -> tuple[str, Path]:
    """Make an absolute pattern relative to ``base``: its fixed leading folders are a path the
    model wrote inside the pattern, so they go through the workspace boundary here."""
    pattern = pattern.replace("\\", "/")
    if pattern.startswith("/"):
        static = []
        for part in pattern.split("/")[1:]:
            if any(ch in part for ch in "*?[{"):
                break
            static.append(part)
        prefix = "/" + "/".join(static)
        root = resolve_in_workspace(prefix, context)
        rest = pattern[len(prefix) :].lstrip("/")
        return rest or "*", root
    if pattern.startswith("./"):
        pattern = pattern[2:]
    if ".." in pattern.split("/"):
        raise BoundaryError(f"pattern {pattern!r} may not use '..'; use the path argument")
    return pattern, base


def _matches(base: Path, pattern: str, context: RunContext) -> list[str]:
    """The files under ``base`` matching ``pattern``, but those a ``deny`` rule keeps from
    being read (:func:`.rules.read_denied`), as Claude Code's Glob leaves them out."""
    regex = compile_glob(pattern)
    skip = skip_dirs_for(pattern) + home_skip(base, context.home)
    found = [rel for rel in list_files(base, skip, context.cancelled) if regex.match(rel)]
    denied = read_denied(context.settings, "glob")
    if denied is None:
        return found
    prefix = relative(base, context)
    return [rel for rel in found if not denied(rel if prefix == "." else f"{prefix}/{rel}")]


@tool(name="glob", read_only=True, description=DESCRIPTION)
def glob(
    context: RunContext,
    pattern: str,
    path: ReadPath = Path("."),
) -> ToolResult:
    """List files matching ``pattern`` under ``path`` (default: the workspace), newest first."""
    if not pattern.strip():
        return ToolResult.error("pattern must be a non-empty glob such as '**/*.py'.")
    if "\x00" in pattern:
        return ToolResult.error("pattern contains a NUL byte")
    try:
        pattern, base = _split_pattern(pattern, path, context)
    except BoundaryError as exc:
        return ToolResult.error(str(exc))
    if not base.is_dir():
        return ToolResult.error(
            f"{relative(base, context)} is not a folder; path must be a folder."
        )
    note = ""
    try:
        found = _matches(base, pattern, context)
        if not found and "/" not in pattern:
            found = _matches(base, "**/" + pattern, context)
            if found:
                note = (
                    f"(nothing matched {pattern!r} at the top level; these match '**/{pattern}')\n"
                )
    except Stopped as exc:
        return ToolResult.error(f"the listing {exc}; narrow the pattern or path.")
    prefix = relative(base, context)
    stamped = []
    for rel in found:
        full = base / rel
        try:
            mtime = os.stat(full).st_mtime
        except OSError:
            continue
        shown = rel if prefix == "." else f"{prefix}/{rel}"
        stamped.append((-mtime, shown))
    stamped.sort()
    where = "" if prefix == "." else f" under {prefix}"
    if not stamped:
        return ToolResult(content=f"No files match {pattern!r}{where}.")
    lines = [shown for _mtime, shown in stamped[:MAX_RESULTS]]
    body = note + "\n".join(lines)
    extra = len(stamped) - MAX_RESULTS
    if extra > 0:
        body += f"\n({extra} more files not shown; narrow the pattern or path)"
    return ToolResult(content=body, metadata={"resources": [f"glob:{prefix}:{pattern}"]})
