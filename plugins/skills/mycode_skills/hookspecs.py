"""The hook the skills plugin adds: installed packages ship skills the way they ship tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mycode_core.hookspecs import hookspec

if TYPE_CHECKING:
    from mycode_core.records import RunContext


@hookspec
def register_skills(register: Callable[[Path | str], None], context: RunContext) -> None:
    """Contribute folders of skills (agentskills.io ``SKILL.md`` folders).

    Called once per run when the skills plugin first looks for skills, and by
    ``mycode skills``. Call ``register(path)`` with a skill folder (one holding ``SKILL.md``)
    or a folder whose subfolders are skill folders. Package skills have the lowest precedence:
    a project or user skill of the same name wins (with a notice). Implement it with
    ``@hookimpl(optionalhook=True)`` so your plugin also loads when the skills plugin is absent.

    ``source=NAME`` says where the folder comes from, as ``mycode skills`` shows it (default
    ``package``; ``claude`` for Claude Code's ``~/.claude/skills``). A folder plugin passes
    ``plugin=NAME`` (shown as ``plugin`` in ``mycode skills --json``; the source is
    ``plugin:NAME``), ``root=PLUGIN_ROOT`` (skill folders and ``SKILL.md`` files leading
    outside it are refused; ``${CLAUDE_PLUGIN_ROOT}`` in its skills) and ``data=PLUGIN_DATA``
    (``${CLAUDE_PLUGIN_DATA}`` in its skills). ``folder_names=True`` says the folder is of a
    format whose ``name`` is a display name (Claude Code and Codex plugins: ``Plugin
    Settings``): a name breaking a naming rule is then replaced by the folder's name, quietly.
    ``strict=True`` (Agent Plugins folders, whose §7.1 says so) skips a skill that breaks any
    rule of the Agent Skills specification instead of loading it with a warning.

    :param register: callback taking a folder path (and optionally ``plugin``, ``root``,
        ``folder_names``, ``strict``, ``data``, ``source``).
    :param context: the run's :class:`~mycode_core.records.RunContext` (``mycode skills``
        passes one of its own: workspace, home, settings and plugin manager, no model).
    """


@hookspec
def validate_skills(
    path: Path, root: Path | None, folder_names: bool, strict: bool
) -> list[dict[str, Any]] | None:
    """Check the skills under ``path`` as a run would read them, without loading them.

    Called by ``mycode plugins validate`` (the ``claude_compat`` plugin) for each skills folder
    of a plugin folder; this plugin implements it. Returns one item per finding:
    ``{"skill", "folder", "rule", "message", "loaded"}`` — ``loaded`` false for a skill a run
    would not load (broken front matter, an invalid name, a strict folder's non-conforming
    skill), true for a remark on one it loads (a name differing from its folder, a display
    name replaced by the folder's, an over-long description, an optional field of the wrong
    type, no front matter), including those a run keeps quiet about in plugin folders.

    :param path: a skills folder (folders of ``SKILL.md`` folders) or one skill folder.
    :param root: the plugin's root: skill folders and files leading outside it are refused.
    :param folder_names: the folder's format reads ``name`` as a display name (Claude Code,
        Codex), as ``register_skills`` takes it.
    :param strict: an Agent Plugins folder: a non-conforming skill is not loaded.
    """
