"""The ``load_skill`` tool: the body of a listed skill and the files of its folder."""

from __future__ import annotations

from typing import Any

from mycode_core import RunContext, ToolResult, tool
from mycode_core.api import InlineCommandRefused, fill_arguments, run_inline_commands
from mycode_skills.listing import loaded_text
from mycode_skills.state import SkillsState


def load(
    name: str,
    context: Any,
    *,
    turn: str | None,
    by_model: bool = False,
    arguments: str | None = None,
) -> ToolResult:
    """Load skill ``name`` for ``context``'s run: activate and pin it, return its text;
    ``by_model``: the model asked (a user-only skill is refused); ``arguments``: what the user
    typed after ``/name``, filled into its placeholders (``$ARGUMENTS``, ``$0``, ``$name``).

    Its ``!`cmd``` lines run first and their output takes their place, as Claude Code renders
    a skill: each judged by the run's permission policy and run by ``run_command`` (sandboxed),
    with no grant from its ``allowed-tools`` (they only restrict); one not allowed loads
    nothing."""
    state = SkillsState.of(context)
    snapshot = state.refresh()
    # also Claude Code's name for a plugin's skill, ``plugin:skill``, which plugins' own
    # commands use ("load the hookify:writing-rules skill first")
    skill = snapshot.find(name)
    if skill is None:
        available = ", ".join(sorted(snapshot.skills)) or "none"
        return ToolResult.error(f"Unknown skill {name!r}. Available skills: {available}.")
    if not by_model and not skill.user_invocable:
        return ToolResult.error(
            f"Skill {skill.name!r} is for the model to load when it applies, not for /skill "
            "(its user-invocable is false)."
        )
    if by_model and not skill.model_invocable:
        return ToolResult.error(
            f"Skill {skill.name!r} is for the user to invoke (/{skill.name}), not for load_skill "
            "(its disable-model-invocation is true)."
        )
    try:
        text, body = loaded_text(skill, state.placeholders(skill), context.session_id)
    except OSError as exc:
        return ToolResult.error(f"Cannot read skill {skill.name!r}: {exc.strerror or exc}")
    rendered = body
    if arguments is not None:
        rendered, _ = fill_arguments(rendered, arguments, skill.argument_names)
    try:
        rendered = run_inline_commands(rendered, context)
    except InlineCommandRefused as exc:
        return ToolResult.error(f"Skill {skill.name!r} was not loaded: {exc}")
    text, body = text.replace(body, rendered, 1), rendered
    state.restrictions.activate(skill.name, state.allowed_tools(skill), turn)
    state.pin(skill.name, body)
    return ToolResult(
        content=text,
        metadata={
            "skill": skill.name,
            "resources": [f"skill:{skill.name}"],
        },
    )


@tool(read_only=True, concurrency_safe=True, risk="low")
def load_skill(
    name: str,
    context: RunContext,
    args: str = "",
) -> ToolResult:
    """Load a skill listed under 'Skills' (args: its $ARGUMENTS): its SKILL.md, its files."""
    return load(name, context, turn=context.prompt, by_model=True, arguments=args or None)


LOAD_SKILL = load_skill
