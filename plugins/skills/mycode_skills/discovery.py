"""Finding skills: the locations, their precedence, and a stat-based cache.

Locations, first wins on a name clash:

1. the project — ``.mycode/skills/``, ``.agents/skills/``, ``.claude/skills/`` in every folder
   from the current folder up to the workspace root (the way ``AGENTS.md`` files are read,
   root down to the current folder); the folder nearest the current folder wins, and within
   one folder ``.mycode`` beats ``.agents`` beats ``.claude``;
2. ``$MYCODE_HOME/skills/``;
3. ``~/.agents/skills/``;
4. folders registered by installed packages through the ``register_skills`` hook.

A location holds skill folders (``NAME/SKILL.md``, or ``NAME/skill.md`` when there is no
``SKILL.md``), or is itself one. Project locations must
stay inside the workspace: a skills folder or skill folder that is a symlink leading outside
is refused with a notice (a repository must not open the rest of the disk to ``read_file``).
User locations are the user's own choice and may be symlinks anywhere.

:meth:`Catalog.refresh` costs one ``scandir`` per location (and per group folder: a folder
without ``SKILL.md``, looked into down to six levels) and two ``stat`` calls per ``SKILL.md``;
a file is parsed again only when its modification time, size or inode changed.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from mycode_core.project_files import folders_down_to, link_refusal
from mycode_skills.index import SkillIndex
from mycode_skills.skill import Skill, SkillProblem, skill_file_name

PROJECT_DIRS = (".mycode/skills", ".agents/skills", ".claude/skills")
MAX_DEPTH = 6
"""How deep skill folders are looked for below a location (Codex scans six levels)."""
MAX_GROUPS = 2000
"""At most this many group folders (folders without ``SKILL.md``) are looked into."""
SKIPPED_GROUPS = {"node_modules", "__pycache__", "venv"}


@dataclass(frozen=True)
class Location:
    """A folder that may hold skills, and where it comes from."""

    path: Path
    source: str
    confined: Path | None = None
    """For project locations: the workspace root the skills must resolve inside."""
    folder_names: bool = False
    """A Claude Code or Codex plugin folder's skills: a ``name`` breaking a naming rule (those
    formats use display names such as ``Plugin Settings``) is replaced by the folder's name,
    quietly, as with ``[skills] folder_names``."""
    strict: bool = False
    """An Agent Plugins folder's skills (its §7.1): a skill that does not conform to the Agent
    Skills specification is skipped — no name replaced, no rule let pass with a warning."""
    data: Path | None = None
    """A plugin folder's data folder: ``${CLAUDE_PLUGIN_DATA}`` in its skills."""


def project_folders(workspace: Path, cwd: Path | None) -> list[Path]:
    """The folders from ``cwd`` (if inside the workspace) up to the workspace root."""
    return list(reversed(folders_down_to(workspace, cwd)))


def default_locations(workspace: Path, home: Path, cwd: Path | None) -> list[Location]:
    """Every built-in location, highest precedence first."""
    root = workspace.resolve()
    out = [
        Location(folder / sub, "project", confined=root)
        for folder in project_folders(root, cwd)
        for sub in PROJECT_DIRS
    ]
    out.append(Location(home / "skills", "user"))
    out.append(Location(Path.home() / ".agents" / "skills", "agents"))
    return out


@dataclass
class Snapshot:
    """The outcome of one refresh."""

    skills: dict[str, Skill] = field(default_factory=dict)
    """Valid skills by name, in precedence order."""
    problems: list[str] = field(default_factory=list)
    """One readable line per invalid, refused or shadowed skill."""
    remarks: list[str] = field(default_factory=list)
    """Lines ``mycode skills`` and ``/skills`` show but a run does not tell (a plugin's skill
    listed as ``plugin:skill`` past another plugin's or a user's skill of its name)."""

    def said(self) -> list[str]:
        """The problems, then the remarks: what ``mycode skills`` and ``/skills`` show."""
        return [*self.problems, *self.remarks]

    def sorted(self) -> list[Skill]:
        """The skills in name order (the stable order of the listing)."""
        return [self.skills[name] for name in sorted(self.skills)]

    def find(self, name: str) -> Skill | None:
        """The skill called ``name``, or Claude Code's ``plugin:skill`` for a plugin folder's
        skill listed under its own name (``hookify:writing-rules``)."""
        name = name.strip()
        skill = self.skills.get(name)
        plugin, colon, short = name.partition(":")
        if skill is None and colon:
            candidate = self.skills.get(short)
            if candidate is not None and candidate.source == f"plugin:{plugin}":
                skill = candidate
        return skill


