"""Claude Code plugin folders: ``.claude-plugin/plugin.json`` (optional), ``hooks/hooks.json``,
``commands/*.md``, ``agents/*.md``, ``skills/*/SKILL.md``, ``.mcp.json``."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.sources import HookSet, parse_hooks, read_json_file


@dataclass
class PluginFolder:
    """One plugin folder and what it contributes."""

    root: Path
    name: str
    layer: str
    """Where the folder was named: ``cli``, ``user``, ``project``, ``local``."""
    version: str | None = None
    manifest: bool = False
    hooks: int = 0
    commands: list[Path] = field(default_factory=list)
    agent_dirs: list[Path] = field(default_factory=list)
    skill_dirs: list[Path] = field(default_factory=list)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        """JSON for ``mycode plugins``."""
        return {
            "path": str(self.root),
            "name": self.name,
            "version": self.version,
            "manifest": self.manifest,
            "named_by": self.layer,
            "hooks": self.hooks,
            "commands": sorted(path.stem for path in self.commands),
            "agents": sorted(p.stem for d in self.agent_dirs for p in sorted(d.glob("*.md"))),
            "skills": sorted(
                p.parent.name for d in self.skill_dirs for p in sorted(d.glob("*/SKILL.md"))
            ),
            "mcp_servers": sorted(self.mcp_servers),
            "problems": self.problems,
        }


def _paths(root: Path, value: Any, default: str) -> list[Path]:
    """Manifest path fields: a string or a list of strings, relative to the folder."""
    items = [default] if value is None else [value] if isinstance(value, str) else value
    out = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            out.append((root / item).resolve())
    return out


def load_folder(root: Path, layer: str, hooks: HookSet) -> PluginFolder:
    """Read one plugin folder; its hooks go into ``hooks``. Problems are collected, never
    raised."""
    folder = PluginFolder(root=root, name=root.name, layer=layer)
    manifest_path = root / ".claude-plugin" / "plugin.json"
    manifest, problem = read_json_file(manifest_path)
    if problem:
        folder.problems.append(problem)
    manifest = manifest or {}
    folder.manifest = manifest_path.is_file() and problem is None
    if isinstance(manifest.get("name"), str) and manifest["name"].strip():
        folder.name = manifest["name"].strip()
    if isinstance(manifest.get("version"), str):
        folder.version = manifest["version"]
    before = hooks.count()
    hooks_value = manifest.get("hooks")
    sources: list[tuple[str, Any]] = []
    if isinstance(hooks_value, dict):
        sources.append((f"{manifest_path} (hooks)", hooks_value))
    for path in _paths(
        root, None if isinstance(hooks_value, dict) else hooks_value, "hooks/hooks.json"
    ):
        data, problem = read_json_file(path)
        if problem:
            folder.problems.append(problem)
        elif data is not None:
            sources.append((str(path), data))
    for source, data in sources:
        folder.problems += parse_hooks(
            data, source=source, layer=f"plugin:{folder.name}", plugin_root=root, into=hooks
        )
    folder.hooks = hooks.count() - before
    for directory in _paths(root, manifest.get("commands"), "commands"):
        if directory.is_file() and directory.suffix == ".md":
            folder.commands.append(directory)
        elif directory.is_dir():
            folder.commands += sorted(directory.glob("*.md"))
    folder.agent_dirs = [d for d in _paths(root, manifest.get("agents"), "agents") if d.is_dir()]
    folder.skill_dirs = [d for d in _paths(root, manifest.get("skills"), "skills") if d.is_dir()]
    mcp_value = manifest.get("mcpServers")
    if isinstance(mcp_value, dict):
        folder.mcp_servers = dict(mcp_value.get("mcpServers", mcp_value))
    else:
        for path in _paths(root, mcp_value, ".mcp.json"):
            data, problem = read_json_file(path)
            if problem:
                folder.problems.append(problem)
            elif data is not None:
                servers = data.get("mcpServers", {})
                if isinstance(servers, dict):
                    folder.mcp_servers.update(servers)
    return folder


def _expand(value: Any, root: Path) -> Any:
    if isinstance(value, str):
        return value.replace("${CLAUDE_PLUGIN_ROOT}", str(root))
    if isinstance(value, list):
        return [_expand(item, root) for item in value]
    if isinstance(value, dict):
        return {key: _expand(item, root) for key, item in value.items()}
    return value


def mcp_config_file(folder: PluginFolder, home: Path) -> Path | None:
    """The folder's MCP servers as an ``.mcp.json`` under ``MYCODE_HOME`` with
    ``${CLAUDE_PLUGIN_ROOT}`` expanded (the MCP bridge reads it like ``--mcp-config``)."""
    if not folder.mcp_servers:
        return None
    data = {"mcpServers": _expand(folder.mcp_servers, folder.root)}
    text = json.dumps(data, indent=2, sort_keys=True)
    digest = hashlib.sha256(f"{folder.root}\n{text}".encode()).hexdigest()[:12]
    path = home / "claude_compat" / "mcp" / f"{folder.name}-{digest}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        folder.problems.append(f"cannot write {path}: {exc}")
        return None
    return path
