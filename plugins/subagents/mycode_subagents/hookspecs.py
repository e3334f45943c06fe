"""The hook this plugin adds to mycode (through ``add_hookspecs``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from mycode_core.hookspecs import hookspec

if TYPE_CHECKING:
    from mycode_core.records import RunContext


@hookspec
def register_agent_profiles(register: Callable[[Path], None], context: RunContext) -> None:
    """Contribute subagent profiles for ``delegate_task``.

    Called once per run when the tools are collected. Call ``register(path)`` with a Markdown
    profile file (front matter ``name``, ``description``, ``tools``, ``model``; the body is the
    child's instructions) or a folder of them (``*.md``, not recursive). A package profile is
    overridden by one of the same name in ``$MYCODE_HOME/agents/``, ``.claude/agents/`` or
    ``.mycode/agents/``. A plugin that implements this without depending on this plugin marks
    it ``@hookimpl(optionalhook=True)``. ``register(path, plugin=NAME)`` says which plugin
    folder the profiles belong to: they answer to ``NAME:profile`` (Claude Code's name for a
    plugin's agent), and to ``profile`` only while no other profile holds that name — they
    never replace a built-in, package, user or project profile, nor another plugin's.
    ``root=PLUGIN_ROOT`` and ``data=PLUGIN_DATA`` (keywords too) are filled into the profiles'
    instructions where they say ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PLUGIN_DATA}``, as
    Claude Code fills them in.

    :param register: callback taking a :class:`pathlib.Path` (and ``plugin``, ``root``,
        ``data``, keywords).
    :param context: the run's :class:`~mycode_core.records.RunContext`.
    """
