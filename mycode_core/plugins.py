"""Building the plugin manager: built-ins, entry points (group ``mycode``), plugin files. The
plugin selection applies before any import; a plugin that fails to load costs one line."""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy

from mycode_core import entry_scan, hookspecs
from mycode_core.errors import error_line, raised_by_plugin, watching_ctrl_c

ENTRY_POINT_GROUP = "mycode"

DEFAULT_PLUGINS: tuple[str, ...] = (
    "mycode_core.builtins.models",
    "mycode_core.builtins.context",
    "mycode_core.builtins.compaction",
)


class PluginLoadError(RuntimeError):
    """Raised in strict mode when a plugin cannot be loaded."""


@dataclass
class PluginProblem:
    """One plugin that failed to load or validate, with everything needed to fix it."""

    plugin: str
    message: str  # one readable line: what failed and what to fix
    error_type: str = ""
    traceback: str = ""
    distribution: str | None = None
    detail: str = ""  # the whole error text (e.g. pluggy's multi-line validation message)
    kind: str = "load"  # "load" (import or registration failed) or "invalid" (unknown hooks)
    path: str | None = None  # the plugin file, for a plugin loaded from plugins/*.py

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (``mycode plugins --check``, the ``system`` event)."""
        keys = ("plugin", "distribution", "kind", "error_type", "message", "detail", "traceback")
        data = {key: getattr(self, key) for key in keys}
        if self.path is not None:
            data.update(source="file", path=self.path)
        return data


@dataclass
class PluginReport:
    """What happened while loading plugins: the problems, one readable line each."""

    errors: list[PluginProblem] = field(default_factory=list)
    import_ms: dict[str, float] = field(default_factory=dict)  # import and register, wall ms
    notices: list[str] = field(default_factory=list)  # files left out on purpose: not errors
    files: dict[str, str] = field(default_factory=dict)  # plugin name -> its plugin file
    distributions: dict[str, Any] = field(default_factory=dict)  # entry-point plugins' dists


def names_from_env(var: str) -> set[str] | None:
    """The comma-separated names of ``var`` (``MYCODE_LOAD_PLUGINS``…); ``None`` when unset."""
    raw = os.environ.get(var)
    return None if raw is None else {name.strip() for name in raw.split(",") if name.strip()}


def strict_plugins() -> bool:
    """Whether ``MYCODE_STRICT_PLUGINS`` makes a plugin problem fatal (exit code 2)."""
    return os.environ.get("MYCODE_STRICT_PLUGINS", "") not in ("", "0", "false", "no")


_CORE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_printed: set[str] = set()  # problems printed to stderr already (the CLI may build two managers)


def _warn(
    report: PluginReport, problem: PluginProblem, warn: Callable[[str], None] | None, strict: bool
) -> None:
    report.errors.append(problem)
    if strict:
        raise PluginLoadError(
            f"{problem.message} ([plugins] strict or MYCODE_STRICT_PLUGINS is set: fix or disable"
            f" the plugin, e.g. MYCODE_DISABLE_PLUGINS={problem.plugin}; the traceback: "
            "mycode plugins --check)"
        )
    _say(problem.message, " (details: mycode plugins --check)", warn)


def _notice(report: PluginReport, message: str, warn: Callable[[str], None] | None) -> None:
    report.notices.append(message)
    _say(message, "", warn)


def _say(message: str, suffix: str, warn: Callable[[str], None] | None) -> None:
    """``message`` to ``warn``, else once per process to stderr."""
    if warn is not None:
        warn(message)
    elif message not in _printed:
        _printed.add(message)
        print(f"mycode: {message}{suffix}", file=sys.stderr)


def selected(name: str) -> bool:
    """Whether ``MYCODE_LOAD_PLUGINS`` / ``MYCODE_DISABLE_PLUGINS`` allow the plugin ``name``."""
    load = names_from_env("MYCODE_LOAD_PLUGINS")
    disable = names_from_env("MYCODE_DISABLE_PLUGINS") or set()
    return name not in disable and (load is None or name in load)


def _unknown_names(files: list[str], notice: Callable[[str], None]) -> None:
    """One notice for each name the plugin selection gives that no plugin has (misspelt?)."""
    from mycode_core.config_check import did_you_mean

    known = {*files, *(ep.name for ep in entry_scan.latest_entry_points(ENTRY_POINT_GROUP))}
    for var in ("MYCODE_LOAD_PLUGINS", "MYCODE_DISABLE_PLUGINS"):
        for name in sorted((names_from_env(var) or set()) - known):
            notice(f"{var}: no installed plugin is named {name!r}{did_you_mean(name, known)}")


def allowed_entry_points() -> list[metadata.EntryPoint]:
    """Entry points of group ``mycode`` that the environment allows, sorted by name."""
    chosen: dict[str, metadata.EntryPoint] = {}
    for ep in entry_scan.entry_points(ENTRY_POINT_GROUP):
        if selected(ep.name):
            chosen.setdefault(ep.name, ep)
    return [chosen[name] for name in sorted(chosen)]


def distribution_of(ep: metadata.EntryPoint | None) -> str | None:
    """The name of the distribution that installed ``ep``, if known."""
    dist = getattr(ep, "dist", None)  # its name is read from its METADATA: only when needed
    return str(dist.name) if dist is not None else None


def _unknown_hooks(pm: pluggy.PluginManager, plugin: object) -> str | None:
    """Why a registered plugin is invalid (hook names no hookspec declares), or ``None``."""
    bad = {
        caller.name
        for caller in pm.get_hookcallers(plugin) or []
        if not caller.has_spec()
        for impl in caller.get_hookimpls()
        if impl.plugin is plugin and not impl.optionalhook
    }
    if not bad:
        return None
    return (
        f"unknown hook {', '.join(repr(b) for b in sorted(bad))} (no such hookspec; misspelt? "
        "a hook of an optional plugin needs @hookimpl(optionalhook=True))"
    )


def get_plugin_manager(
    *,
    extra_plugins: Iterable[object] = (),
    load_entry_points: bool = True,
    warn: Callable[[str], None] | None = None,
    strict: bool | None = None,
    workspace: Path | None = None,
    trusted: bool | None = None,
    load_files: bool | None = None,
) -> pluggy.PluginManager:
    """Build a fresh plugin manager: built-ins, entry points, plugin files, ``extra_plugins``.
    Plugin files load when ``load_files`` (default: ``load_entry_points``), a ``workspace``'s
    only if ``trusted`` (default: recorded trust). Hook names are checked once all are
    registered (plugins may add hookspecs): a plugin with an unknown hook is unregistered and
    reported. ``warn`` gets one line per failed plugin (default: stderr); ``strict`` (default:
    ``MYCODE_STRICT_PLUGINS``) makes the first failure raise :class:`PluginLoadError`."""
    strict = strict_plugins() if strict is None else strict
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.hook.add_hookspecs.call_historic(kwargs={"pluginmanager": pm})
    report = PluginReport()
    pm.mycode_report = report  # type: ignore[attr-defined]
    for module_name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(module_name), name=module_name)
    entry_points: dict[str, metadata.EntryPoint] = {}
    with watching_ctrl_c():
        for ep in allowed_entry_points() if load_entry_points else ():
            if not pm.has_plugin(ep.name):
                entry_points[ep.name] = ep
                failed = functools.partial(_problem, pm, ep.name, ep=ep)
                # ep.load(), not pluggy's loader: that re-reads every distribution per plugin
                if _register(pm, report, ep.name, ep.load, failed, warn, strict):
                    report.distributions[ep.name] = getattr(ep, "dist", None)
        if load_entry_points if load_files is None else load_files:  # SPEC §7 "Plugin files"
            from mycode_core.plugin_files import candidates, import_file

            notice = functools.partial(_notice, report, warn=warn)
            files: list[str] = []

            def seen(name: str) -> bool:  # every plugin file's name counts, selected or not
                files.append(name)
                return selected(name)

            for path in candidates(pm, workspace, trusted, seen, notice):
                failed = functools.partial(_problem, pm, path.stem, path=path)
                load = functools.partial(import_file, path)
                if _register(pm, report, path.stem, load, failed, warn, strict):
                    report.files[path.stem] = str(path)
            if load_entry_points:
                _unknown_names(files, notice)
    extras = list(extra_plugins)
    for plugin in extras:
        pm.register(plugin)
    for name, plugin in list(pm.list_name_plugin()):
        why = _unknown_hooks(pm, plugin)
        if why is not None and any(plugin is extra for extra in extras):
            raise pluggy.PluginValidationError(plugin, f"plugin {name!r}: {why}")
        if why is not None:
            pm.unregister(plugin)
            problem = PluginProblem(
                plugin=name,
                message=f"plugin {name!r} is invalid: {why}",
                error_type="PluginValidationError",
                distribution=distribution_of(entry_points.get(name)),
                detail=why,
                kind="invalid",
                path=report.files.pop(name, None),
            )
            _warn(report, problem, warn, strict)
    pm.check_pending()
    if os.environ.get("MYCODE_TRACE_PLUGINS"):
        _enable_tracing(pm)
    return pm


def _register(
    pm: pluggy.PluginManager,
    report: PluginReport,
    name: str,
    load: Callable[[], object],
    problem: Callable[[BaseException], PluginProblem],
    warn: Callable[[str], None] | None,
    strict: bool,
) -> bool:
    """Import and register one plugin, timing it; whatever it raises (``SystemExit`` and its
    own ``KeyboardInterrupt`` included, not a real Ctrl-C) is a load error."""
    started = time.perf_counter()
    try:
        pm.register(load(), name=name)
    except BaseException as exc:  # noqa: BLE001 - any import error is reported, not fatal
        if not raised_by_plugin(exc):
            raise
        if pm.has_plugin(name):  # failed half-way (e.g. in a historic hook)
            pm.unregister(name=name)
        _warn(report, problem(exc), warn, strict)
        return False
    report.import_ms[name] = (time.perf_counter() - started) * 1000
    return True


def _problem(
    pm: pluggy.PluginManager,
    name: str,
    exc: BaseException,
    *,
    ep: metadata.EntryPoint | None = None,
    path: Path | None = None,
) -> PluginProblem:
    import traceback

    dist = distribution_of(ep)
    text = str(exc).strip()
    if isinstance(exc, pluggy.PluginValidationError):
        detail = f"invalid hook implementation {_validation_summary(pm, text)}"
    else:
        detail = error_line(exc)
        frames = [f"{f.filename}:{f.lineno}" for f in traceback.extract_tb(exc.__traceback__)]
        library = (os.sep + "pydantic", os.sep + "pluggy" + os.sep, "<frozen ", _CORE_DIR)
        own = [frame for frame in frames if not any(part in frame for part in library)]
        where = (own or frames or [""])[-1]  # the plugin's own line, not pydantic's or ours
        if isinstance(exc, SyntaxError) and exc.filename:  # its own position, not the importer's
            where = f"{exc.filename}:{exc.lineno}"
        if where and not getattr(exc, "where", ""):  # a ToolDefinitionError names it already
            detail += f" (at {where})"
    source = f" (distribution {dist})" if dist else ""
    what = "failed to load" if path is None else f"(file {path}) failed to load"
    return PluginProblem(
        plugin=name,
        message=f"plugin {name!r}{source} {what}: {detail}",
        error_type=type(exc).__name__,
        traceback="".join(traceback.format_exception(exc)),
        distribution=dist,
        detail=text,
        path=None if path is None else str(path),
    )


def _validation_summary(pm: pluggy.PluginManager, text: str) -> str:
    """Pluggy's validation message on one line, plus the hookspec's own signature."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].startswith("Plugin ") and " for hook " in lines[0]:
        lines = lines[1:]  # "Plugin 'x' for hook 'y'": the plugin is named already
    head = ""
    if lines and lines[0].startswith("hookimpl definition: "):
        head = lines.pop(0).removeprefix("hookimpl definition: ") + ": "
    summary = head + "; ".join(lines)
    match = re.search(r"for hook '(\w+)'", text)
    caller = getattr(pm.hook, match.group(1), None) if match else None
    spec = caller.spec if caller is not None else None
    if spec is not None:
        summary += f"; the hookspec is {spec.name}({', '.join(spec.argnames)})"
    return summary


def load_report(pm: pluggy.PluginManager) -> PluginReport:
    """The :class:`PluginReport` of a manager built by :func:`get_plugin_manager`."""
    report = getattr(pm, "mycode_report", None)
    return report if isinstance(report, PluginReport) else PluginReport()


def _enable_tracing(pm: pluggy.PluginManager) -> None:
    lock = threading.Lock()  # one write per line: observer threads trace too

    def before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        names = ", ".join(impl.plugin_name for impl in impls)
        with lock:
            sys.stderr.write(f"[trace] {hook_name} -> {names}\n")

    pm.add_hookcall_monitoring(before, lambda *args: None)
