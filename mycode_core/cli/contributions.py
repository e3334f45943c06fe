"""What each plugin contributes beyond tools, models and commands (``mycode plugins --check``):
settings tables, context sections, observers, skills and agent profiles.

Each plugin's implementation is called on its own through pluggy
(``pm.subset_hook_caller``), with the checker's throwaway context, so every contribution is
attributed to the plugin that made it and one failing plugin costs only its own entry.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy

KINDS = (
    "tools",
    "models",
    "policies",
    "commands",
    "slash_commands",
    "skills",
    "agent_profiles",
    "context_sections",
    "observers",
    "settings",
)
"""Every kind of contribution ``contributes`` lists (always all keys, possibly empty)."""

OBSERVER_HOOKS = ("on_event", "session_start", "session_end", "notification")


def empty() -> dict[str, list[str]]:
    """A ``contributes`` table with every kind and nothing in it."""
    return {kind: [] for kind in KINDS}


def _section_title(item: Any) -> str:
    if isinstance(item, str):
        return item.strip().splitlines()[0][:60] if item.strip() else "(text)"
    title = getattr(item, "title", None)
    return str(title) if title else type(item).__name__


def _registered(item: Any) -> str:
    """A readable name for a registered skill / agent profile (a path, a name or a record)."""
    if isinstance(item, (str, Path)):
        path = Path(item)
        if path.name.lower() in ("skill.md", "agent.md"):
            return path.parent.name
        return path.stem if path.suffix else path.name
    return str(getattr(item, "name", item))


def collect(
    pm: pluggy.PluginManager,
    context: Any,
    contribute: Callable[[str, str, str], None],
    on_error: Callable[[str | None, str, BaseException], None],
) -> None:
    """Call ``contribute(plugin, kind, item)`` for each settings table, context section,
    observer hook, skill and agent profile of every plugin."""
    plugins = list(pm.list_name_plugin())
    for name, plugin in plugins:
        others = [other for other_name, other in plugins if other_name != name]
        hooks = {caller.name for caller in pm.get_hookcallers(plugin) or []}
        for hook in OBSERVER_HOOKS:
            if hook in hooks:
                contribute(name, "observers", hook)
        if "register_settings" in hooks:
            add = functools.partial(_add_setting, contribute, name)
            _call(pm, name, others, on_error, "register_settings", register=add)
        if "build_context" in hooks:
            results = _call(pm, name, others, on_error, "build_context", context=context)
            for result in results or []:
                for item in result if isinstance(result, list) else [result]:
                    contribute(name, "context_sections", _section_title(item))
        for hook, kind in (
            ("register_skills", "skills"),
            ("register_agent_profiles", "agent_profiles"),
        ):
            if hook in hooks:
                add = functools.partial(_add_registered, contribute, name, kind)
                _call(pm, name, others, on_error, hook, register=add, context=context)


def _add_setting(
    contribute: Callable[[str, str, str], None], plugin: str, table: Any, *_: Any
) -> None:
    contribute(plugin, "settings", str(table))


def _add_registered(
    contribute: Callable[[str, str, str], None], plugin: str, kind: str, item: Any, *_: Any
) -> None:
    contribute(plugin, kind, _registered(item))


def _call(
    pm: pluggy.PluginManager,
    name: str,
    others: list[object],
    on_error: Callable[[str | None, str, BaseException], None],
    hook: str,
    **kwargs: Any,
) -> Any:
    """Call ``hook`` of the plugin ``name`` alone (through pluggy); a failure is its problem."""
    caller = pm.subset_hook_caller(hook, remove_plugins=others)
    try:
        return caller(**kwargs)
    except Exception as exc:  # noqa: BLE001 - reported as that plugin's problem
        on_error(name, f"plugin {name!r} failed in {hook}: {exc}", exc)
        return None
