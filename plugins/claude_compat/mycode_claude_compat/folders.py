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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.agent_plugins import (
    Problem,
    inside,
    read_manifest,
    read_mcp,
    skill_folders,
)
from mycode_claude_compat.codex import bridge_entry
from mycode_claude_compat.sources import HookSet, parse_hooks, read_json_file

FORMATS = ("agent-plugins", "codex", "claude-code")


@dataclass
class PluginFolder:
    """One plugin folder and what it contributes."""

    root: Path
    name: str
    layer: str
    """Where the folder was named: ``cli``, ``user``, ``project``, ``local``, ``installed``."""
    format: str = "claude-code"
    version: str | None = None
    manifest: bool = False
    hooks: int = 0
    commands: list[Path] = field(default_factory=list)
    agent_dirs: list[Path] = field(default_factory=list)
    skill_dirs: list[Path] = field(default_factory=list)
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    lsp_servers: dict[str, Any] = field(default_factory=dict)
    """``lspServers`` (or ``.lsp.json``): language servers for the ``lsp`` plugin, by name."""
    problems: list[str] = field(default_factory=list)
    fatal: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    hook_set: HookSet = field(default_factory=HookSet)
    """This folder's own hooks (merged into the run's unless the folder may not run code)."""
    grants: bool = True
    """Whether its commands' ``allowed-tools`` are granted (not once its files changed since
    it was installed)."""

    @property
    def rejected(self) -> bool:
        """Whether a fatal problem keeps every component of the folder out."""
        return bool(self.fatal)

    def reject(self, problem: Problem) -> None:
        """Note a fatal problem: it keeps the whole folder out. ``problems`` (what notices
        show) gets it marked ``rejected:``, which is how :func:`.install.report_of` tells it
        from the warnings there."""
        self.fatal.append(problem)
        self.problems.append(f"rejected: {problem.message} (§{problem.section})")

    def skip(self, what: str, reason: str) -> None:
        """Note one component left out, and why."""
        self.skipped.append({"what": what, "reason": reason})

    def skill_names(self) -> list[str]:
        """The folder names of the skills it contributes (``skill_dirs`` holds folders of skill
        folders, and for Codex also single skill folders found deeper)."""
        names = []
        for d in self.skill_dirs:
            if (d / "SKILL.md").is_file():
                names.append(d.name)
            else:
                names += [p.parent.name for p in d.glob("*/SKILL.md")]
        return sorted(names)

    def listing_row(self) -> dict[str, Any]:
        """The row of this folder plugin in ``mycode plugins`` (SPEC §11)."""
        row = self.describe()
        return {
            "name": self.name,
            "distribution": None,
            "version": self.version,
            "hooks": [],
            "format": self.format,
            "source": self.layer,
            "path": str(self.root),
            "contributes": row["contributes"],
            "skipped": self.skipped,
        }

    def describe(self) -> dict[str, Any]:
        """JSON for ``mycode plugins``."""
        return {
            "name": self.name,
            "format": self.format,
            "source": self.layer,
            "path": str(self.root),
            "version": self.version,
            "manifest": self.manifest,
            "named_by": self.layer,
            "contributes": {
                "skills": self.skill_names(),
                "mcp_servers": sorted(self.mcp_servers),
                "hooks": self.hooks,
                "commands": sorted(path.stem for path in self.commands),
                "agents": sorted(p.stem for d in self.agent_dirs for p in sorted(d.glob("*.md"))),
                "lsp_servers": sorted(self.lsp_servers),
            },
            "hooks": self.hooks,
            "commands": sorted(path.stem for path in self.commands),
            "agents": sorted(p.stem for d in self.agent_dirs for p in sorted(d.glob("*.md"))),
            "skills": self.skill_names(),
            "mcp_servers": sorted(self.mcp_servers),
            "skipped": self.skipped,
            "problems": self.problems,
        }


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


def data_dir(home: Path, name: str) -> Path:
    """``PLUGIN_DATA`` of the plugin ``name``: ``$MYCODE_HOME/plugin-data/<name>`` (kept across
    updates, removed with the plugin)."""
    return home / "plugin-data" / name


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
        folder = _native(root, layer, kind, home)
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


