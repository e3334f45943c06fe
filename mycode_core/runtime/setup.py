"""Assembling a run from plugins: the tools (one per name), the model, the system prompt."""

from __future__ import annotations

from typing import Any

import pluggy

from mycode_core.errors import SetupError, error_line
from mycode_core.records import ContextSection, DuplicateToolError, ModelProvider, RunContext, Tool
from mycode_core.runtime.context import render_system_prompt
from mycode_core.runtime.hookcalls import (
    Notice,
    OnError,
    call_hook,
    calling_plugin,
    implementation_codes,
    strict_from,
)


def collect_tools(
    pm: pluggy.PluginManager,
    context: RunContext,
    notice: Notice,
    *,
    on_error: OnError | None = None,
) -> None:
    """Fill ``context.tools`` from ``register_tools``; a tool that cannot be registered is one
    notice naming its plugin (with strict plugins and no ``on_error``: :class:`SetupError`)."""
    problems: list[str] = []
    if on_error is None and strict_from(context.settings):
        notice = lambda message: None  # noqa: E731
        on_error = lambda plugin, message, exc: problems.append(message)  # noqa: E731
    codes = implementation_codes(pm, "register_tools")
    pending: list[Tool] = []

    def report(plugin: str | None, message: str, exc: BaseException) -> None:
        notice(message)
        if on_error is not None:
            on_error(plugin, message, exc)

    def register(item: Any) -> None:
        plugin = calling_plugin(codes)
        try:
            tool = item
            if not isinstance(item, Tool):  # a plain typed function: ``@tool`` forgotten
                if not callable(item):
                    kind = type(item).__name__
                    raise TypeError(f"register() takes a Tool or a function, not {kind}")
                from mycode_core.tooling import tool_from_function

                tool = tool_from_function(item)
            if tool.plugin is None:
                tool = tool.model_copy(update={"plugin": plugin})
            pending.append(tool)
        except (ValueError, TypeError) as exc:
            why = error_line(exc, typed=False)
            report(plugin, f"plugin {plugin!r}: tool not registered: {why}", exc)

    asked = {"register": register, "context": context}
    call_hook(pm, "register_tools", notice, side_effects=True, on_error=on_error, **asked)
    settle(pm, context, pending, report)
    if problems:
        raise SetupError(f"{problems[0]} ([plugins] strict or MYCODE_STRICT_PLUGINS is set)")


REPOSITORY_PACKAGES = frozenset(
    "mycode_core mycode_batch mycode_builtin_tools mycode_checkpoints mycode_claude_compat "
    "mycode_completion_gate mycode_context_engine mycode_lsp mycode_mcp_bridge mycode_memory "
    "mycode_skills mycode_stagnation mycode_subagents".split()
)
"""The import packages of this repository's plugins (their tools are the built-in ones)."""


def is_repository_plugin(pm: pluggy.PluginManager, name: str | None) -> bool:
    """Whether plugin ``name`` is one of this repository's (by the package it lives in)."""
    plugin = pm.get_plugin(name) if name else None
    if plugin is None:
        return False
    module = getattr(plugin, "__name__", None) or type(plugin).__module__
    return str(module).split(".")[0] in REPOSITORY_PACKAGES


def settle(
    pm: pluggy.PluginManager, context: RunContext, pending: list[Tool], problem: OnError
) -> None:
    """Add ``pending`` to ``context.tools``, one tool per name (SPEC §7): a name two plugins
    register is a load error naming both; this repository's tool wins unless ``[tools] replace``
    chooses another; the losers are kept as ``shadowed``."""
    by_name: dict[str, list[Tool]] = {}
    for tool in pending:
        same = by_name.setdefault(tool.name, [])
        same[:] = [t for t in same if t.plugin != tool.plugin]  # one plugin twice: the last
        same.append(tool)
    section = getattr(context.settings, "section", None)
    table = section("tools") if callable(section) else {}
    replace = table.get("replace") if isinstance(table, dict) else None  # tool → chosen plugin
    chosen = {str(k): str(v) for k, v in replace.items()} if isinstance(replace, dict) else {}
    for name, tools in by_name.items():
        winner = _winner(pm, name, tools, chosen.get(name), problem)
        context.tools.add(winner, replace=True)
        losers = [str(t.plugin) for t in tools if t is not winner]
        if losers:
            context.tools.shadowed[name] = losers


def _winner(
    pm: pluggy.PluginManager, name: str, tools: list[Tool], wanted: str | None, problem: OnError
) -> Tool:
    plugins = [str(t.plugin) for t in tools]
    if wanted is not None and wanted in plugins:
        return tools[plugins.index(wanted)]
    if len(tools) == 1:
        if wanted is not None:
            message = f"[tools] replace: no plugin {wanted!r} registers tool {name!r}"
            problem(None, message, ValueError("unknown plugin in [tools] replace"))
        return tools[0]
    builtin = [t for t in tools if is_repository_plugin(pm, t.plugin)]
    winner = builtin[0] if builtin else tools[0]
    others = [p for p in plugins if p != winner.plugin]
    both = " and ".join(repr(p) for p in [str(winner.plugin), *others])
    message = (
        f"tool {name!r} registered by both {both}: {winner.plugin!r} keeps it "
        f'(choose with [tools] replace = {{{name} = "{others[0]}"}})'
    )
    problem(others[0], message, DuplicateToolError(message))
    return winner


def collect_providers(
    pm: pluggy.PluginManager, notice: Notice, *, on_error: OnError | None = None
) -> dict[str, ModelProvider]:
    """All registered model providers by prefix."""
    providers: dict[str, ModelProvider] = {}
    codes = implementation_codes(pm, "register_models")

    def register(provider: ModelProvider) -> None:
        if provider.plugin is None:
            provider = provider.model_copy(update={"plugin": calling_plugin(codes)})
        providers[provider.prefix] = provider

    call_hook(
        pm, "register_models", notice, side_effects=True, on_error=on_error, register=register
    )
    return providers


def make_model(
    pm: pluggy.PluginManager, settings: Any, notice: Notice, *, on_error: OnError | None = None
) -> Any:
    """Instantiate the model named by ``settings.model``."""
    model_id = settings.model
    if not model_id:
        raise SetupError(
            "no model configured: pass --model NAME (or set MYCODE_MODEL); "
            "try `mycode demo` for an offline run"
        )
    providers = collect_providers(pm, notice, on_error=on_error)
    prefix, sep, _rest = model_id.partition(":")
    provider = providers.get(prefix) if sep else None
    if provider is None:
        provider = providers.get("openai")
        if provider is None:
            raise SetupError(f"no provider for model {model_id!r} (is a plugin disabled?)")
        if not settings.base_url and not settings.api_key:
            raise SetupError(
                "no API key: set MYCODE_API_KEY or OPENAI_API_KEY, or pass --base-url for a "
                "local OpenAI-compatible server"
            )
    try:
        return provider.factory(model_id, settings)
    except ValueError as exc:
        raise SetupError(str(exc)) from None


def system_prompt(
    pm: pluggy.PluginManager,
    context: RunContext,
    notice: Notice,
    *,
    on_error: OnError | None = None,
) -> str:
    """The system prompt from every ``build_context`` contribution."""
    from mycode_core.builtins.context import flatten_sections

    sections: list[ContextSection] = []
    found = call_hook(pm, "build_context", notice, on_error=on_error, context=context)
    for item in flatten_sections(found):
        if isinstance(item, ContextSection):
            sections.append(item)
        elif isinstance(item, str):
            sections.append(ContextSection(title="", text=item, priority=60))
    return render_system_prompt(sections)
