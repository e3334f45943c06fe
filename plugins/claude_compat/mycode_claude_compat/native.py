"""The two native folder formats: Codex (``.codex-plugin/plugin.json``) and Claude Code
(``.claude-plugin/plugin.json`` and its default folders), read into a :class:`PluginFolder`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from mycode_claude_compat.agent_plugins import Problem, inside
from mycode_claude_compat.codex import bridge_entry
from mycode_claude_compat.plugin_folder import PluginFolder, data_dir
from mycode_claude_compat.sources import parse_hooks, read_json_file

DEFAULTS = {"skills", "commands", "agents", "hooks/hooks.json", ".mcp.json", ".lsp.json", ""}
"""The default locations of a native folder: absent is fine, unlike a path the manifest names."""


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
        if folder is not None and item not in DEFAULTS and not os.path.exists(path):
            # a path the manifest names that is not there: its hooks, skills or servers
            # would be missing without a word
            folder.problems.append(f"the manifest names {item!r}, which does not exist; ignored")
            folder.skip(item, "does not exist")
            continue
        out.append(path)
    return out


def _also(value: Any, default: str) -> Any:
    """A manifest path field (a string or a list) with the default folder first: the
    manifest's paths are added to it, not put in its place."""
    if isinstance(value, str):
        return [default, value]
    return [default, *value] if isinstance(value, list) else [default]


def _instead(value: Any) -> Any:
    """A manifest's ``commands`` or ``agents`` (Claude Code: "a custom path replaces the
    default directory"), Codex's ``skills`` and a marketplace entry's: the paths it names
    replace the default folder (``None``, also for an empty list, keeps the default)."""
    return value if value not in (None, []) else None


def _note_hidden_default(root: Path, part: str, named: list[Path], folder: PluginFolder) -> None:
    """Say in ``skipped`` that the manifest's ``commands`` or ``agents`` leave out the default
    folder, as Claude Code warns ("a default component folder is silently ignored")."""
    default = Path(os.path.realpath(root / part))
    if default.is_dir() and not any(p == default or default in p.parents for p in named):
        folder.skip(f"{part}/", f"the manifest's {part!r} replace it (name ./{part}/ to keep it)")


def _hook_sources(
    root: Path, manifest: dict[str, Any], manifest_path: Path, kind: str, folder: PluginFolder
) -> list[tuple[str, Any]]:
    """The hook documents of a native folder, ``(where, data)``, in loading order.

    Claude Code always loads ``hooks/hooks.json``, and a manifest's ``hooks`` (paths or an
    inline object) add to it; Claude Code refuses a manifest naming that file again
    ("Duplicate hooks file detected"), mycode reads it once. Codex reads the manifest's
    ``hooks`` (a path, inline objects) instead of ``hooks/hooks.json``."""
    value = manifest.get("hooks")
    inline = [value] if isinstance(value, dict) else []
    if isinstance(value, list) and all(isinstance(item, dict) for item in value):
        inline = value  # Codex: a list of inline hook objects
    files = None if inline else value
    if kind == "claude-code":
        files = _also(files, "hooks/hooks.json")
    sources: list[tuple[str, Any]] = []
    for path in dict.fromkeys(_paths(root, files, "hooks/hooks.json", folder)):
        data, problem = read_json_file(path)
        if problem:
            folder.problems.append(problem)
        elif data is not None:
            sources.append((str(path), data))
    for index, item in enumerate(inline):
        where = "hooks" if isinstance(value, dict) else f"hooks[{index}]"
        # Claude Code's manifest reference writes the events right under "hooks"; a
        # hooks.json-shaped object (its own "hooks" key) is read as it is
        document = item if "hooks" in item else {"hooks": item}
        sources.append((f"{manifest_path} ({where})", document))
    return sources