def _paths(root: Path, value: Any, default: str, folder: PluginFolder | None = None) -> list[Path]:
    """Manifest path fields: a string or a list of strings, relative to the folder; a path
    leading outside the folder (``..``, a symlink out) is refused (noted in ``folder``)."""
    items = [default] if value is None else [value] if isinstance(value, str) else value
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, str):
            continue
        path = Path(os.path.realpath(root / item))
        if not inside(path, root):
            if folder is not None:
                folder.problems.append(f"{item!r} leads outside the plugin folder; ignored")
                folder.skip(item, "leads outside the plugin folder")
            continue
        out.append(path)
    return out


def _also(value: Any, default: str) -> Any:
    """A manifest path field (a string or a list) with the default folder first: the
    manifest's paths are added to it, not put in its place."""
    if isinstance(value, str):
        return [default, value]
    return [default, *value] if isinstance(value, list) else [default]


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


def _native(root: Path, layer: str, kind: str, home: Path) -> PluginFolder:
    """A Codex or Claude Code folder."""
    folder = PluginFolder(root=root, name=root.name, layer=layer, format=kind)
    hooks = folder.hook_set
    manifest_dir = ".codex-plugin" if kind == "codex" else ".claude-plugin"
    manifest_path = root / manifest_dir / "plugin.json"
    manifest, problem = read_json_file(manifest_path)
    if problem is None and manifest_path.is_file() and not inside(manifest_path, root):
        manifest, problem = None, f"{manifest_path} leads outside the plugin folder"
    if problem:
        if kind == "codex":
            folder.reject(Problem(problem, "codex"))
            return folder
        folder.problems.append(problem)
    manifest = manifest or {}
    folder.manifest = manifest_path.is_file() and problem is None
    if isinstance(manifest.get("name"), str) and manifest["name"].strip():
        folder.name = manifest["name"].strip()
    if isinstance(manifest.get("version"), str):
        folder.version = manifest["version"]
    hooks_value = manifest.get("hooks")
    sources: list[tuple[str, Any]] = []
    inline = [hooks_value] if isinstance(hooks_value, dict) else []
    if isinstance(hooks_value, list) and all(isinstance(item, dict) for item in hooks_value):
        inline = hooks_value  # Codex: a list of inline hook objects
    for index, item in enumerate(inline):
        where = "hooks" if isinstance(hooks_value, dict) else f"hooks[{index}]"
        sources.append((f"{manifest_path} ({where})", item))
    for path in _paths(root, None if inline else hooks_value, "hooks/hooks.json", folder):
        data, problem = read_json_file(path)
        if problem:
            folder.problems.append(problem)
        elif data is not None:
            sources.append((str(path), data))
    for source, data in sources:
        folder.problems += parse_hooks(
            data,
            source=source,
            layer=f"plugin:{folder.name}",
            plugin_root=root,
            plugin_data=data_dir(home, folder.name),
            into=hooks,
        )
    folder.hooks = hooks.count()
    if kind == "claude-code":
        commands: list[Path] = []
        for directory in _paths(root, _also(manifest.get("commands"), "commands"), "", folder):
            if directory.is_file() and directory.suffix == ".md":
                commands.append(directory)
            elif directory.is_dir():
                commands += sorted(directory.glob("*.md"))
        folder.commands = list(dict.fromkeys(commands))
        agents = _paths(root, _also(manifest.get("agents"), "agents"), "", folder)
        folder.agent_dirs = list(dict.fromkeys(d for d in agents if d.is_dir()))
    # both formats add the manifest's paths to the default folders (Claude Code: "custom paths
    # supplement default directories"; Codex: skills/ and the manifest's)
    skills_value = _also(manifest.get("skills"), "skills")
    folder.skill_dirs = list(
        dict.fromkeys(d for d in _paths(root, skills_value, "skills", folder) if d.is_dir())
    )
    if kind == "codex":  # Codex finds skills at any depth of a skills folder (up to six)
        nested = [n for d in folder.skill_dirs for n in _nested_skill_folders(d, root)]
        folder.skill_dirs = list(dict.fromkeys([*folder.skill_dirs, *nested]))
    mcp_value = manifest.get("mcpServers")
    servers: dict[str, Any] = {}
    if isinstance(mcp_value, dict):
        inline = mcp_value.get("mcpServers", mcp_value)
        servers = dict(inline) if isinstance(inline, dict) else {}
    else:
        for path in _paths(root, mcp_value, ".mcp.json", folder):
            data, problem = read_json_file(path)
            if problem:
                folder.problems.append(problem)
            elif data is not None:
                table = data.get("mcpServers", {}) if "mcpServers" in data else _bare(data)
                if isinstance(table, dict):
                    servers.update(table)
    plugin_data = data_dir(home, folder.name)
    for name, entry in servers.items():
        if not isinstance(entry, dict):
            folder.skip(f"mcp server {name}", "the entry is not an object")
            continue
        if kind == "codex":
            entry = bridge_entry(entry)
        entry = _expand(dict(entry), root, plugin_data)
        cwd = entry.get("cwd")
        if isinstance(cwd, str) and cwd.strip() and not os.path.isabs(cwd):
            # relative to the plugin's folder, as Codex reads it (``"cwd": "."``), not to
            # wherever mycode happens to run
            resolved = Path(os.path.realpath(root / cwd))
            if not inside(resolved, root):
                folder.skip(f"mcp server {name}", f"cwd {cwd!r} leads outside the plugin folder")
                continue
            entry["cwd"] = str(resolved)
        env = dict(entry.get("env") or {}) if isinstance(entry.get("env"), dict) else {}
        env.update({"PLUGIN_ROOT": str(root), "PLUGIN_DATA": str(plugin_data)})
        if entry.get("command") or not entry.get("url"):
            entry["env"] = env
            entry.setdefault("cwd", str(root))
        folder.mcp_servers[f"{folder.name}_{name}"] = entry
    if kind == "codex" and (manifest.get("apps") or (root / ".app.json").is_file()):
        folder.skip("apps", "ChatGPT app connectors are not supported by mycode")
    if kind == "claude-code":
        folder.lsp_servers = _lsp_servers(root, manifest.get("lspServers"), folder, plugin_data)
    return folder