def conforming(parsed: Skill | SkillProblem) -> Skill | SkillProblem:
    """``parsed`` when it conforms to the Agent Skills specification as written, else the
    problem of the first rule it breaks (Agent Plugins §7.1: such a skill is skipped)."""
    if isinstance(parsed, SkillProblem):
        return parsed
    broken = parsed.renamed or parsed.mismatch or next(iter(parsed.warnings), None)
    if broken is None:
        return parsed
    message, _, rule = broken.rpartition(" [rule ")
    return SkillProblem(parsed.folder, rule.rstrip("]"), message, name=parsed.name)


def _plugin_of(source: str) -> str | None:
    return source[len("plugin:") :] if source.startswith("plugin:") else None


def _shadowed(parsed: Skill, winner: Skill, folder: str, snapshot: Snapshot) -> Skill | None:
    """A skill whose name ``winner`` already holds: a plugin folder's skill stays reachable
    under Claude Code's namespaced name ``plugin:skill`` (two Codex plugins may both ship a
    ``react-best-practices``); any other is left out, with one notice naming both. The
    namespaced one is a remark, not told in a run — it is the name Claude Code gives it
    anyway — unless the project took its name (``/NAME`` then runs the repository's skill, not
    the plugin's)."""
    plugin = _plugin_of(parsed.source)
    held = f"{winner.folder} ({winner.source})"
    if plugin is not None:
        qualified = f"{plugin}:{parsed.name}"
        if qualified not in snapshot.skills:
            said = snapshot.problems if winner.source == "project" else snapshot.remarks
            said.append(
                f"skill {parsed.name!r} of plugin {plugin} ({folder}) listed as {qualified!r}: "
                f"the name {parsed.name!r} is taken by the one in {held}"
            )
            return replace(parsed, name=qualified)
    snapshot.problems.append(
        f"skill {parsed.name!r} in {folder} ({parsed.source}) ignored: the one in {held} "
        "takes precedence"
    )
    return None


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


_StatKey = tuple[int, int, int]


