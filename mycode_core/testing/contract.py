"""``assert_tool_contract``: the checks every tool must pass to be as safe as the built-ins.

A plugin author runs it on each tool, with one example call that succeeds::

    def test_my_tool_keeps_the_contract(tmp_path):
        assert_tool_contract(word_count, tmp_path, example={"path": "notes.txt"},
                             files={"notes.txt": "one two"})
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mycode_core.records import TOOL_NAME, RunContext, Tool, ToolResult


class ToolContractError(AssertionError):
    """A tool broke the contract; the message says which check and what happened."""


def _context(tmp_path: Path, mode: str, files: Mapping[str, str]) -> RunContext:
    from mycode_core.config import Settings
    from mycode_core.testing.inprocess import make_context

    context = make_context(tmp_path, settings=Settings(permission_mode=mode))  # type: ignore[arg-type]
    for rel, text in files.items():
        target = context.workspace / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return context


def _fail(check: str, detail: str) -> ToolContractError:
    return ToolContractError(f"tool contract: {check}: {detail}")


def _call(tool: Tool, arguments: dict[str, Any], context: RunContext) -> ToolResult:
    from mycode_core.testing.inprocess import call_tool

    return call_tool(tool, arguments, context)


_PATHISH = re.compile(r"(^|_)(path|file|filename|dir|folder|directory)s?$")


def _path_like(tool: Tool) -> list[str]:
    """Declared path parameters, plus string parameters named like paths (``file``,
    ``output_path``...) that the tool forgot to declare — those must hold the boundary too."""
    names = list(tool.paths)
    for name, spec in (tool.input_schema.get("properties") or {}).items():
        if name not in names and _PATHISH.search(name) and spec.get("type") == "string":
            names.append(name)
    return names


def _tree(root: Path) -> dict[str, bytes]:
    found = {}
    for folder, _dirs, names in os.walk(root):
        for name in names:
            path = Path(folder) / name
            if not path.is_symlink():
                found[str(path.relative_to(root))] = path.read_bytes()
    return found


def assert_tool_contract(
    tool: Tool,
    tmp_path: Path,
    *,
    example: Mapping[str, Any],
    files: Mapping[str, str] | None = None,
) -> None:
    """Check ``tool`` against the core's contract; raises :class:`ToolContractError`.

    * the name matches ``^[a-zA-Z0-9_-]{1,64}$`` and the schema is a valid object schema that
      accepts ``example`` and serialises as a chat-completions tool;
    * ``example`` (a successful call, on a workspace holding ``files``) succeeds;
    * every path parameter refuses ``..`` escapes, absolute paths outside the workspace and
      symlinks that lead outside, and nothing outside changes;
    * a tool that may write is denied in plan mode and changes nothing there;
    * a write path of a successful call is recorded as a change (``metadata["mutated"]``).
    """
    from mycode_core.runtime.arguments import SchemaChecker
    from mycode_core.runtime.tools import writes_files

    files = dict(files or {})
    if not TOOL_NAME.match(tool.name):
        raise _fail("name", f"{tool.name!r} does not match {TOOL_NAME.pattern}")
    json.dumps(tool.spec())
    problem = SchemaChecker().check(tool, dict(example))[1]
    if problem is not None:
        raise _fail("schema", f"the example does not fit the schema: {problem}")

    ok = _call(tool, dict(example), _context(tmp_path / "ok", "default", files))
    if ok.is_error:
        raise _fail("example", f"the example call failed: {ok.text()[:300]}")
    for name, mode in tool.paths.items():
        if mode == "write" and name in example and name not in (ok.metadata.get("mutated") or []):
            written = [str(p) for p in ok.metadata.get("mutated") or []]
            if not any(str(example[name]).endswith(p) for p in written):
                raise _fail("mutation", f"writing {example[name]!r} was not recorded as a change")

    outside = tmp_path / "outside"
    outside.mkdir(parents=True, exist_ok=True)
    secret = outside / "secret.txt"
    secret.write_text("outside the workspace\n", encoding="utf-8")
    for index, name in enumerate(_path_like(tool)):
        base = tmp_path / f"escape{index}"
        context = _context(base, "default", files)
        link = context.workspace / "link-out"
        link.symlink_to(outside, target_is_directory=True)
        before = _tree(outside)
        attempts = {
            "a '..' escape": os.path.relpath(secret, context.workspace),
            "an absolute path outside": str(secret),
            "a symlink leading outside": "link-out/secret.txt",
        }
        for what, raw in attempts.items():
            result = _call(tool, {**example, name: raw}, context)
            if not result.is_error:
                hint = "" if name in tool.paths else " (declare it as ReadPath/WritePath)"
                raise _fail("boundary", f"{name}={raw!r} ({what}) was not refused{hint}")
        if _tree(outside) != before:
            raise _fail("boundary", "a refused call changed files outside the workspace")

    if writes_files(tool):
        context = _context(tmp_path / "plan", "plan", files)
        before = _tree(context.workspace)
        result = _call(tool, dict(example), context)
        if not result.is_error:
            raise _fail("plan mode", "a tool that may write ran in plan mode")
        if _tree(context.workspace) != before:
            raise _fail("plan mode", "the workspace changed in plan mode")
