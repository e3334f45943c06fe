"""Tool names and payloads as Claude Code's hooks see them (SPEC §9), both ways."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mycode_core.api import command_output

TOOL_NAMES = {
    "run_command": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "glob": "Glob",
    "grep": "Grep",
    "todo_write": "TodoWrite",
    "delegate_task": "Task",
    "lsp": "LSP",
    "load_skill": "Skill",
}


def claude_json(data: Any) -> str:
    """``data`` as Claude Code writes JSON (``JSON.stringify``): no spaces after ``,`` and
    ``:``, non-ASCII text as is. Hook scripts grep it literally (ralph-wiggum's Stop hook
    looks for ``"role":"assistant"`` in the transcript), so the spacing is part of the
    protocol."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


_PATH_TOOLS = ("read_file", "write_file", "edit_file")
# mycode argument -> Claude Code field, per tool (other fields keep their names)
_FIELDS: dict[str, dict[str, str]] = {
    "read_file": {"path": "file_path"},
    "write_file": {"path": "file_path"},
    "edit_file": {"path": "file_path"},
    "grep": {"case_insensitive": "-i", "context": "-C"},
    "delegate_task": {"task": "prompt", "agent": "subagent_type"},
    "load_skill": {"name": "skill"},
}


def cc_name(name: str) -> str:
    """The Claude Code name of a mycode tool (MCP tools keep ``mcp__server__tool``)."""
    return TOOL_NAMES.get(name, name)


def _absolute(raw: Any, workspace: Path) -> Any:
    if not isinstance(raw, str) or not raw:
        return raw
    path = Path(raw).expanduser()
    return str(path if path.is_absolute() else workspace / path)


def cc_input(name: str, arguments: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """``tool_input`` in Claude Code's field names (``file_path`` absolute)."""
    fields = _FIELDS.get(name, {})
    out: dict[str, Any] = {}
    for key, value in arguments.items():
        out[fields.get(key, key)] = value
    if name in _PATH_TOOLS and "file_path" in out:
        out["file_path"] = _absolute(out["file_path"], workspace)
    if name in ("glob", "grep") and out.get("path"):
        out["path"] = _absolute(out["path"], workspace)
    if name == "run_command" and isinstance(out.get("timeout"), int | float):
        out["timeout"] = int(out["timeout"] * 1000)  # Claude Code's Bash timeout is in ms
    return out


def mycode_input(name: str, tool_input: dict[str, Any], workspace: Path) -> dict[str, Any]:
    """The inverse of :func:`cc_input`: a hook's ``updatedInput`` as mycode arguments."""
    fields = {cc: mine for mine, cc in _FIELDS.get(name, {}).items()}
    out: dict[str, Any] = {}
    for key, value in tool_input.items():
        out[fields.get(key, key)] = value
    if name in _PATH_TOOLS and isinstance(out.get("path"), str):
        path = Path(out["path"])
        try:
            out["path"] = str(path.relative_to(workspace)) if path.is_absolute() else str(path)
        except ValueError:
            pass  # outside the workspace: the core boundary decides
    if name == "run_command" and isinstance(out.get("timeout"), int | float):
        out["timeout"] = max(1, int(out["timeout"] / 1000))
    return out


def content_text(content: Any) -> str:
    """A tool result's content as text (its text blocks joined)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content or ():
        if isinstance(block, dict) and block.get("type") == "text":
            parts.append(str(block.get("text", "")))
    return "\n".join(parts)


def cc_response(name: str, arguments: dict[str, Any], result: Any, workspace: Path) -> Any:
    """``tool_response`` shaped as Claude Code shapes it where known, else
    ``{content, is_error}``."""
    text = content_text(result.content)
    meta = result.metadata or {}
    if name == "run_command":
        stdout = meta.get("stdout")
        return {
            "stdout": stdout if isinstance(stdout, str) else command_output(text, meta),
            "stderr": meta.get("stderr", "") if isinstance(meta.get("stderr"), str) else "",
            "interrupted": bool(meta.get("timed_out") or meta.get("interrupted")),
            "isImage": False,
            "exit_code": meta.get("exit_code"),
        }
    if name in ("write_file", "edit_file"):
        response: dict[str, Any] = {
            "filePath": _absolute(arguments.get("path", ""), workspace),
            "success": not result.is_error,
        }
        if name == "write_file":
            response["content"] = arguments.get("content", "")
        else:
            response["oldString"] = arguments.get("old_string", "")
            response["newString"] = arguments.get("new_string", "")
            response["replaceAll"] = bool(arguments.get("replace_all", False))
        if result.is_error:
            response["error"] = text
        return response
    return {"content": text, "is_error": bool(result.is_error)}
