"""Which hook files and plugin folders apply to a run (SPEC §8, §9).

User-level sources always apply: ``$MYCODE_HOME/hooks.json``, ``~/.claude/settings.json`` when
``[claude_compat] user_claude_settings = true`` is set in the user config, and plugin folders
named by ``--plugin-dir`` or the user config's ``plugin_dirs``, and every folder installed under
``$MYCODE_HOME/plugins/`` (SPEC §11). Project sources
(``.claude/settings.json``, ``.claude/settings.local.json``, ``.mycode/hooks.json``,
Codex's ``.codex/hooks.json``, and
``plugin_dirs`` of the project config) apply only in a trusted workspace; otherwise one notice
names what was ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.folders import PluginFolder, detect_format, read_folder
from mycode_claude_compat.registry import checked_hash, installed_folders
from mycode_claude_compat.settings_env import session_env
from mycode_claude_compat.sources import HookSet, parse_hooks, read_json_file
from mycode_claude_compat.trust import is_trusted

USER_LAYERS = ("default", "user", "env", "cli")


@dataclass
class Loaded:
    """Everything the plugin found for one workspace."""

    hooks: HookSet = field(default_factory=HookSet)
    folders: list[PluginFolder] = field(default_factory=list)
    skipped: list[PluginFolder] = field(default_factory=list)
    """Folders left out entirely (rejected, or a name already taken)."""
    notices: list[str] = field(default_factory=list)
    trusted: bool = False
    env: dict[str, str] = field(default_factory=dict)
    """The ``env`` of the settings files that apply, later files winning (:mod:`.settings_env`)."""


def _section(data: dict[str, Any]) -> dict[str, Any]:
    value = data.get("claude_compat")
    return value if isinstance(value, dict) else {}


def user_claude(settings: Any) -> bool:
    """Whether the user's own config opts in to ``~/.claude`` (``user_claude_settings``)."""
    return any(
        _section(data).get("user_claude_settings") is True
        for name, data in getattr(settings, "layers", None) or []
        if name in USER_LAYERS
    )


def _hook_files(workspace: Path, home: Path, settings: Any) -> list[tuple[Path, str, bool]]:
    """``(path, layer, is_project)`` of every hooks file, in order."""
    files = [(home / "hooks.json", "user", False)]
    if user_claude(settings):
        files.append((Path.home() / ".claude" / "settings.json", "user", False))
    files += [
        (workspace / ".claude" / "settings.json", "project", True),
        (workspace / ".mycode" / "hooks.json", "project", True),
        (workspace / ".codex" / "hooks.json", "project", True),  # Codex's, same format
        (workspace / ".claude" / "settings.local.json", "local", True),
    ]
    return files


def _plugin_dirs(workspace: Path, home: Path, settings: Any) -> list[tuple[Path, str]]:
    """``(folder, layer)`` named by every settings layer, without duplicates."""
    out: dict[Path, str] = {}
    for name, data in getattr(settings, "layers", None) or []:
        raw = data.get("plugin_dirs") or []
        if isinstance(raw, str):
            raw = [raw]
        base = home if name == "user" else workspace
        for item in raw if isinstance(raw, list) else []:
            path = Path(str(item)).expanduser()
            path = (path if path.is_absolute() else base / path).resolve()
            out.setdefault(path, name)
    return list(out.items())


def _core_names_them() -> bool:
    """The core's trust notice already names ignored project hooks (one notice, SPEC §8)."""
    try:
        from mycode_core import trust as core_trust
    except ImportError:
        return False
    return hasattr(core_trust, "notice_text")


