"""Workspace trust (SPEC §8): an untrusted workspace's own files may only tighten settings.
Trust is recorded per resolved path in ``$MYCODE_HOME/trusted.json`` (covering the folders
below) or given for one run with ``--trust``; plugins reading project files call is_trusted."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from mycode_core.project_files import read_project_text
from mycode_core.safeopen import replace_atomically

# each project layer and its file: untrusted, they may only tighten settings
LAYER_FILES = {
    "project": ".mycode/config.toml",
    "local": ".mycode/config.local.toml",
    "claude-project": ".claude/settings.json",
    "claude-local": ".claude/settings.local.json",
}
PROJECT_LAYERS = tuple(LAYER_FILES)
TRUST_KEY = "trust"
CLI_FLAG = "trust_workspace"
_MODE_RANK = {"plan": 0, "default": 1, "accept-edits": 2, "bypass": 3}
_SANDBOX_RANK = {"on": 2, True: 2, "auto": 1, "off": 0, False: 0}
_SANDBOX_WIDENING = ("network", "writable", "env_passthrough")  # [sandbox] keys opening it up
# settings that pick the model server: never taken from an untrusted project (SPEC §8)
MODEL_ENDPOINT_KEYS = ("base_url", "api_key", "model")
CLAUDE_FILES = (  # the files a plugin takes command hooks and an environment from
    ".claude/settings.json", ".claude/settings.local.json",
    ".mycode/hooks.json", ".codex/hooks.json",
)  # fmt: skip


class TrustStoreError(OSError):
    """The trust records cannot be read or written; the message names the file."""


def store_file(home: Path) -> Path:
    """Where trusted folders are recorded."""
    return home / "trusted.json"


def _key(path: Path) -> str:
    return str(Path(path).expanduser().resolve())


def trusted_folders(home: Path) -> dict[str, dict[str, Any]]:
    """``{folder: {"since": iso time}}`` of every trusted folder (``{}`` if none)."""
    try:
        data = json.loads(store_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    folders = data.get("folders") if isinstance(data, dict) else None
    out = {str(k): v for k, v in folders.items()} if isinstance(folders, dict) else {}
    listed = data.get("workspaces") if isinstance(data, dict) else None  # a plain list too
    for item in listed if isinstance(listed, list) else []:
        out.setdefault(_key(Path(str(item))), {"trusted": True})
    return out


def is_trusted(workspace: Path, home: Path) -> bool:
    """Whether ``workspace`` (or a folder above it) was trusted by the user."""
    target = Path(_key(workspace))
    folders = (Path(f) for f, entry in trusted_folders(home).items() if entry.get("trusted", True))
    return any(target == base or base in target.parents for base in folders)


def was_asked(workspace: Path, home: Path) -> bool:
    """Whether the user already answered the trust question for exactly this folder."""
    return _key(workspace) in trusted_folders(home)


def _save(home: Path, folders: dict[str, dict[str, Any]]) -> None:
    path = store_file(home)
    text = json.dumps({"folders": folders}, indent=2, sort_keys=True).encode()
    try:
        replace_atomically(path, text, 0o600, create_parents=True, follow_folder_links=True)
    except OSError as exc:
        raise TrustStoreError(exc.errno, f"cannot write {path}: {exc.strerror}") from None


def trust(workspace: Path, home: Path, trusted: bool = True) -> str:
    """Record ``workspace`` as trusted (or declined: not asked again); return its resolved path."""
    folders = trusted_folders(home)
    key = _key(workspace)
    folders[key] = {"since": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "trusted": trusted}
    _save(home, folders)
    return key


def revoke(workspace: Path, home: Path) -> bool:
    """Forget the trust of ``workspace``; False if it was not recorded."""
    folders = trusted_folders(home)
    if folders.pop(_key(workspace), None) is None:
        return False
    _save(home, folders)
    return True


# ---------------------------------------------------------------- restricting project layers


def _effective(layers: list[tuple[str, dict[str, Any]]], key: str, default: Any) -> Any:
    return next((data[key] for _name, data in reversed(layers) if key in data), default)


def _sandbox_mode(value: Any) -> Any:
    return value.get("mode", "auto") if isinstance(value, dict) else value


def _restrict(
    name: str, data: dict[str, Any], lower: list[tuple[str, dict[str, Any]]]
) -> tuple[dict[str, Any], list[str]]:
    """One project layer without its loosening settings, and their names."""
    where = LAYER_FILES.get(name, name)
    out = dict(data)
    ignored: list[str] = []
    if "permission_mode" in out:
        current = _effective(lower, "permission_mode", "default")
        new = out["permission_mode"]
        if new in _MODE_RANK and _MODE_RANK[new] > _MODE_RANK.get(current, 1):
            out.pop("permission_mode")
            ignored.append(f"permission_mode = {new!r} ({where})")
    rules = out.get("permissions")
    if isinstance(rules, dict) and rules.get("allow"):
        out["permissions"] = {k: v for k, v in rules.items() if k != "allow"}
        ignored.append(f"[permissions] allow ({where})")
    if "sandbox" in out:
        current = _sandbox_mode(_effective(lower, "sandbox", "auto"))
        new = out["sandbox"]
        widens = isinstance(new, dict) and not new.keys().isdisjoint(_SANDBOX_WIDENING)
        mode = _sandbox_mode(new)
        known = isinstance(mode, bool | str) and mode in _SANDBOX_RANK
        if widens or (known and _SANDBOX_RANK[mode] < _SANDBOX_RANK.get(current, 1)):
            out.pop("sandbox")
            ignored.append(f"sandbox settings ({where})")
    for table, key in (("mcp", "trust_project_servers"), ("builtin_tools", "sandbox_network")):
        section = out.get(table)
        if isinstance(section, dict) and key in section:
            out[table] = {k: v for k, v in section.items() if k != key}
            ignored.append(f"[{table}] {key} ({where})")
    for key, what in (("hooks", "command hooks"), ("plugin_dirs", "plugin folders")):
        if key in out:
            out.pop(key)
            ignored.append(f"{what} ({key} in {where})")
    models = out["models"] if isinstance(out.get("models"), dict) else {}
    for model, entry in models.items():
        if isinstance(entry, dict) and "request" in entry:  # what is sent is the user's choice
            kept = {k: v for k, v in entry.items() if k != "request"}
            out["models"] = {**out["models"], model: kept}
            ignored.append(f'[models."{model}"] request ({where})')
    for key in MODEL_ENDPOINT_KEYS:  # the session never talks to a server the project chose
        if key in out:
            out.pop(key)
            ignored.append(f"{key} ({where}: the model server is chosen by you, not the project)")
    if "validation_commands" in out:
        out.pop("validation_commands")
        ignored.append(
            f"[validation_commands] ({where}: they decide what counts as a passing test)"
        )
    return out, ignored


def _claude_findings(workspace: Path) -> list[str]:
    """Loosening settings a plugin applies from the workspace's Claude Code files (hooks, env);
    their rules and MCP server trust are config layers, restricted like the others."""
    found = []
    for rel in CLAUDE_FILES:
        try:  # no symlink out, no FIFO
            data = json.loads(read_project_text(workspace, Path(rel)))
        except (OSError, ValueError):
            continue
        for key, what in (("hooks", "command hooks"), ("env", "environment variables")):
            if isinstance(data, dict) and data.get(key):
                found.append(f"{what} ({key} in {rel})")
    return found


def restrict_layers(
    workspace: Path, home: Path, layers: list[tuple[str, dict[str, Any]]]
) -> list[tuple[str, dict[str, Any]]]:
    """``layers`` (lowest precedence first, ``cli`` last) with the project layers restricted
    unless the workspace is trusted (or ``--trust``: ``cli`` ``trust_workspace``); ``cli`` gets
    the ``trust`` table ``{"trusted": bool, "ignored": [...]}``."""
    assert layers[-1][0] == "cli", "the command line is the last layer"
    trusted = bool(layers[-1][1].get(CLI_FLAG)) or is_trusted(workspace, home)
    out: list[tuple[str, dict[str, Any]]] = []
    ignored: list[str] = []
    for name, data in layers:
        data = {k: v for k, v in data.items() if k not in (TRUST_KEY, CLI_FLAG)}
        if name in PROJECT_LAYERS and not trusted and data:
            data, dropped = _restrict(name, data, out)
            ignored.extend(dropped)
        out.append((name, data))
    if not trusted:
        ignored.extend(_claude_findings(workspace))
    out[-1] = ("cli", {**out[-1][1], TRUST_KEY: {"trusted": trusted, "ignored": ignored}})
    return out


def state(settings: Any) -> dict[str, Any]:
    """``{"trusted": bool, "ignored": [...]}`` of a run's settings (untrusted if unknown)."""
    section = settings.section(TRUST_KEY) if hasattr(settings, "section") else {}
    return {"trusted": bool(section.get("trusted")), "ignored": list(section.get("ignored", []))}


def notice_texts(settings: Any) -> list[str]:
    """One notice per ignored setting (SPEC §8)."""
    return [
        f"untrusted workspace: ignored {item} — its own settings may only make things "
        "stricter. Trust it with `mycode trust` (or --trust for one run) if you trust its contents."
        for item in state(settings)["ignored"]
    ]


def notice_text(settings: Any) -> str | None:
    """All ignored settings in one line, or ``None`` when nothing was ignored (for plugins)."""
    if not (ignored := state(settings)["ignored"]):
        return None
    return (
        "untrusted workspace: its own settings may only make things stricter; "
        f"ignored: {'; '.join(ignored)}. Trust it with `mycode trust` (or --trust for one run) "
        "if you trust its contents."
    )
