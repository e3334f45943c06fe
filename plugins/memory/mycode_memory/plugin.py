"""The memory plugin's hook implementations (entry point ``memory``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mycode_core.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from mycode_core.records import ContextSection, RunContext, SlashCommand, Tool

SECTION_KEY = "memory.section"
TOLD_KEY = "memory.told"
"""``context.session_store`` key: the store's problems already told this session."""
SECTION_PRIORITY = 30


def budget(context: Any) -> int:
    """``[memory] budget_tokens`` (default 1500)."""
    from mycode_memory.select import DEFAULT_BUDGET

    section = context.settings.section("memory") if hasattr(context.settings, "section") else {}
    try:
        return max(0, int(section.get("budget_tokens", DEFAULT_BUDGET)))
    except (TypeError, ValueError):
        return DEFAULT_BUDGET


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[memory]`` config table so the core validates it."""
    from mycode_memory.settings import MemorySettings

    register("memory", MemorySettings)


@hookimpl
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Offer ``remember``."""
    from mycode_memory.tool import REMEMBER

    register(REMEMBER)


@hookimpl
def build_context(context: RunContext) -> list[ContextSection] | None:
    """The notes of this project and of the user, chosen once per session."""
    from mycode_core.records import ContextSection
    from mycode_core.tokens import count_text
    from mycode_memory.select import render_notes
    from mycode_memory.store import MemoryStore, StoreError

    with context.lock:
        cached = context.store.get(SECTION_KEY)
        # chosen once per session, for its first task; before the task is known (the CLI
        # prepares the run first) the choice is provisional and made again with the task
        if cached is None or (not cached[0] and context.prompt):
            store = MemoryStore(context.home, context.workspace)
            try:
                notes = store.all_notes()
            except StoreError as exc:
                told = context.session_store.setdefault(TOLD_KEY, set())  # not again by a subagent
                if cached is None and str(exc) not in told:
                    from mycode_core.events import NoticeEvent

                    told.add(str(exc))
                    context.emit(NoticeEvent(level="warning", message=f"memory: {exc}"))
                notes = []
            rendered = render_notes(notes, context.prompt, budget(context), count_text)
            cached = (context.prompt, rendered)
            context.store[SECTION_KEY] = cached
        text = cached[1]
    if not text:
        return None
    return [ContextSection(title="Memory", text=text, priority=SECTION_PRIORITY)]


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``mycode memory``."""
    from mycode_memory.cli import memory_command

    cli.add_command(memory_command)


@hookimpl
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """``/memory`` (list, forget, edit) and ``/init`` (write AGENTS.md from a survey)."""
    from mycode_core import SlashCommand
    from mycode_memory.slash import init_command, memory_command

    register(
        SlashCommand(
            name="memory",
            description="List, edit or forget remembered notes",
            argument_hint="[list | forget ID | edit [user]]",
            run=memory_command,
        )
    )
    register(
        SlashCommand(
            name="init",
            description="Survey the workspace and write AGENTS.md",
            argument_hint="[wishes]",
            run=init_command,
        )
    )
