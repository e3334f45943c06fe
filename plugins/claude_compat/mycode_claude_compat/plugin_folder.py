"""What one plugin folder of any format contributes (:class:`PluginFolder`), and where its
writable ``PLUGIN_DATA`` lives."""

from __future__ import annotations

import os
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
    bin_dir: Path | None = None
    """``bin/`` of a Claude Code folder: put on the run's ``PATH`` (:func:`.binpath.apply`)."""
    problems: list[str] = field(default_factory=list)
    fatal: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)
    hook_set: HookSet = field(default_factory=HookSet)
    """This folder's own hooks (merged into the run's unless the folder may not run code)."""
    grants: bool = True
    """Whether its commands' ``allowed-tools`` are granted (not once its files changed since
    it was installed)."""
    skill_listed_as: dict[Path, str | None] = field(default_factory=dict)
    """Skill folders a run lists under another name than the folder's (``None``: not
    loaded), from :meth:`note_skill_findings`."""

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

    def skill_folders(self) -> dict[Path, Path]:
        """Its skill folders, resolved, each with the path it was found at (``skill_dirs``
        holds folders of skill folders, and for Codex also single skill folders found
        deeper; a folder named on its own and through ``skills/`` counts once). The same
        folders the skills plugin reads: in an Agent Plugins folder each folder of
        ``skills/`` holding a file named exactly ``SKILL.md``, hidden ones too, never
        ``skills/`` itself (its §7.1); in the other formats a folder holding ``SKILL.md`` or
        ``skill.md`` is one skill, and its hidden subfolders are not looked in."""
        found: dict[Path, Path] = {}
        for d in self.skill_dirs:
            if self.format == "agent-plugins":
                folders = [p.parent for p in d.glob("*/SKILL.md")]
            elif _skill_file(d):
                folders = [d]
            else:
                folders = [
                    p for p in _subfolders(d) if not p.name.startswith(".") and _skill_file(p)
                ]
            found.update((folder.resolve(), folder) for folder in sorted(folders))
        return found

    def skill_names(self) -> list[str]:
        """The names of the skills it contributes: the folders' names, or the names a run
        lists them under when :meth:`note_skill_findings` said; a skill folder leading out
        of the plugin is never one (the skills plugin refuses it)."""
        root = self.root.resolve()
        return sorted(
            name
            for real, folder in self.skill_folders().items()
            if real.is_relative_to(root)
            and (name := self.skill_listed_as.get(real, folder.name)) is not None
        )

    def note_skill_findings(self, findings: list[dict[str, Any]]) -> None:
        """Take what the skills plugin found (``validate_skills``): a skill a run does not
        load leaves ``contributes`` for ``skipped`` (with why), a skill listed under its
        ``name`` rather than its folder's is shown under that name."""
        root = self.root.resolve()
        for real, folder in self.skill_folders().items():
            if not real.is_relative_to(root):
                self.skip(f"skill {self._where(folder)}", "leads outside the plugin folder")
        for item in findings:
            if not item.get("skill") or not item.get("folder"):
                continue
            folder = Path(str(item["folder"]))
            real = folder.resolve()
            if real in self.skill_listed_as and self.skill_listed_as[real] is None:
                continue  # already skipped
            if item.get("loaded"):
                self.skill_listed_as[real] = str(item["skill"])
                continue
            self.skill_listed_as[real] = None
            reason = f"{item.get('message')} [rule {item.get('rule')}]"
            self.skip(f"skill {self._where(folder)}", reason)

    def _where(self, path: Path) -> str:
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

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

    def agent_names(self) -> list[str]:
        """The names the folder's agents answer to: the front matter's ``name`` (Claude Code
        keys agents by it, and plugins' commands name them so: ``subagent_type:
        "security-scanning-security-auditor"`` for ``agents/security-auditor.md``), else
        the file's stem."""
        from mycode_claude_compat.commands import split_front_matter

        names = []
        for path in (p for d in self.agent_dirs for p in sorted(d.glob("*.md"))):
            try:
                name = split_front_matter(path.read_text(encoding="utf-8"))[0].get("name")
            except (OSError, UnicodeDecodeError):
                name = None
            names.append(name.strip() if isinstance(name, str) and name.strip() else path.stem)
        return sorted(names)

    def describe(self) -> dict[str, Any]:
        """JSON for ``mycode plugins``."""
        agents = self.agent_names()
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
                "agents": agents,
                "lsp_servers": sorted(self.lsp_servers),
                "bin": executables(self.bin_dir) if self.bin_dir else [],
            },
            "hooks": self.hooks,
            "commands": sorted(path.stem for path in self.commands),
            "agents": agents,
            "skills": self.skill_names(),
            "mcp_servers": sorted(self.mcp_servers),
            "skipped": self.skipped,
            "problems": self.problems,
        }


def executables(bin_dir: Path) -> list[str]:
    """The names of the executable files in ``bin_dir`` (what ``mycode plugins`` lists)."""
    try:
        found = (e for e in bin_dir.iterdir() if e.is_file() and os.access(e, os.X_OK))
        return sorted(entry.name for entry in found)
    except OSError:
        return []


def data_dir(home: Path, name: str) -> Path:
    """``PLUGIN_DATA`` of the plugin ``name``: ``$MYCODE_HOME/plugin-data/<name>`` (kept across
    updates, removed with the plugin)."""
    return home / "plugin-data" / name


def open_data_dirs(folders: list[PluginFolder], context: Any) -> list[str]:
    """Create each folder's ``PLUGIN_DATA`` (``${CLAUDE_PLUGIN_DATA}``) and open it to the
    run's tools: readable (``context.readable_roots``) and writable for commands
    (``context.writable_roots``), so a plugin's script keeps its state there inside the
    sandbox too. Returns the problems."""
    made, problems = [], []
    for folder in folders:
        path = data_dir(Path(context.home), folder.name)
        try:
            path.mkdir(parents=True, exist_ok=True)
            made.append(path)
        except OSError as exc:
            problems.append(f"plugin folder {folder.name}: cannot create {path}: {exc}")
    for roots in (context.readable_roots, context.writable_roots):
        roots.extend(path for path in made if path not in roots)
    return problems


def protect_folders(folders: list[PluginFolder], context: Any) -> list[str]:
    """Add the loaded folders that lie inside the workspace to ``context.protected_roots``:
    their hooks, commands and MCP servers run outside the command sandbox, so sandboxed
    commands may not write them and the file tools' writes there ask. A folder that is the
    workspace itself (a plugin developed in its own repository) is left writable — all of it
    read-only would stop the work — and a warning returned for it."""
    top, roots = Path(context.workspace).resolve(), getattr(context, "protected_roots", None)
    if not isinstance(roots, list):
        return []
    warnings = []
    for folder in folders:
        root = folder.root.resolve()
        if root == top:
            warnings.append(
                f"plugin folder {folder.name} is the workspace itself: commands may change "
                "its hooks and servers, which run outside the sandbox from the next session"
            )
        elif top in root.parents and root not in roots:
            roots.append(root)
    return warnings


def _skill_file(folder: Path) -> bool:
    """Whether ``folder`` holds a skill file of the Claude Code and Codex formats (``SKILL.md``,
    or ``skill.md`` as the skills plugin also reads)."""
    return (folder / "SKILL.md").is_file() or (folder / "skill.md").is_file()


def _subfolders(folder: Path) -> list[Path]:
    try:
        return [entry for entry in folder.iterdir() if entry.is_dir()]
    except OSError:
        return []
