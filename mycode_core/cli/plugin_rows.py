"""What ``mycode plugins`` says of plugins: each loaded one's distribution, version and hooks,
and why an installed one is not loaded."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from mycode_core import entry_scan
from mycode_core.plugins import (
    DEFAULT_PLUGINS,
    ENTRY_POINT_GROUP,
    distribution_of,
    load_report,
    names_from_env,
)


def installed_plugin_names() -> list[str]:
    """Every installed entry point's name, allowed or not, as the last plugin load found them
    (the scan reads every distribution's metadata: ~8 ms, once per start-up is enough)."""
    return [ep.name for ep in entry_scan.latest_entry_points(ENTRY_POINT_GROUP)]


def plugin_distribution(pm: pluggy.PluginManager, plugin: object) -> tuple[str, str] | None:
    """``(distribution name, version)`` a plugin came from (``None`` for built-ins/extras)."""
    dist = load_report(pm).distributions.get(pm.get_name(plugin) or "")
    return (str(dist.metadata["Name"]), str(dist.version)) if dist is not None else None


def distribution_version(distribution: str | None) -> str | None:
    """The installed version of ``distribution``, if it is installed."""
    try:
        return metadata.version(distribution) if distribution else None
    except metadata.PackageNotFoundError:
        return None


def failed_row(error: Any) -> dict[str, Any]:
    """The row of a plugin that failed to load (a ``load_report`` error): not loaded, no hooks,
    its distribution's version when installed; a plugin file's source and path."""
    return {
        **({"source": "file", "path": error.path} if error.path else {}),
        "name": error.plugin,
        "distribution": error.distribution,
        "version": distribution_version(error.distribution),
        "hooks": [],
        "builtin": False,
        "loaded": False,
    }


def describe_plugins(pm: pluggy.PluginManager, *, include_builtins: bool) -> list[dict[str, Any]]:
    """JSON-ready description of loaded plugins: name, distribution, version, hooks."""
    from mycode_core import __version__

    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        builtin = name in DEFAULT_PLUGINS
        if builtin and not include_builtins:
            continue
        hooks = sorted(impl_hook.name for impl_hook in pm.get_hookcallers(plugin) or [])
        found = plugin_distribution(pm, plugin)
        distribution: str | None = found[0] if found is not None else None
        version: str | None = found[1] if found is not None else None
        if builtin:
            distribution, version = "mycode-core", __version__
        row: dict[str, Any] = {
            "name": name,
            "distribution": distribution,
            "version": version,
            "hooks": hooks,
            "builtin": builtin,
        }
        path = load_report(pm).files.get(name)
        if path is not None:
            row.update(source="file", path=path)
        out.append(row)
    return out


def entry_point_status(name: str) -> tuple[str, str | None]:
    """Why the plugin ``name`` is not loaded: ``(status, distribution)``.

    ``status`` is ``not-installed`` (no entry point of that name), ``disabled`` (named in
    ``MYCODE_DISABLE_PLUGINS``), ``not-selected`` (``MYCODE_LOAD_PLUGINS`` leaves it out) or
    ``selected`` (allowed, so it failed to load). Nothing is imported.
    """
    found = [ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
    if not found:
        return "not-installed", None
    dist = distribution_of(found[0])
    if name in (names_from_env("MYCODE_DISABLE_PLUGINS") or set()):
        return "disabled", dist
    load = names_from_env("MYCODE_LOAD_PLUGINS")
    if load is not None and name not in load:
        return "not-selected", dist
    return "selected", dist


def strict_from_config(workspace: Path | None = None, home: Path | None = None) -> bool:
    """``[plugins] strict`` or ``MYCODE_STRICT_PLUGINS``, read before the plugins load, so a
    plugin that fails to load stops it at once (a broken config: reported where it is read)."""
    from mycode_core.config import ConfigError, load_settings
    from mycode_core.runtime.hookcalls import strict_from

    try:
        return strict_from(load_settings(workspace or Path.cwd(), home))
    except ConfigError:
        return strict_from(None)
