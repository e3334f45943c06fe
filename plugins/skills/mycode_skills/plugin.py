"""The skills plugin's hook implementations (entry point ``skills``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mycode_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from pathlib import Path

    import click
    import pluggy

    from mycode_core.records import (
        ContextSection,
        PermissionVerdict,
        RunContext,
        SlashCommand,
        Tool,
        ToolCall,
    )

SECTION_PRIORITY = 40


@hookimpl
def add_hookspecs(pluginmanager: pluggy.PluginManager) -> None:
    """Add ``register_skills``, through which installed packages contribute skills."""
    from mycode_skills import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


@hookimpl
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Offer ``load_skill``."""
    from mycode_skills.tool import LOAD_SKILL

    register(LOAD_SKILL)


@hookimpl
def build_context(context: RunContext) -> list[ContextSection] | None:
    """List the skills (name and description only, sorted by name), within the listing's
    budget (``[skills] listing_budget``, a share of the context window)."""
    from mycode_core.records import ContextSection
    from mycode_skills.state import SkillsState

    state = SkillsState.of(context)
    snapshot = state.refresh()
    if not any(skill.model_invocable for skill in snapshot.skills.values()):
        return None
    text = state.listing(snapshot).text
    return [ContextSection(title="Skills", text=text, priority=SECTION_PRIORITY)]


@hookimpl
def validate_skills(
    path: Path, root: Path | None, folder_names: bool, strict: bool
) -> list[dict[str, Any]]:
    """The findings on the skills under ``path`` (``mycode plugins validate``)."""
    from pathlib import Path as _Path

    from mycode_skills.check import check_skills

    return check_skills(_Path(path), root, folder_names, strict)


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[skills]`` config table so the core checks it before a run."""
    from mycode_skills.settings import SkillsSettings

    register("skills", SkillsSettings)


@hookimpl(wrapper=True)
def permission_verdict(
    call: ToolCall, tool: Tool, context: RunContext
) -> Any:  # a generator: pluggy wrapper
    """While a skill with ``allowed-tools`` is active, calls outside the list ask first."""
    verdict: PermissionVerdict | None = yield
    from mycode_skills.state import STORE_KEY

    state = context.store.get(STORE_KEY)
    if state is None or context.permission_mode == "bypass":
        return verdict
    if verdict is not None and verdict.decision == "deny":
        return verdict
    skills = state.restricting(context.prompt, call.name, call.arguments)
    if skills is None:
        return verdict
    grant = f"skill-outside:{call.name}"
    if grant in context.session_grants:
        return verdict
    from mycode_core.records import PermissionVerdict

    names = ", ".join(repr(name) for name in skills)
    return PermissionVerdict(
        decision="ask",
        reason=f"{call.name} is not in the allowed-tools of the active skill {names}",
        rule=f"skill:{skills[0]}(allowed-tools)",
        layer="skill",
        grant=grant,
    )


@hookimpl
def register_commands(cli: click.Group) -> None:
    """Add ``mycode skills``."""
    from mycode_skills.cli import skills_command

    cli.add_command(skills_command)


@hookimpl
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """``/skills``, ``/skill NAME [task]`` and one ``/skill:NAME [task]`` per listed skill,
    with ``/NAME [task]`` as its alias (as Claude Code users type it) and, for a folder
    plugin's skill, ``/PLUGIN:NAME`` (Claude Code's form, ``/superpowers:brainstorming``): the
    core keeps an alias only when no built-in or other command has that name."""
    from mycode_core import SlashCommand
    from mycode_skills.slash import force_skill, skills_list
    from mycode_skills.state import SkillsState

    register(
        SlashCommand(
            name="skills", description="List the skills (and the invalid ones)", run=skills_list
        )
    )

    def named(arguments: str, ctx: RunContext) -> Any:
        name, _, task = arguments.strip().partition(" ")
        if not name:
            return skills_list("", ctx)
        return force_skill(name, task, ctx)

    register(
        SlashCommand(
            name="skill",
            description="Load a skill into this turn",
            argument_hint="NAME [task]",
            run=named,
        )
    )
    for skill in SkillsState.of(context).refresh().sorted():
        if not skill.user_invocable:
            continue

        def run(arguments: str, ctx: RunContext, _name: str = skill.name) -> Any:
            return force_skill(_name, arguments, ctx)

        description = skill.description[:80]
        register(
            SlashCommand(
                name=f"skill:{skill.name}",
                description=description,
                argument_hint=skill.argument_hint,
                run=run,
            )
        )
        aliases = [skill.name]
        plugin = skill.source.removeprefix("plugin:")
        if skill.source.startswith("plugin:") and not skill.name.startswith(f"{plugin}:"):
            aliases.append(f"{plugin}:{skill.name}")  # Claude Code's ``/plugin:skill``
        for alias in aliases:
            register(
                SlashCommand(
                    name=alias,
                    description=description,
                    argument_hint=skill.argument_hint,
                    run=run,
                    alias_of=f"skill:{skill.name}",
                )
            )