def _add_folder(
    loaded: Loaded, folder: PluginFolder, record: dict[str, Any] | None, home: Path
) -> None:
    """One folder into the run: rejected folders contribute nothing, a name already taken
    loses, an installed folder whose files changed since it was recorded runs no code."""
    if folder.rejected:
        folder.skip("plugin", "; ".join(f"{p.message} (§{p.section})" for p in folder.fatal))
        loaded.skipped.append(folder)
        for problem in folder.problems:
            loaded.notices.append(f"plugin folder {folder.root}: {problem}")
        return
    taken = next((f for f in loaded.folders if f.name == folder.name), None)
    if taken is not None:
        folder.skip("plugin", f"the name {folder.name!r} is already taken by {taken.root}")
        loaded.skipped.append(folder)
        loaded.notices.append(
            f"plugin folder {folder.root}: a plugin named {folder.name!r} is already loaded "
            f"from {taken.root}; ignored"
        )
        return
    for problem in folder.problems:
        loaded.notices.append(f"plugin folder {folder.name}: {problem}")
    runs_code = bool(
        folder.hook_set.count()
        or folder.mcp_servers
        or folder.lsp_servers
        or folder.commands
        or folder.bin_dir
    )
    if runs_code and record is not None and record.get("hash"):
        if checked_hash(folder.root, home) != record["hash"]:
            folder.grants = False
            for server in sorted(folder.mcp_servers):
                folder.skip(f"mcp server {server}", "files changed since install")
            for server in sorted(folder.lsp_servers):
                folder.skip(f"lsp server {server}", "files changed since install")
            folder.lsp_servers = {}
            if folder.bin_dir is not None:
                folder.skip("bin", "files changed since install")
                folder.bin_dir = None
            if folder.hook_set.count():
                folder.skip("hooks", "files changed since install")
            folder.mcp_servers = {}
            folder.hook_set = HookSet()
            folder.hooks = 0
            loaded.notices.append(
                f"plugin {folder.name}: its files changed since it was installed; its hooks, "
                "MCP and language servers, bin/ and commands' allowed-tools do not apply until "
                f"`mycode plugins trust {folder.name}`"
            )
    for entries in folder.hook_set.by_event.values():
        for matcher, hook in entries:
            loaded.hooks.add(matcher, hook)
    loaded.folders.append(folder)


def load(workspace: Path, home: Path, settings: Any) -> Loaded:
    """Collect hooks and plugin folders; never raises (problems become notices)."""
    loaded = Loaded(trusted=is_trusted(workspace, home, settings))
    ignored: list[str] = []
    for layer, data in getattr(settings, "layers", None) or []:  # read from USER_LAYERS only
        if layer not in USER_LAYERS and "user_claude_settings" in _section(data):
            loaded.notices.append(
                f"ignored [claude_compat] user_claude_settings (named in the {layer} config): "
                "only your own config (`$MYCODE_HOME/config.toml`) or flags opt in to ~/.claude"
            )
    disabled = False
    for path, layer, project in _hook_files(workspace, home, settings):
        data, problem = read_json_file(path, workspace if project else None)
        if problem:
            loaded.notices.append(f"Claude Code hooks: {problem}; ignored")
            continue
        if data is None:
            continue
        if project and not loaded.trusted:
            scratch = HookSet()
            parse_hooks(data, source=str(path), layer=layer, into=scratch)
            if scratch.count():
                ignored.append(f"{path} ({scratch.summary()})")
            continue
        disabled = disabled or data.get("disableAllHooks") is True
        if path.name.startswith("settings"):
            loaded.env.update(session_env(data, path, loaded.notices))
        for problem in parse_hooks(data, source=str(path), layer=layer, into=loaded.hooks):
            loaded.notices.append(f"Claude Code hooks: {problem}")
    named: list[tuple[Path, str, dict[str, Any] | None]] = []
    for path, layer in _plugin_dirs(workspace, home, settings):
        if layer not in USER_LAYERS and not loaded.trusted:
            ignored.append(f"plugin folder {path} (named in the {layer} config)")
            continue
        if not path.is_dir():
            loaded.notices.append(f"plugin folder {path} does not exist; ignored")
            continue
        if detect_format(path) is None and not (path / ".lsp.json").is_file():
            loaded.notices.append(_no_plugin(path))
            continue
        named.append((path, layer, None))
    named += [(path, "installed", record) for path, record in installed_folders(home)]
    for path, layer, record in named:
        _add_folder(loaded, read_folder(path, layer, home), record, home)
    if ignored and not _core_names_them():
        loaded.notices.append(
            "untrusted workspace: ignored command hooks and plugin folders of the project: "
            + "; ".join(ignored)
            + " (trust it with `mycode trust` or --trust)"
        )
    if disabled:
        loaded.notices.append("Claude Code hooks: disableAllHooks is set; no hook runs")
        loaded.hooks = HookSet()
    return loaded


def _no_plugin(path: Path) -> str:
    """The notice for a named folder that holds no plugin — often a marketplace's root (the
    ``anthropics/claude-code`` repository), whose plugins are installed, not loaded whole."""
    line = (
        f"plugin folder {path} holds no plugin (no plugin.json, .claude-plugin/plugin.json, "
        ".codex-plugin/plugin.json, commands/, agents/, skills/, hooks/hooks.json, .mcp.json or "
        ".lsp.json); ignored"
    )
    if (path / ".claude-plugin" / "marketplace.json").is_file() or (
        path / ".agents" / "plugins" / "marketplace.json"
    ).is_file():
        line += (
            f". It is a marketplace: `mycode plugins marketplace add {path}`, then `mycode "
            "plugins install NAME@MARKETPLACE` (or --plugin-dir one of its plugin folders)"
        )
    return line
