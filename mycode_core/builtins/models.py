"""Built-in model providers: ``scripted:PATH``; anything else goes to the OpenAI-compatible one."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mycode_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from mycode_core.records import ModelProvider


def _scripted(model_id: str, settings: Any) -> Any:
    from mycode_core.providers.scripted import ScriptedModel

    return ScriptedModel(model_id, settings)


def _openai(model_id: str, settings: Any) -> Any:
    from mycode_core.providers.openai_compat import OpenAICompatibleModel

    name = model_id.split(":", 1)[1] if model_id.startswith("openai:") else model_id
    return OpenAICompatibleModel(name, settings)


@hookimpl
def register_models(register: Callable[[ModelProvider], None]) -> None:
    """Register the scripted provider and the explicit ``openai:`` prefix."""
    from mycode_core.records import ModelProvider

    for prefix, factory, description in (
        ("scripted", _scripted, "plays a JSON script of turns (offline)"),
        ("openai", _openai, "any OpenAI-compatible chat-completions endpoint"),
    ):
        register(ModelProvider(prefix=prefix, factory=factory, description=description))