def read_native(root: Path, layer: str, kind: str, home: Path) -> PluginFolder:
    """Read a Codex (``kind="codex"``) or Claude Code (``"claude-code"``) folder."""
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
    for source, data in _hook_sources(root, manifest, manifest_path, kind, folder):
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
        named = _paths(root, _instead(manifest.get("commands")), "commands", folder)
        for directory in named:
            if directory.is_file() and directory.suffix == ".md":
                commands.append(directory)
            elif directory.is_dir():  # subfolders too: ``commands/review/security.md``
                from mycode_claude_compat.commands import markdown_files  # only when needed

                commands += markdown_files(directory)
        folder.commands = list(dict.fromkeys(commands))
        agents = _paths(root, _instead(manifest.get("agents")), "agents", folder)
        folder.agent_dirs = list(dict.fromkeys(d for d in agents if d.is_dir()))
        for part, paths in (("commands", named), ("agents", agents)):
            if _instead(manifest.get(part)) is not None:
                _note_hidden_default(root, part, paths, folder)
    skills_value = _instead(manifest.get("skills"))
    if kind == "claude-code" and manifest.get("strict") is not False:
        # Claude Code 2.1.136: a manifest's skills add to skills/ (a marketplace entry that
        # is the manifest, "strict": false, still lists the plugin's only skills)
        skills_value = _also(skills_value, "skills")
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
                table = _server_table(data)
                if table:
                    servers.update(table)
                else:
                    folder.skip(_where(path, root), "it names no MCP server (mcpServers)")
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
    for part in ("commands", "agents") if kind == "codex" else ():
        if manifest.get(part) or (root / part).is_dir():
            folder.skip(part, f"a Codex plugin's {part} are not read (skills, MCP servers, hooks)")
    if kind == "claude-code":
        folder.lsp_servers = _lsp_servers(root, manifest.get("lspServers"), folder, plugin_data)
        folder.bin_dir = _bin_dir(root, folder)
        _note_unread_parts(root, manifest, folder)
    _note_loose_skills(folder)
    return folder


def _bin_dir(root: Path, folder: PluginFolder) -> Path | None:
    """``bin/``: its executables are bare commands of the run (Claude Code puts the folder on
    the Bash tool's PATH); one leading outside the plugin folder is left out."""
    path = root / "bin"
    if not path.is_dir():
        return None
    if not inside(Path(os.path.realpath(path)), root):
        folder.skip("bin", "bin/ leads outside the plugin folder")
        return None
    return path


def _note_unread_parts(root: Path, manifest: dict[str, Any], folder: PluginFolder) -> None:
    """Name in ``skipped`` the parts of a Claude Code folder mycode does not use."""
    experimental = manifest.get("experimental")
    later = experimental if isinstance(experimental, dict) else {}
    unread = (
        ("output styles", manifest.get("outputStyles") or (root / "output-styles").is_dir(),
         "output styles are not applied (AGENTS.md or a skill can carry such instructions)"),
        ("monitors", manifest.get("monitors") or later.get("monitors") or
         (root / "monitors").is_dir(), "background monitors are not run"),
        ("settings.json", (root / "settings.json").is_file(),
         "a plugin's default settings (its main agent) are not applied"),
        ("workflows", (root / "workflows").is_dir(),
         "workflows need Claude Code's Workflow tool, which mycode does not have"),
        ("userConfig", manifest.get("userConfig"),
         "plugin options are not asked for (${user_config.*} is not filled in)"),
    )  # fmt: skip
    for what, present, reason in unread:
        if present:
            folder.skip(what, reason)


def _note_loose_skills(folder: PluginFolder) -> None:
    """A folder contributing nothing whose own subfolders are skills (a marketplace entry
    whose ``source`` is a ``skills/`` folder): Claude Code and Codex load no skill from it
    either — say so instead of installing an empty plugin without a word."""
    if folder.skill_dirs or folder.commands or folder.agent_dirs or folder.hooks:
        return
    if folder.mcp_servers or folder.lsp_servers:
        return
    try:
        loose = sorted(
            entry.name
            for entry in os.scandir(folder.root)
            if entry.is_dir() and (Path(entry.path) / "SKILL.md").is_file()
        )
    except OSError:
        return
    if loose:
        shown = ", ".join(loose[:3]) + (", …" if len(loose) > 3 else "")
        folder.problems.append(
            f"contributes nothing: its skill folders ({shown}) sit at the plugin's root, and "
            "a plugin's skills load from its skills/ folder (as in Claude Code and Codex)"
        )


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


def _server_table(data: dict[str, Any]) -> dict[str, Any]:
    """The servers of an MCP file: its ``mcpServers`` (or ``mcp_servers``, the name of Codex's
    own config table, which some Codex plugins write), else its bare entries."""
    for key in ("mcpServers", "mcp_servers"):
        if key in data:
            table = data[key]
            return dict(table) if isinstance(table, dict) else {}
    return _bare(data)


def _where(path: Path, root: Path) -> str:
    """``path`` as the plugin names it (relative to its folder)."""
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


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