class Catalog:
    """The skills of a workspace, kept up to date cheaply between turns."""

    def __init__(
        self,
        locations: Iterable[Location],
        extra: Callable[[], list[Location]] | None = None,
        index_file: Path | None = None,
        folder_names: bool = False,
    ) -> None:
        self.locations = list(locations)
        self.folder_names = folder_names
        self._index = SkillIndex(index_file)
        self._extra = extra
        self._extra_locations: list[Location] | None = None
        self._cache: dict[str, tuple[_StatKey, Skill | SkillProblem]] = {}
        self.parses = 0
        """How many times a ``SKILL.md`` was parsed (the cache's effect shows here)."""
        self.snapshot = Snapshot()

    def all_locations(self) -> list[Location]:
        """Built-in locations, then those registered by packages (asked once)."""
        if self._extra_locations is None:
            self._extra_locations = self._extra() if self._extra is not None else []
        return [*self.locations, *self._extra_locations]

    def candidates(self, location: Location, problems: list[str]) -> list[tuple[str, bool, str]]:
        """``(folder, is_symlink, skill file name)`` of each skill folder of ``location``
        (refused folders are lines added to ``problems``). ``is_symlink`` is also true of
        every folder of a location reached through a link (``.claude/skills`` linked to
        ``../.agents/skills``, as a repository shares its skills with both hosts): the
        listing tells such a folder by its real path, not as a second skill of that name.

        Plain strings and ``os.scandir`` on purpose: this runs before every turn.
        """
        path = str(location.path)
        if not os.path.isdir(path):
            return []
        real = os.path.realpath(path)
        if location.confined is not None and not _inside(Path(real), location.confined):
            problems.append(
                f"skills folder {path} refused: it is a symlink leading outside the "
                f"workspace ({real})"
            )
            return []
        linked = real != os.path.abspath(path)
        own = skill_file_name(path)
        if own is not None and location.strict:  # Agent Plugins §7.1: skills/NAME/SKILL.md only
            problems.append(
                f"{os.path.join(path, own)} is not a skill and is not read: an Agent Plugins "
                "folder's skills are the folders of skills/ holding SKILL.md "
                "(skills/NAME/SKILL.md)"
            )
        elif own is not None and os.path.isfile(os.path.join(path, own)):
            return [(path, linked, own)]
        found: list[tuple[str, bool, str]] = []
        self._scan(path, location, problems, found, {real}, 1)
        return [(folder, link or linked, name) for folder, link, name in found]

    def _scan(
        self,
        path: str,
        location: Location,
        problems: list[str],
        found: list[tuple[str, bool, str]],
        visited: set[str],
        depth: int,
    ) -> None:
        """Add the skill folders under ``path`` to ``found``; a folder without ``SKILL.md``
        is a group (``skills/team/deploy/SKILL.md``) looked into, down to
        :data:`MAX_DEPTH` levels, as Codex and agentskills.io's guide for clients scan —
        not in a strict (Agent Plugins) location, whose skills are its immediate folders
        holding a file named exactly ``SKILL.md``, hidden ones too (§7.1 excepts none: such a
        skill is then reported, no valid name starting with a dot), and a ``skill.md`` there
        is reported, not read."""
        try:
            with os.scandir(path) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError as exc:
            if depth == 1:
                problems.append(f"skills folder {path} cannot be read: {exc.strerror}")
            return
        for entry in entries:
            if not location.strict and (entry.name.startswith(".") or entry.name in SKIPPED_GROUPS):
                continue
            try:
                if not entry.is_dir():
                    continue
                link = entry.is_symlink()
            except OSError:
                continue
            if link and location.confined is not None:
                real = Path(os.path.realpath(entry.path))
                if not _inside(real, location.confined):
                    problems.append(
                        f"skill folder {entry.path} refused: it is a symlink leading outside "
                        f"the workspace ({real})"
                    )
                    continue
            own = skill_file_name(entry.path, exact=location.strict)
            if own is not None:
                found.append((entry.path, link, own))
                continue
            if location.strict and skill_file_name(entry.path) is not None:
                problems.append(
                    f"skill folder {entry.path} not loaded: its skill file is skill.md, and an "
                    "Agent Plugins folder's skill file is named exactly SKILL.md"
                )
            real_path = os.path.realpath(entry.path) if link else entry.path
            if location.strict or depth >= MAX_DEPTH or real_path in visited:
                continue
            if len(visited) >= MAX_GROUPS:
                if "" not in visited:  # once per location
                    visited.add("")
                    problems.append(
                        f"skills folder {location.path}: stopped looking into folders without "
                        f"SKILL.md after {MAX_GROUPS}; skills deeper in it may be missing"
                    )
                continue
            visited.add(real_path)
            self._scan(entry.path, location, problems, found, visited, depth + 1)

    def _lenient(self, location: Location) -> bool:
        return not location.strict and (self.folder_names or location.folder_names)

    def _entry(self, file: str, lenient: bool) -> str:
        """The cache and index key of ``file``: a location parsed in the other naming mode
        than the catalog's keeps entries of its own."""
        if lenient == self.folder_names:
            return file
        return f"{file}#folder-names" if lenient else f"{file}#strict"

    def _load(
        self, folder: str, file: str, source: str, lenient: bool = False
    ) -> Skill | SkillProblem | None:
        entry = self._entry(file, lenient)
        try:
            st = os.stat(file)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):  # a FIFO or device must not hang the listing
            return None
        key = (st.st_mtime_ns, st.st_size, st.st_ino)
        cached = self._cache.get(entry)
        if cached is not None and cached[0] == key:
            return cached[1]
        parsed = self._index.get(entry, key)
        if (
            parsed is None
            or str(parsed.folder) != folder
            or getattr(parsed, "source", source) != source
        ):
            from mycode_skills.parse import parse_skill  # only for a new or changed file

            parsed = parse_skill(Path(folder), source, lenient)
            self.parses += 1
            self._index.put(entry, key, parsed)
        self._cache[entry] = (key, parsed)
        return parsed

    def refresh(self) -> Snapshot:
        """Look at every location again; parse only what changed. Returns the new snapshot."""
        snapshot = Snapshot()
        seen: set[str] = set()
        files: set[str] = set()
        for location in self.all_locations():
            for folder, link, name in self.candidates(location, snapshot.problems):
                key = os.path.realpath(folder) if link else folder
                if key in seen:
                    continue
                seen.add(key)
                file = os.path.join(folder, name)
                files.add(self._entry(file, self._lenient(location)))
                if location.confined is not None and os.path.islink(file):
                    refused = link_refusal(location.confined, Path(file))
                    if refused is not None:  # SKILL.md itself leading out (issue 23 M1)
                        snapshot.problems.append(refused)
                        continue
                parsed = self._load(folder, file, location.source, self._lenient(location))
                if parsed is None:
                    continue
                if location.strict:
                    parsed = conforming(parsed)
                if isinstance(parsed, SkillProblem):
                    snapshot.problems.append(parsed.notice())
                    continue
                if parsed.renamed is not None and not location.folder_names:
                    snapshot.problems.append(
                        f"skill in {folder} listed under its folder's name {parsed.name!r}: "
                        f"{parsed.renamed}"
                    )
                if parsed.mismatch is not None and not location.folder_names:
                    snapshot.problems.append(
                        f"skill {parsed.name!r} ({folder}) loaded under its name, but: "
                        f"{parsed.mismatch}"
                    )
                for warning in parsed.warnings if not location.folder_names else ():
                    snapshot.problems.append(
                        f"skill {parsed.name!r} ({folder}) loaded, but: {warning}"
                    )
                winner = snapshot.skills.get(parsed.name)
                if winner is not None:
                    parsed = _shadowed(parsed, winner, folder, snapshot)
                    if parsed is None:
                        continue
                snapshot.skills[parsed.name] = parsed
        self._index.save(files)
        self.snapshot = snapshot
        return snapshot
