"""Plugin folders of the three formats (SPEC §9, §11), read into one :class:`PluginFolder`.

* ``agent-plugins``: a root ``plugin.json`` naming the Agent Plugins schema (see
  :mod:`.agent_plugins`): ``skills/`` and ``mcp.json`` only;
* ``codex``: ``.codex-plugin/plugin.json`` with ``skills``, ``mcpServers`` (a path or inline) and
  ``hooks`` (Claude Code's format);
* ``claude-code``: ``.claude-plugin/plugin.json`` (optional), ``hooks/hooks.json``,
  ``commands/*.md``, ``agents/*.md``, ``skills/*/SKILL.md``, ``.mcp.json``.

One folder holding several manifests loads once, as the first of that list (the portable
manifest wins; the others are named in ``skipped``). Paths leading outside the folder are refused.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from mycode_claude_compat.agent_plugins import read_manifest, read_mcp, skill_folders
from mycode_claude_compat.native import read_native
from mycode_claude_compat.plugin_folder import FORMATS, PluginFolder, data_dir
from mycode_claude_compat.sources import HookSet

__all__ = ["FORMATS", "PluginFolder", "data_dir", "detect_format", "load_folder", "read_folder"]


def detect_format(root: Path) -> str | None:
    """Which format ``root`` holds (the winner when it holds several), or ``None``.

    Agent Plugins first (the portable standard), then Claude Code, then Codex: a folder with
    both native manifests is most often a Claude Code plugin ported to Codex (obra/superpowers),
    and the Claude Code form gives mycode more — commands, agents and ``hooks/hooks.json``."""
    if os.path.lexists(root / "plugin.json"):
        return "agent-plugins"
    if os.path.lexists(root / ".claude-plugin" / "plugin.json"):
        return "claude-code"
    if os.path.lexists(root / ".codex-plugin" / "plugin.json"):
        return "codex"
    layout = ("hooks/hooks.json", "commands", "agents", "skills", ".mcp.json")
    if any(os.path.lexists(root / item) for item in layout):
        return "claude-code"
    return None


def read_folder(root: Path, layer: str, home: Path) -> PluginFolder:
    """Read one plugin folder of any format; problems are collected, never raised."""
    from mycode_claude_compat.agent_plugins import CACHE

    CACHE.bind(home)
    root = Path(os.path.realpath(root))
    kind = detect_format(root) or "claude-code"
    others = [
        f
        for f, marker in (("codex", ".codex-plugin/plugin.json"), ("claude-code", ".claude-plugin"))
        if f != kind and os.path.lexists(root / marker)
    ]
    if kind == "agent-plugins":
        folder = _agent_plugin(root, layer, home)
    else:
        folder = read_native(root, layer, kind, home)
    for other in others:
        folder.skip(f"{other} manifest", f"the {kind} manifest of this folder wins")
    CACHE.save()
    return folder


def _agent_plugin(root: Path, layer: str, home: Path) -> PluginFolder:
    folder = PluginFolder(root=root, name=root.name, layer=layer, format="agent-plugins")
    manifest, fatal, warnings = read_manifest(root)
    for problem in fatal:
        folder.reject(problem)
    folder.warnings += warnings
    if manifest is not None:
        folder.name = manifest["name"]
        folder.manifest = True
        version = manifest.get("version")
        folder.version = version if isinstance(version, str) else None
    if folder.fatal:
        return folder
    skills, skill_problems = skill_folders(root)
    folder.warnings += skill_problems
    for item in skill_problems:
        folder.skip("skills", item.message)
    if skills is not None:  # skill folders or SKILL.md files leading out: the skills plugin
        folder.skill_dirs.append(skills)  # refuses them (registered with root=the plugin root)
    mcp = read_mcp(root, folder.name, data_dir(home, folder.name))
    folder.mcp_servers = mcp.servers
    folder.warnings += mcp.warnings
    for what, reason in mcp.skipped:
        folder.skip(what, reason)
    folder.problems += [f"{p.message} (§{p.section})" for p in folder.warnings]
    return folder


def load_folder(root: Path, layer: str, hooks: HookSet, home: Path | None = None) -> PluginFolder:
    """Read one plugin folder (any format); its hooks also go into ``hooks``."""
    if home is None:
        from mycode_core.config import home_dir

        home = home_dir()
    folder = read_folder(root, layer, home)
    for entries in folder.hook_set.by_event.values():
        for matcher, hook in entries:
            hooks.add(matcher, hook)
    return folder


def mcp_config_file(folder: PluginFolder, home: Path) -> Path | None:
    """The folder's MCP servers as an ``.mcp.json`` under ``MYCODE_HOME``, placeholders
    already expanded (the MCP bridge reads it like ``--mcp-config``); creates ``PLUGIN_DATA``."""
    if not folder.mcp_servers:
        return None
    try:
        data_dir(home, folder.name).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        folder.problems.append(f"cannot create PLUGIN_DATA: {exc}")
    data = {"mcpServers": folder.mcp_servers}
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
