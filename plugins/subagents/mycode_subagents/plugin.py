"""The hook implementations of the subagents plugin (entry point ``subagents``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mycode_core import hookimpl

if TYPE_CHECKING:
    from mycode_core.records import RunContext, SlashCommand, Tool
    from mycode_subagents.profiles import Profile
    from mycode_subagents.settings import SubagentSettings


@hookimpl
def add_hookspecs(pluginmanager: Any) -> None:
    """Add ``register_agent_profiles`` (see :mod:`mycode_subagents.hookspecs`)."""
    from mycode_subagents import hookspecs

    pluginmanager.add_hookspecs(hookspecs)


def package_sources(
    context: RunContext,
    notice: Callable[[str], None],
    plugins: dict[Path, str] | None = None,
    filled: dict[Path, dict[str, str]] | None = None,
) -> list[Path]:
    """Profile files and folders that plugins contribute (hook ``register_agent_profiles``);
    ``plugins`` is filled with the plugin folder name each was registered with, ``filled``
    with the placeholders of its text (``${CLAUDE_PLUGIN_ROOT}``, ``${CLAUDE_PLUGIN_DATA}``)."""
    if context.plugin_manager is None:
        return []
    found: list[Path] = []

    def register(path: Any, plugin: str | None = None, root: Any = None, data: Any = None) -> None:
        found.append(Path(path).expanduser())
        if plugin and plugins is not None:
            plugins[found[-1]] = str(plugin)
        values = {"${CLAUDE_PLUGIN_ROOT}": root, "${CLAUDE_PLUGIN_DATA}": data}
        if filled is not None and (root or data):
            filled[found[-1]] = {key: str(value) for key, value in values.items() if value}

    try:
        context.hook.register_agent_profiles(register=register, context=context)
    except Exception as exc:  # noqa: BLE001 - a broken contributor must not stop the run
        notice(f"register_agent_profiles failed: {exc}")
        failed = getattr(context, "plugin_failed", None)
        if callable(failed):  # strict plugins: the run stops (exit 2)
            failed(f"register_agent_profiles failed: {exc}")
    return found


def run_profiles(context: RunContext, notice: Callable[[str], None]) -> dict[str, Profile]:
    """The profiles of this run: the built-ins, the plugins' (hook ``register_agent_profiles``),
    then the user's and the workspace's folders."""
    from mycode_subagents.profiles import load_profiles, profile_folders

    plugins: dict[Path, str] = {}
    filled: dict[Path, dict[str, str]] = {}
    sources = package_sources(context, notice, plugins, filled)
    sources += profile_folders(context.workspace, context.home)
    return load_profiles(sources, notice, context.workspace, plugins, filled)


def ignore_project_models(
    profiles: Iterable[Profile], config: SubagentSettings, notice: Callable[[str], None]
) -> None:
    """An untrusted workspace's profiles may not choose a model (SPEC §8: the session never
    talks to a model the project chose): their subagents use the parent's (one notice each)."""
    from mycode_subagents.settings import child_model

    for profile in profiles:
        model = (profile.model or "").strip()
        if profile.project and model not in config.model_aliases and child_model(model, config):
            notice(
                f"untrusted workspace: ignored `model: {model}` of agent profile "
                f"{profile.name!r} ({profile.source}); its subagent uses the parent's model. "
                "Trust the workspace with `mycode trust` (or --trust for one run)."
            )
            profile.model = None


def _notice(context: RunContext) -> Callable[[str], None]:
    from mycode_core.events import NoticeEvent

    def notice(message: str) -> None:
        context.emit(NoticeEvent(level="warning", source="subagents", message=message))

    return notice


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[subagents]`` config table so the core validates it."""
    from mycode_subagents.settings import SubagentSettings

    register("subagents", SubagentSettings)


@hookimpl
def register_tools(register: Callable[[Tool], None], context: RunContext) -> None:
    """Register ``delegate_task`` with the profiles of this run listed in its description."""
    from mycode_subagents import settings as config_mod
    from mycode_subagents.delegate import Delegator

    notice = _notice(context)
    config, problems = config_mod.load(context.settings)
    for problem in problems:
        notice(problem)
    if config.max_depth < 1 or context.depth >= config.max_depth:
        return
    profiles = run_profiles(context, notice)
    if not config_mod.trusted(context.settings):
        ignore_project_models(profiles.values(), config, notice)
    delegator = Delegator(profiles, config)
    context.store["subagents"] = delegator
    register(delegator.tool(context))

    def check_tools() -> None:
        # a plugin folder's agents are written for Claude Code, whose tools (WebFetch,
        # KillShell...) mycode lacks: said when one is delegated to, not on every run
        for profile in delegator.profiles.values():
            if profile.plugin is None:
                delegator.tell_missing_tools(profile, context)

    context.startup_tasks.append(check_tools)


def profiles_text(context: RunContext) -> str:
    """The profiles of this workspace, one block each, for ``/agents`` (with the tools each
    names that this run does not have)."""
    from mycode_subagents.delegate import Delegator
    from mycode_subagents.settings import SubagentSettings

    problems: list[str] = []
    profiles = run_profiles(context, problems.append)
    delegator = Delegator(profiles, SubagentSettings())
    lines = []
    for profile in profiles.values():
        tools = ", ".join(profile.tool_names() or []) if profile.tools is not None else "all"
        lines.append(f"{profile.name}  ({profile.source}; tools: {tools})")
        lines.append(f"    {profile.description[:200]}")
        if missing := delegator.missing_tools(profile, context):
            lines.append(f"    not here (it runs without them): {', '.join(missing)}")
    lines += [f"! {problem}" for problem in problems]
    return "\n".join(lines)


@hookimpl
def register_slash_commands(register: Callable[[SlashCommand], None], context: RunContext) -> None:
    """``/agents``: list the subagent profiles ``delegate_task`` can run."""
    from mycode_core.records import SlashCommand, SlashResult

    def run(args: str, context: RunContext) -> SlashResult:
        return SlashResult(output=profiles_text(context))

    register(SlashCommand(name="agents", description="List the subagent profiles", run=run))
