"""Claude Code's ``.claude/settings*.json`` as project config layers (SPEC §8): their
``permissions`` rules in mycode's syntax (``Bash(npm test:*)`` → ``run_command(npm test:*)``),
``defaultMode`` and MCP server approval; untrusted, they are restricted like any project layer."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mycode_core.project_files import ProjectFileRefused, read_project_text
from mycode_core.trust import LAYER_FILES


def split_rules(value: str) -> list[str]:
    """Rules split at commas and spaces outside parentheses, as ``--allowedTools`` is read."""
    rules, current, depth = [], "", 0
    for char in value:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth <= 0 and (char == "," or char.isspace()):
            if current:
                rules.append(current)
            current, depth = "", 0
            continue
        current += char
    return [*rules, current] if current else rules


# Claude Code's tool names and the mycode tool each stands for, for rules, skills and profiles
CLAUDE_TOOL_NAMES = {
    "Bash": "run_command", "Read": "read_file", "Write": "write_file", "Edit": "edit_file",
    "MultiEdit": "edit_file", "NotebookEdit": "edit_file", "Glob": "glob", "LS": "glob",
    "Grep": "grep", "TodoWrite": "todo_write", "Task": "delegate_task", "Agent": "delegate_task",
    "Skill": "load_skill", "LSP": "lsp",
}  # fmt: skip
_BY_LOWER = {name.lower(): mine for name, mine in CLAUDE_TOOL_NAMES.items()}


def mycode_tool_name(name: str) -> str:
    """The mycode tool a Claude Code tool name (any case) stands for; others are returned as is."""
    return _BY_LOWER.get(name.lower(), name)


_MODES = {  # permissions.defaultMode -> permission_mode
    "default": "default", "acceptEdits": "accept-edits", "plan": "plan",
    "bypassPermissions": "bypass",
}  # fmt: skip
_PATH_TOOLS = {"read_file", "write_file", "edit_file", "glob", "grep"}
_ENTRY = re.compile(r"^\s*([A-Za-z0-9_*-]+)\s*(?:\((.*)\))?\s*$", re.S)


def mycode_rule(entry: str) -> str | None:
    """One Claude Code rule in mycode's syntax, or ``None`` when it is not a rule."""
    found = _ENTRY.match(entry)
    if found is None:
        return None
    name = mycode_tool_name(found.group(1))
    spec = (found.group(2) or "").strip()
    if not spec or spec == "*":
        return name
    if name in _PATH_TOOLS:  # "/x" is from the project root, "//x" an absolute path
        spec = spec[2:] if spec.startswith("./") else spec.removeprefix("/")
    return f"{name}({spec})"


def claude_layers(workspace: Path, refused: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """``(layer, data)`` per Claude Code settings file with rules; unreadable ones: ``refused``."""
    layers: list[tuple[str, dict[str, Any]]] = []
    for name in ("claude-project", "claude-local"):
        relative = LAYER_FILES[name]
        try:
            data = json.loads(read_project_text(workspace, Path(relative)))
        except FileNotFoundError:
            continue
        except ProjectFileRefused as exc:
            refused.append(str(exc))
            continue
        except (OSError, ValueError) as exc:
            refused.append(f"{relative}: not read ({type(exc).__name__}); its rules are ignored")
            continue
        if isinstance(data, dict) and (layer := _layer(data)):
            layers.append((name, layer))
    return layers


def _layer(data: dict[str, Any]) -> dict[str, Any]:
    """One settings file's config table: rules, mode and ``[mcp] trust_project_servers``."""
    layer: dict[str, Any] = {}
    permissions = data.get("permissions")
    table: dict[str, list[str]] = {}
    for kind in ("allow", "ask", "deny"):
        entries = permissions.get(kind) if isinstance(permissions, dict) else None
        rules = [mycode_rule(str(e)) for e in entries] if isinstance(entries, list) else []
        if kept := [rule for rule in rules if rule]:
            table[kind] = kept
    if table:
        layer["permissions"] = table
    mode = permissions.get("defaultMode") if isinstance(permissions, dict) else None
    if isinstance(mode, str) and mode in _MODES:  # an untrusted project keeps only "plan"
        layer["permission_mode"] = _MODES[mode]
    servers = data.get("enabledMcpjsonServers")
    if data.get("enableAllProjectMcpServers") is True:
        layer["mcp"] = {"trust_project_servers": True}
    elif isinstance(servers, list) and servers:
        layer["mcp"] = {"trust_project_servers": [str(s) for s in servers]}
    return layer
