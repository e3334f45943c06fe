"""What one plugin folder of any format contributes (:class:`PluginFolder`), and where its
writable ``PLUGIN_DATA`` lives."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.agent_plugins import Problem
from mycode_claude_compat.sources import HookSet

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
        found: dict[Path, str] = {}  # a skill folder named on its own and through ``skills/``
        for d in self.skill_dirs:  # (a manifest listing ``./skills/NAME``) counts once
            folders = (
                [d] if (d / "SKILL.md").is_file() else [p.parent for p in d.glob("*/SKILL.md")]
            )
            found.update((folder.resolve(), folder.name) for folder in folders)
        return sorted(found.values())

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


def data_dir(home: Path, name: str) -> Path:
    """``PLUGIN_DATA`` of the plugin ``name``: ``$MYCODE_HOME/plugin-data/<name>`` (kept across
    updates, removed with the plugin)."""
    return home / "plugin-data" / name
