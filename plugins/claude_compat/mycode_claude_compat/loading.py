"""Which hook files and plugin folders apply to a run (SPEC §8, §9).

User-level sources always apply: ``$MYCODE_HOME/hooks.json``, ``~/.claude/settings.json`` when
``[claude_compat] user_claude_settings = true`` is set in the user config, and plugin folders
named by ``--plugin-dir`` or the user config's ``plugin_dirs``. Project sources
(``.claude/settings.json``, ``.claude/settings.local.json``, ``.mycode/hooks.json``, and
``plugin_dirs`` of the project config) apply only in a trusted workspace; otherwise one notice
names what was ignored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.folders import PluginFolder, load_folder
from mycode_claude_compat.sources import HookSet, parse_hooks, read_json_file
from mycode_claude_compat.trust import is_trusted

USER_LAYERS = ("default", "user", "env", "cli")


@dataclass
class Loaded:
    """Everything the plugin found for one workspace."""

    hooks: HookSet = field(default_factory=HookSet)
    folders: list[PluginFolder] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    trusted: bool = False


def _section(data: dict[str, Any]) -> dict[str, Any]:
    value = data.get("claude_compat")
    return value if isinstance(value, dict) else {}


def _hook_files(workspace: Path, home: Path, settings: Any) -> list[tuple[Path, str, bool]]:
    """``(path, layer, is_project)`` of every hooks file, in order."""
    files = [(home / "hooks.json", "user", False)]
    layers = getattr(settings, "layers", None) or []
    if any(
        _section(data).get("user_claude_settings") is True
        for name, data in layers
        if name in USER_LAYERS
    ):
        files.append((Path.home() / ".claude" / "settings.json", "user", False))
    files += [
        (workspace / ".claude" / "settings.json", "project", True),
        (workspace / ".mycode" / "hooks.json", "project", True),
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


def load(workspace: Path, home: Path, settings: Any) -> Loaded:
    """Collect hooks and plugin folders; never raises (problems become notices)."""
    loaded = Loaded(trusted=is_trusted(workspace, home, settings))
    ignored: list[str] = []
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
        for problem in parse_hooks(data, source=str(path), layer=layer, into=loaded.hooks):
            loaded.notices.append(f"Claude Code hooks: {problem}")
    for path, layer in _plugin_dirs(workspace, home, settings):
        if layer not in USER_LAYERS and not loaded.trusted:
            ignored.append(f"plugin folder {path} (named in the {layer} config)")
            continue
        if not path.is_dir():
            loaded.notices.append(f"plugin folder {path} does not exist; ignored")
            continue
        folder = load_folder(path, layer, loaded.hooks)
        loaded.folders.append(folder)
        for problem in folder.problems:
            loaded.notices.append(f"plugin folder {folder.name}: {problem}")
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
