"""Trust for project-level MCP servers (``.mcp.json`` and the project's config.toml).

A project server starts only once approved. Approvals are remembered per workspace in
``$MYCODE_HOME/mcp-approvals.json`` together with a fingerprint of the server's entry, so a
changed command needs a new approval. In ``-p`` mode nobody can be asked: unapproved servers
are skipped unless ``[mcp] trust_project_servers`` (``true`` or a list of names) is set in a
config file the project does not control: ``$MYCODE_HOME/config.toml``, or
``.mycode/config.local.toml`` (or Claude Code's ``.claude/settings.local.json``
``enabledMcpjsonServers``) of a workspace the user trusts (SPEC §8, ``mycode trust``) — in an
untrusted workspace the core drops that setting from the project's files, and ``[mcp_servers]``
of ``config.local.toml`` count as project servers.

Claude Code's ``disabledMcpjsonServers`` (``.claude/settings.json``,
``.claude/settings.local.json``, and ``~/.claude/settings.json`` once ``[claude_compat]
user_claude_settings = true`` opts in) rejects project servers by name, before any approval, as
in Claude Code; a project's own list counts in an untrusted workspace too (it only tightens).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_mcp_bridge.config import ConfigProblem, ServerSpec, read_json, workspace_key
from mycode_mcp_bridge.files import update_json

TRUST_SETTING = "[mcp] trust_project_servers"
SHARED_PROJECT_LAYERS = ("project", "claude-project")
"""The project's committed config (``.mycode/config.toml``, ``.claude/settings.json``): whoever
can push to the repository wrote it, so it never approves the project's own servers."""
ALLOW, DENY = "allow", "deny"


def approvals_file(home: Path) -> Path:
    """Where approvals are remembered."""
    return home / "mcp-approvals.json"


def mcp_section(settings: Any, *, exclude_project: bool = False) -> dict[str, Any]:
    """The merged ``[mcp]`` table; with ``exclude_project``, ignoring the project's config.toml."""
    layers = list(getattr(settings, "layers", None) or [])
    if not layers:
        section = getattr(settings, "section", None)
        return dict(section("mcp")) if callable(section) else {}
    merged: dict[str, Any] = {}
    for name, data in layers:
        if exclude_project and name in SHARED_PROJECT_LAYERS:
            continue
        table = (data or {}).get("mcp")
        if isinstance(table, dict):
            merged.update(table)
    return merged


def trusted_by_setting(settings: Any, name: str) -> bool:
    """Whether ``[mcp] trust_project_servers`` trusts ``name`` (project config ignored)."""
    value = mcp_section(settings, exclude_project=True).get("trust_project_servers")
    if value is True:
        return True
    if isinstance(value, str):
        return value == name or value == "*"
    if isinstance(value, list):
        return name in {str(v) for v in value} or "*" in {str(v) for v in value}
    return False


def remembered(home: Path, workspace: Path, spec: ServerSpec) -> str | None:
    """``"allow"`` / ``"deny"`` if the user decided for this exact entry before, else ``None``."""
    try:
        data = read_json(approvals_file(home))
    except ValueError:
        return None
    entry = (data.get("workspaces") or {}).get(workspace_key(workspace)) or {}
    for decision in (ALLOW, DENY):
        if (entry.get(decision) or {}).get(spec.name) == spec.fingerprint():
            return decision
    return None


def remember(home: Path, workspace: Path, spec: ServerSpec, decision: str) -> None:
    """Remember the user's decision for this entry in this workspace."""

    def change(data: dict[str, Any]) -> None:
        workspaces = data.setdefault("workspaces", {})
        entry = workspaces.setdefault(workspace_key(workspace), {})
        for kind in (ALLOW, DENY):
            entry.setdefault(kind, {}).pop(spec.name, None)
        entry[decision][spec.name] = spec.fingerprint()

    update_json(approvals_file(home), change)


def forget(home: Path, workspace: Path) -> None:
    """Forget every decision taken for this workspace."""

    def change(data: dict[str, Any]) -> None:
        (data.get("workspaces") or {}).pop(workspace_key(workspace), None)

    update_json(approvals_file(home), change)


CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")
USER_LAYERS = ("default", "user", "env", "cli")
"""The config layers that are the user's own (they may opt in to ``~/.claude``)."""


def rejected_by(workspace: Path, settings: Any, name: str) -> str | None:
    """The Claude Code settings file whose ``disabledMcpjsonServers`` names the project server
    ``name`` (``None``: none does). A file that cannot be read rejects nothing (the core
    reports it, as it reads the same files for their rules)."""
    files: list[tuple[Path, Path | None]] = [
        (workspace / rel, workspace) for rel in CLAUDE_SETTINGS
    ]
    if _user_claude(settings):
        files.insert(0, (Path.home() / ".claude" / "settings.json", None))
    for path, inside in files:
        try:
            listed = read_json(path, inside).get("disabledMcpjsonServers")
        except ConfigProblem:
            continue
        if isinstance(listed, list) and name in [str(item) for item in listed]:
            return str(path)
    return None


def _user_claude(settings: Any) -> bool:
    """Whether the user's own config opts in to ``~/.claude`` (``[claude_compat]
    user_claude_settings = true``, the claude_compat plugin's setting)."""
    for layer, data in getattr(settings, "layers", None) or []:
        section = (data or {}).get("claude_compat") if layer in USER_LAYERS else None
        if isinstance(section, dict) and section.get("user_claude_settings") is True:
            return True
    return False


def status(home: Path, workspace: Path, settings: Any, spec: ServerSpec) -> str:
    """``trusted``, ``approved``, ``denied`` or ``needs-approval``; ``rejected`` for a project
    server named in ``disabledMcpjsonServers`` (:func:`rejected_by`), which no approval
    overrides."""
    if spec.trusted:
        return "trusted"
    if rejected_by(workspace, settings, spec.name) is not None:
        return "rejected"
    if trusted_by_setting(settings, spec.name):
        return "approved"
    decision = remembered(home, workspace, spec)
    if decision == ALLOW:
        return "approved"
    if decision == DENY:
        return "denied"
    return "needs-approval"
