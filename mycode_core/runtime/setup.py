"""Assembling a run from plugins: tools, the model, the system prompt."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pluggy

from mycode_core.records import ContextSection, ModelProvider, RunContext, Tool
from mycode_core.runtime.context import render_system_prompt


class SetupError(Exception):
    """A run cannot start (no model, unknown provider, bad script); exit code 2."""


def _call_each(
    pm: pluggy.PluginManager, hook_name: str, notice: Callable[[str], None], **kwargs: Any
) -> None:
    """Call every implementation of a ``register_*`` hook, isolating failures per plugin."""
    hook = getattr(pm.hook, hook_name)
    for impl in reversed(hook.get_hookimpls()):
        try:
            impl.function(**{name: kwargs[name] for name in impl.argnames})
        except Exception as exc:  # noqa: BLE001 - one broken plugin must not break the run
            notice(f"plugin {impl.plugin_name!r} failed in {hook_name}: {exc}")


def collect_tools(
    pm: pluggy.PluginManager, context: RunContext, notice: Callable[[str], None]
) -> None:
    """Fill ``context.tools`` from ``register_tools``; each tool is tagged with its plugin."""
    hook = pm.hook.register_tools
    for impl in reversed(hook.get_hookimpls()):

        def register(tool: Tool, _plugin: str = impl.plugin_name) -> None:
            if tool.plugin is None:
                tool = tool.model_copy(update={"plugin": _plugin})
            context.tools.add(tool)

        arguments = {"register": register, "context": context}
        try:
            impl.function(**{name: arguments[name] for name in impl.argnames})
        except SetupError:  # issue 13: a plugin may refuse a run it cannot serve (exit 2)
            raise
        except Exception as exc:  # noqa: BLE001
            notice(f"plugin {impl.plugin_name!r} failed in register_tools: {exc}")


def collect_providers(
    pm: pluggy.PluginManager, notice: Callable[[str], None]
) -> dict[str, ModelProvider]:
    """All registered model providers by prefix."""
    providers: dict[str, ModelProvider] = {}

    def register(provider: ModelProvider) -> None:
        providers[provider.prefix] = provider

    _call_each(pm, "register_models", notice, register=register)
    return providers


def make_model(pm: pluggy.PluginManager, settings: Any, notice: Callable[[str], None]) -> Any:
    """Instantiate the model named by ``settings.model``."""
    model_id = settings.model
    if not model_id:
        raise SetupError(
            "no model configured: pass --model NAME (or set MYCODE_MODEL); "
            "try `mycode demo` for an offline run"
        )
    providers = collect_providers(pm, notice)
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
    pm: pluggy.PluginManager, context: RunContext, notice: Callable[[str], None]
) -> str:
    """The system prompt from every ``build_context`` contribution."""
    sections: list[ContextSection] = []
    hook = pm.hook.build_context
    for impl in reversed(hook.get_hookimpls()):
        try:
            contributed: Any = impl.function(context=context)
        except Exception as exc:  # noqa: BLE001
            notice(f"plugin {impl.plugin_name!r} failed in build_context: {exc}")
            continue
        for item in contributed or ():
            if isinstance(item, ContextSection):
                sections.append(item)
            elif isinstance(item, str):
                sections.append(ContextSection(title="", text=item, priority=60))
    return render_system_prompt(sections)
