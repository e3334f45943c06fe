"""The skills of one run: the catalog, the notices already shown, the active skills."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mycode_skills.discovery import Catalog, Location, Snapshot, default_locations
from mycode_skills.skill import fill

if TYPE_CHECKING:
    from mycode_skills.budget import Rendered
    from mycode_skills.restrict import Restrictions
    from mycode_skills.skill import Skill

STORE_KEY = "skills"
PINNED_KEY = "pinned_skills"
REPORTED_KEY = "skills.reported"
"""``context.session_store`` key: what the skills plugin told the user this session."""


def package_locations(
    hook: Any, context: Any, notice: Callable[[str], None] | None = None
) -> list[Location]:
    """Folders contributed through the ``register_skills`` hook (called through pluggy).

    A failing implementation costs one notice; folders registered before it still count.
    """
    if hook is None or not hasattr(hook, "register_skills"):
        return []
    found: list[Location] = []

    def register(
        path: Path | str,
        plugin: str | None = None,
        root: Path | str | None = None,
        folder_names: bool = False,
        strict: bool = False,
        data: Path | str | None = None,
        source: str | None = None,
    ) -> None:
        folder = Path(path).expanduser()
        if plugin is None:  # ``source``: where it comes from (``claude``: ~/.claude/skills)
            kind = source or "package"
            found.append(Location(folder, kind, folder_names=folder_names, strict=strict))
            return
        confined = Path(root).resolve() if root is not None else None
        found.append(
            Location(
                folder,
                f"plugin:{plugin}",
                confined=confined,
                folder_names=folder_names,
                strict=strict,
                data=Path(data) if data is not None else None,
            )
        )

    try:
        hook.register_skills(register=register, context=context)
    except Exception as exc:  # noqa: BLE001 - a broken package must not break the run
        if notice is not None:
            notice(f"register_skills failed: {type(exc).__name__}: {exc}")
        failed = getattr(context, "plugin_failed", None)
        if callable(failed):  # strict plugins: the run stops (exit 2)
            failed(f"register_skills failed: {type(exc).__name__}: {exc}")
    return found


def index_file(home: Path, folder_names: bool = False) -> Path:
    """Where the parsed-skills index lives: ``$MYCODE_HOME/cache/skills-index.json`` (one
    file per naming mode, since the mode changes the outcome)."""
    return (
        home / "cache" / ("skills-index-folder-names.json" if folder_names else "skills-index.json")
    )


def notice_file(home: Path) -> Path:
    """Where the last listing-budget notice is remembered, so it is shown once, not at every
    run: ``$MYCODE_HOME/cache/skills-listing-notice.txt``."""
    return home / "cache" / "skills-listing-notice.txt"


def shown_before(home: Path, message: str) -> bool:
    """Whether ``message`` is the listing notice shown last; remembers it when not (a
    missing or unwritable cache only means it is shown again)."""
    path = notice_file(home)
    try:
        if path.read_text(encoding="utf-8") == message:
            return True
    except (OSError, ValueError):
        pass
    try:
        from mycode_core.api import replace_atomically

        replace_atomically(
            path, message.encode("utf-8"), create_parents=True, follow_folder_links=True
        )
    except (OSError, ValueError):
        pass
    return False


def folder_names_setting(settings: Any) -> bool:
    """``[skills] folder_names`` (default true: a display name such as ``Ahrefs Automation``
    gives way to a valid folder name, with a warning, as agentskills.io's guide for clients
    relaxes the naming rules; ``false`` applies them as written)."""
    section = settings.section("skills") if hasattr(settings, "section") else {}
    return section.get("folder_names") is not False


class SkillsState:
    """One agent's state, kept in ``context.store["skills"]`` (what was told is the session's:
    ``context.session_store["skills.reported"]``)."""

    def __init__(self, context: Any) -> None:
        self.context = context
        cwd = Path(os.getcwd())
        hook = context.hook if context.plugin_manager is not None else None
        self.catalog = Catalog(
            default_locations(Path(context.workspace), Path(context.home), cwd),
            extra=lambda: package_locations(hook, context, self._notice),
            index_file=index_file(Path(context.home), folder_names_setting(context.settings)),
            folder_names=folder_names_setting(context.settings),
        )
        self._restrictions: Restrictions | None = None
        self.reported: set[str] = context.session_store.setdefault(REPORTED_KEY, set())
        """What was told (problems, a cut listing): once a session, not again by a subagent."""
        self.lock = threading.Lock()
        self._roots: list[Path] = []

    @property
    def restrictions(self) -> Restrictions:
        """The active skills and their ``allowed-tools`` (made on first use)."""
        if self._restrictions is None:
            from mycode_skills.restrict import Restrictions

            self._restrictions = Restrictions()
        return self._restrictions

    def restricting(self, turn: str, name: str, arguments: dict[str, Any]) -> list[str] | None:
        """Skills whose ``allowed-tools`` leave this call out (``None``: not restricted)."""
        if self._restrictions is None:
            return None
        return self._restrictions.outside(turn, name, arguments)

    @classmethod
    def of(cls, context: Any) -> SkillsState:
        """The state of ``context``'s run (created on first use)."""
        with context.lock:
            state = context.store.get(STORE_KEY)
            if not isinstance(state, cls):
                state = cls(context)
                context.store[STORE_KEY] = state
            return state

    def refresh(self) -> Snapshot:
        """Re-scan (cheaply), show new problems once, and open the skill folders to reading."""
        with self.lock:
            snapshot = self.catalog.refresh()
            for problem in snapshot.problems:
                if problem not in self.reported:
                    self.reported.add(problem)
                    self._notice(problem)
            folders = [skill.folder.resolve() for skill in snapshot.sorted()]
            self._sync_roots(folders + self._plugin_roots(snapshot))
            return snapshot

    def _plugin_roots(self, snapshot: Snapshot) -> list[Path]:
        """The folders of the plugins whose skills are listed: their skills name files of the
        plugin outside the skill's folder (``${CLAUDE_PLUGIN_ROOT}/shared/guide.md``)."""
        sources = {skill.source for skill in snapshot.skills.values()}
        return list(
            dict.fromkeys(
                place.confined
                for place in self.catalog.all_locations()
                if place.source in sources
                and place.source.startswith("plugin:")
                and place.confined is not None
            )
        )

    def placeholders(self, skill: Skill) -> dict[str, str]:
        """What Claude Code fills into ``skill``'s text and ``allowed-tools``:
        ``${CLAUDE_SKILL_DIR}`` (its folder) and, for a plugin's skill, ``${CLAUDE_PLUGIN_ROOT}``
        (the plugin's folder) and ``${CLAUDE_PLUGIN_DATA}`` (its data folder, when the plugin
        registered one)."""
        folder = skill.folder.resolve()
        found = {"${CLAUDE_SKILL_DIR}": str(folder)}
        for place in self.catalog.all_locations():
            root = place.confined
            if place.source == skill.source and place.source.startswith("plugin:"):
                if root is not None and folder.is_relative_to(root):
                    found["${CLAUDE_PLUGIN_ROOT}"] = str(root)
                    if place.data is not None:
                        found["${CLAUDE_PLUGIN_DATA}"] = str(place.data)
                    break
        return found

    def listing(self, snapshot: Snapshot) -> Rendered:
        """The prompt's listing of ``snapshot`` within ``[skills] listing_budget``; when the
        budget cuts it, one notice — once per run, and not again in later runs while the
        cut stays the same (``mycode skills`` always tells)."""
        from mycode_skills.budget import listing_budget, render

        known = getattr(self.context, "context_window", None)
        budget = listing_budget(self.context.settings, known() if callable(known) else None)
        rendered = render([s for s in snapshot.skills.values() if s.model_invocable], budget)
        message = rendered.notice()
        if message is not None and message not in self.reported:
            self.reported.add(message)
            if not shown_before(Path(self.context.home), message):
                self.context.emit(_info(message))
        return rendered

    def allowed_tools(self, skill: Skill) -> tuple[str, ...] | None:
        """``skill``'s ``allowed-tools`` with its :meth:`placeholders` filled in, as Claude
        Code fills them in (``Bash(python3 "${CLAUDE_PLUGIN_ROOT}/scripts/x.py" *)``
        otherwise matched no call, and the skill's own script was refused)."""
        if skill.allowed_tools is None:
            return None
        filled = self.placeholders(skill)
        return tuple(fill(entry, filled) for entry in skill.allowed_tools)

    def _sync_roots(self, folders: list[Path]) -> None:
        roots = getattr(self.context, "readable_roots", None)
        if roots is None:
            return
        for old in self._roots:
            if old in roots and old not in folders:
                roots.remove(old)
        for folder in folders:
            if folder not in roots:
                roots.append(folder)
        self._roots = folders

    def _notice(self, message: str) -> None:
        from mycode_core.events import NoticeEvent

        self.context.emit(NoticeEvent(level="warning", message=message))

    def pin(self, name: str, body: str) -> None:
        """Keep a loaded skill's body as pinned context (survives compaction).

        Uses the core's ``context.pin`` when it has one (the context engine's pins); the body
        is also kept in ``context.store["pinned_skills"][name]``.
        """
        with self.context.lock:
            pinned = self.context.store.setdefault(PINNED_KEY, {})
            pinned[name] = body
        pin = getattr(self.context, "pin", None)
        if callable(pin):
            pin(f"skill:{name}", body, title=f"Skill {name} (loaded)")


def _info(message: str) -> Any:
    from mycode_core.events import NoticeEvent

    return NoticeEvent(level="info", message=message, source="skills")
