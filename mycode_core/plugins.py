"""Building the plugin manager: built-ins first, then entry points (group ``mycode``).

``MYCODE_LOAD_PLUGINS`` / ``MYCODE_DISABLE_PLUGINS`` are applied *before* anything is imported,
so a blocked plugin is never imported. A plugin that fails to import or validate costs one
stderr line naming it; ``MYCODE_STRICT_PLUGINS=1`` makes that fatal.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from mycode_core import hookspecs

ENTRY_POINT_GROUP = "mycode"

DEFAULT_PLUGINS: tuple[str, ...] = (
    "mycode_core.builtins.models",
    "mycode_core.builtins.context",
    "mycode_core.builtins.compaction",
    "mycode_core.builtins.stagnation",
)


class PluginLoadError(RuntimeError):
    """Raised in strict mode when a plugin cannot be loaded."""


@dataclass
class PluginReport:
    """What happened while loading plugins: the problems, one readable line each."""

    problems: list[str] = field(default_factory=list)


def _names_from_env(var: str) -> set[str] | None:
    raw = os.environ.get(var)
    if raw is None:
        return None
    return {name.strip() for name in raw.split(",") if name.strip()}


def _strict() -> bool:
    return os.environ.get("MYCODE_STRICT_PLUGINS", "") not in ("", "0", "false", "no")


_printed: set[str] = set()
"""Problems already printed to stderr by this process (the CLI may build two managers)."""


def _warn(report: PluginReport, message: str, warn: Callable[[str], None] | None) -> None:
    if _strict():
        raise PluginLoadError(message)
    report.problems.append(message)
    if warn is not None:
        warn(message)
    elif message not in _printed:
        _printed.add(message)
        print(f"mycode: {message}", file=sys.stderr)


def allowed_entry_points() -> list[metadata.EntryPoint]:
    """Entry points of group ``mycode`` that the environment allows, sorted by name."""
    load = _names_from_env("MYCODE_LOAD_PLUGINS")
    disable = _names_from_env("MYCODE_DISABLE_PLUGINS") or set()
    chosen: dict[str, metadata.EntryPoint] = {}
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in disable or (load is not None and ep.name not in load):
            continue
        chosen.setdefault(ep.name, ep)
    return [chosen[name] for name in sorted(chosen)]


def _check_plugin(pm: pluggy.PluginManager, plugin: object) -> None:
    """Like ``pm.check_pending()`` but for one plugin, so we can drop just that one."""
    for name in dir(plugin):
        opts = pm.parse_hookimpl_opts(plugin, name)
        if opts is None or opts.get("optionalhook"):
            continue  # an optional hook names a spec another (maybe absent) plugin defines
        hook = getattr(pm.hook, name, None)
        if hook is None or not hook.has_spec():
            raise pluggy.PluginValidationError(
                plugin, f"unknown hook {name!r} (no such hookspec; misspelt?)"
            )


def get_plugin_manager(
    *,
    extra_plugins: Iterable[object] = (),
    load_entry_points: bool = True,
    warn: Callable[[str], None] | None = None,
) -> pluggy.PluginManager:
    """Build a fresh plugin manager: built-ins, entry points, then ``extra_plugins``.

    ``warn`` receives one line per plugin that failed to load (default: stderr).
    """
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    report = PluginReport()
    pm.mycode_report = report  # type: ignore[attr-defined]
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    if load_entry_points:
        for ep in allowed_entry_points():
            if pm.has_plugin(ep.name):
                continue
            try:
                pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP, name=ep.name)
                plugin = pm.get_plugin(ep.name)
                if plugin is not None:
                    try:
                        _check_plugin(pm, plugin)
                    except pluggy.PluginValidationError:
                        pm.unregister(plugin)
                        raise
            except PluginLoadError:
                raise
            except Exception as exc:  # noqa: BLE001 - any import error is reported, not fatal
                detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                _warn(report, f"plugin {ep.name!r} failed to load: {detail}", warn)
    for plugin in extra_plugins:
        pm.register(plugin)
    pm.check_pending()
    if os.environ.get("MYCODE_TRACE_PLUGINS"):
        _enable_tracing(pm)
    return pm


def _enable_tracing(pm: pluggy.PluginManager) -> None:
    def before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        names = ", ".join(impl.plugin_name for impl in impls)
        print(f"[trace] {hook_name} -> {names}", file=sys.stderr)

    def after(
        outcome: Any, hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]
    ) -> None:
        return None

    pm.add_hookcall_monitoring(before, after)


def plugin_version(pm: pluggy.PluginManager, plugin: object) -> str | None:
    """The version of the distribution a plugin came from (``None`` for built-ins)."""
    for plugin_obj, dist in pm.list_plugin_distributions():
        if plugin_obj is plugin:
            return str(dist.version)
    return None


def describe_plugins(pm: pluggy.PluginManager, *, include_builtins: bool) -> list[dict[str, Any]]:
    """JSON-ready description of loaded plugins: name, version, hooks."""
    from mycode_core import __version__

    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        builtin = name in DEFAULT_PLUGINS
        if builtin and not include_builtins:
            continue
        hooks = sorted(impl_hook.name for impl_hook in pm.get_hookcallers(plugin) or [])
        version = __version__ if builtin else plugin_version(pm, plugin)
        out.append({"name": name, "version": version, "hooks": hooks, "builtin": builtin})
    return out