def _nested_skill_folders(top: Path, root: Path, max_depth: int = 6) -> list[Path]:
    """The skill folders (holding ``SKILL.md``) deeper than ``top``'s own subfolders, as Codex
    scans a skills folder: breadth first, at most ``max_depth`` levels, names starting with
    ``.`` skipped, folders leading outside ``root`` left out (the first level is ``top``'s,
    registered with it)."""
    found: list[Path] = []
    seen = {top}
    queue = [(top, 0)]
    while queue and len(seen) < 2000:
        directory, depth = queue.pop(0)
        try:
            names = sorted(entry.name for entry in os.scandir(directory) if entry.is_dir())
        except OSError:
            continue
        for name in names:
            path = Path(os.path.realpath(directory / name))
            if name.startswith(".") or path in seen or not inside(path, root):
                continue
            seen.add(path)
            if depth >= 1 and (path / "SKILL.md").is_file():
                found.append(path)
            if depth + 1 < max_depth:
                queue.append((path, depth + 1))
    return found


def _lsp_servers(root: Path, value: Any, folder: PluginFolder, data: Path) -> dict[str, Any]:
    """``lspServers``: entries inline, or the JSON file(s) holding them (default ``.lsp.json``,
    when it exists), ``${CLAUDE_PLUGIN_ROOT}`` expanded."""
    table: dict[str, Any] = {}
    if isinstance(value, dict):
        table = dict(value)
    elif value is not None or (root / ".lsp.json").is_file():
        for path in _paths(root, value, ".lsp.json", folder):
            found, problem = read_json_file(path)
            if problem:
                folder.problems.append(problem)
            elif isinstance(found, dict):
                table.update(found.get("lspServers", found))
    servers = {}
    for name, entry in table.items():
        if isinstance(entry, dict):
            servers[str(name)] = _expand(dict(entry), root, data)
        else:
            folder.skip(f"lsp server {name}", "the entry is not an object")
    return servers


def _bare(data: dict[str, Any]) -> dict[str, Any]:
    """A plugin's ``.mcp.json`` written without the ``mcpServers`` wrapper, as Claude Code
    also reads it (the official GitHub plugin's ``{"github": {"type": "http", ...}}``): the
    entries that look like servers (an object with ``command`` or ``url``)."""
    return {
        name: entry
        for name, entry in data.items()
        if isinstance(entry, dict) and ("command" in entry or "url" in entry)
    }


def _expand(value: Any, root: Path, data: Path) -> Any:
    if isinstance(value, str):
        for key, text in (
            ("${CLAUDE_PLUGIN_ROOT}", str(root)),
            ("${PLUGIN_ROOT}", str(root)),
            ("${CLAUDE_PLUGIN_DATA}", str(data)),
            ("${PLUGIN_DATA}", str(data)),
        ):
            value = value.replace(key, text)
        return value
    if isinstance(value, list):
        return [_expand(item, root, data) for item in value]
    if isinstance(value, dict):
        return {key: _expand(item, root, data) for key, item in value.items()}
    return value


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
