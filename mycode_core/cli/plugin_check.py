"""``mycode plugins --check``: everything that is wrong with the installed plugins, and what
each one contributes.

For every plugin: load failures (exception type, message, traceback), pluggy's whole validation
message, unknown hook names, module-level functions named like a hook but lacking
``@hookimpl``, hook implementations that raise, tools that could not be registered — and the
tools, models, policies, commands and slash commands it contributes. Contributions are
collected with a throwaway run context (temporary workspace and home), so nothing of the
user's is touched and no project's MCP servers start.
"""

from __future__ import annotations

import difflib
import inspect
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pluggy

from mycode_core.cli.plugin_rows import describe_plugins, failed_row
from mycode_core.plugins import PluginProblem, get_plugin_manager, load_report

POLICY_HOOKS = ("permission_verdict", "stagnation_verdict", "completion_verdict", "compact_context")
"""The hooks that make a plugin a policy (``*_verdict`` and ``compact_context``)."""


def _problem(kind: str, message: str, exc: BaseException | None = None) -> dict[str, Any]:
    return {
        "kind": kind,
        "message": message,
        "error_type": type(exc).__name__ if exc is not None else "",
        "detail": str(exc) if exc is not None else "",
        "traceback": "".join(traceback.format_exception(exc)) if exc is not None else "",
    }


def _load_problem(error: PluginProblem) -> dict[str, Any]:
    data = error.as_dict()
    return {key: data[key] for key in ("kind", "message", "error_type", "detail", "traceback")}


def hookspec_names(pm: pluggy.PluginManager) -> list[str]:
    """Names of every hook that has a spec (the core's and those plugins added)."""
    return sorted(
        name
        for name, caller in vars(pm.hook).items()
        if isinstance(caller, pluggy.HookCaller) and caller.has_spec()
    )


def _functions(plugin: object) -> list[tuple[str, Any]]:
    if isinstance(plugin, ModuleType):
        return [
            (name, value)
            for name, value in vars(plugin).items()
            if inspect.isfunction(value) and value.__module__ == plugin.__name__
        ]
    return inspect.getmembers(type(plugin), inspect.isfunction)


def forgotten_hookimpls(pm: pluggy.PluginManager, name: str, plugin: object) -> list[str]:
    """One line per function of ``plugin`` that looks like a hook but lacks ``@hookimpl``.

    A function named exactly like a hookspec, or nearly (a typo), that pluggy does not see as
    an implementation is never called — almost always a forgotten decorator.
    """
    specs = hookspec_names(pm)
    lines = []
    for attr, _function in _functions(plugin):
        if attr.startswith("_") or pm.parse_hookimpl_opts(plugin, attr) is not None:
            continue
        if attr in specs:
            lines.append(
                f"plugin {name!r}: {attr}() is named like the {attr} hook but has no @hookimpl "
                "(forgot @hookimpl?), so it is never called"
            )
            continue
        close = difflib.get_close_matches(attr, specs, n=1, cutoff=0.88)
        if close:
            lines.append(
                f"plugin {name!r}: {attr}() looks like the {close[0]} hook but is misspelt and "
                "has no @hookimpl (forgot @hookimpl?), so it is never called"
            )
    return lines


def _root(module_name: str) -> str:
    return module_name.split(".")[0]


def _plugin_root(plugin: object) -> str:
    if isinstance(plugin, ModuleType):
        return _root(plugin.__name__)
    return _root(type(plugin).__module__)


class _Checker:
    """Collects problems and contributions, per plugin, for one manager."""

    def __init__(self, pm: pluggy.PluginManager, workspace: Path | None = None) -> None:
        self.pm = pm
        self.workspace = workspace
        self.rows: dict[str, dict[str, Any]] = {}
        for row in describe_plugins(pm, include_builtins=True):
            row.update(loaded=True, problems=[], notes=[], contributes=_empty_contributions())
            self.rows[row["name"]] = row
        self.unattributed: list[dict[str, Any]] = []

    def add(self, plugin: str | None, problem: dict[str, Any]) -> None:
        row = self.rows.get(plugin or "")
        (row["problems"] if row is not None else self.unattributed).append(problem)

    def on_error(self, plugin: str | None, message: str, exc: BaseException) -> None:
        tool = "tool not registered" in message or "registered by both" in message
        kind = "tool" if tool else "hook"
        self.add(plugin, _problem(kind, message, exc))

    def failed(self, errors: list[PluginProblem]) -> None:
        for error in errors:
            row = self.rows.get(error.plugin)
            if row is None:
                row = {
                    **failed_row(error),
                    "problems": [],
                    "notes": [],
                    "contributes": _empty_contributions(),
                }
                self.rows[error.plugin] = row
            row["problems"].append(_load_problem(error))

    def contributions(self) -> None:
        from mycode_core.cli.plugin_commands import (
            PluginCommandGroup,
            add_plugin_commands,
            save_command_cache,
        )
        from mycode_core.cli.slash import collect_slash_commands
        from mycode_core.runtime.setup import collect_providers, collect_tools

        def ignore(message: str) -> None:
            return None

        for name, plugin in self.pm.list_name_plugin():
            row = self.rows[name]
            row["contributes"]["policies"] = [h for h in row["hooks"] if h in POLICY_HOOKS]
            for line in forgotten_hookimpls(self.pm, name, plugin):
                row["problems"].append(_problem("forgot_hookimpl", line))
        with tempfile.TemporaryDirectory(prefix="mycode-check-") as tmp:
            context = _throwaway_context(self.pm, Path(tmp), self.workspace)
            try:
                collect_tools(self.pm, context, ignore, on_error=self.on_error)
                self._startup_notes(context.startup_tasks)
            finally:
                for task in context.cleanup:
                    try:
                        task()
                    except Exception:  # noqa: BLE001, S110 - only a throwaway context
                        pass
            for tool in context.tools.all():
                self._contribute(tool.plugin, "tools", tool.name)
            for provider in collect_providers(self.pm, ignore, on_error=self.on_error).values():
                self._contribute(provider.plugin, "models", provider.prefix)
            slash = collect_slash_commands(self.pm, context, ignore, on_error=self.on_error)
            for command in slash.values():
                self._contribute(command.plugin, "slash_commands", command.name)
            from mycode_core.cli import contributions

            contributions.collect(self.pm, context, self._contribute, self.on_error)
        group = PluginCommandGroup(name="mycode")
        for command_name, plugin_name in add_plugin_commands(
            group, self.pm, ignore, on_error=self.on_error
        ).items():
            self._contribute(plugin_name, "commands", command_name)
        save_command_cache(group, self.pm)

    def _contribute(self, plugin: str | None, kind: str, item: str) -> None:
        row = self.rows.get(plugin or "")
        if row is not None:
            row["contributes"][kind].append(item)

    def _startup_notes(self, tasks: list[Any]) -> None:
        roots = {_plugin_root(plugin): name for name, plugin in self.pm.list_name_plugin()}
        for task in tasks:
            owner = roots.get(_root(str(getattr(task, "__module__", "") or "")))
            if owner is not None:
                note = (
                    "registers more tools at start-up (e.g. from MCP servers); "
                    "`mycode tools` in a workspace lists them"
                )
                if note not in self.rows[owner]["notes"]:
                    self.rows[owner]["notes"].append(note)


def _empty_contributions() -> dict[str, list[str]]:
    from mycode_core.cli.contributions import empty

    return empty()


def _throwaway_context(pm: pluggy.PluginManager, tmp: Path, real: Path | None) -> Any:
    """A context in throwaway folders, with the settings a run in ``real`` would read (so
    ``[tools] replace`` decides collisions as it does in a run)."""
    from mycode_core.config import ConfigError, Settings, home_dir, load_settings
    from mycode_core.records import RunContext

    workspace, home = tmp / "workspace", tmp / "home"
    workspace.mkdir()
    home.mkdir()
    try:
        settings = load_settings(real or workspace, home_dir() if real else home, {})
    except ConfigError:
        settings = Settings()
    return RunContext(
        workspace=workspace,
        home=home,
        settings=settings,
        session_id="plugins-check",
        plugin_manager=pm,
    )


def check_plugins(
    *,
    include_builtins: bool = False,
    hook_name: str | None = None,
    extend: Callable[[pluggy.PluginManager, list[dict[str, Any]]], None] | None = None,
    workspace: Path | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """Check every installed plugin; returns ``(rows, problem lines)``.

    ``rows`` are the ``mycode plugins`` rows plus ``loaded``, ``problems`` (each with
    ``kind``, ``message``, ``error_type``, ``detail``, ``traceback``), ``notes`` and
    ``contributes`` (every kind of :data:`mycode_core.cli.contributions.KINDS`: tools, models,
    policies, commands, slash commands, skills, agent profiles, context sections, observers,
    settings),
    and ``import_ms`` for entry points and plugin files (the wall time of importing and
    registering it).
    Plugins that failed to load are always listed. Strict mode does not stop the check.
    Raises ``ValueError`` for an unknown ``hook_name``. ``extend(pm, rows)`` may add fields to
    the rows of loaded plugins (``mycode plugins --plugin-dir``).
    """
    _first_tool()
    pm = get_plugin_manager(warn=lambda message: None, strict=False, workspace=workspace)
    if hook_name is not None and hook_name not in hookspec_names(pm):
        raise ValueError(f"no hook named {hook_name!r}")
    checker = _Checker(pm, workspace)
    checker.failed(load_report(pm).errors)
    checker.contributions()
    for name, ms in load_report(pm).import_ms.items():
        if name in checker.rows:
            checker.rows[name]["import_ms"] = round(ms, 1)
    lines = [problem["message"] for row in checker.rows.values() for problem in row["problems"]]
    lines += [problem["message"] for problem in checker.unattributed]
    rows = []
    for name in sorted(checker.rows):
        row = checker.rows[name]
        if row["loaded"] and row["builtin"] and not (include_builtins or hook_name):
            continue
        if row["loaded"] and hook_name is not None and hook_name not in row["hooks"]:
            continue
        rows.append(row)
    if extend is not None:
        extend(pm, [row for row in rows if row["loaded"]])
    return rows, lines


def _first_tool() -> None:
    """Build a throwaway ``@tool`` before the plugins are timed: the first tool's one-time cost
    (importing jsonschema to check its schema, pydantic's schema machinery), paid by the core
    whichever plugin comes first, is not that plugin's import (the README's ``word_count``
    was charged 300+ ms for it)."""
    from mycode_core.tooling import tool_from_function

    def probe(text: str, count: int = 1) -> str:
        """Probe."""
        return text * count

    tool_from_function(probe)


SLOW_IMPORT_MS = 50.0
"""``mycode plugins --check`` names each plugin whose import takes longer (issue 24)."""


def slow_imports(rows: list[dict[str, Any]]) -> list[str]:
    """One line per plugin whose import took over :data:`SLOW_IMPORT_MS` (every run pays it
    before its first request)."""
    return [
        f"plugin {row['name']!r} takes {row['import_ms']:.0f} ms to import (over "
        f"{SLOW_IMPORT_MS:.0f} ms; every run pays it before the first request): import heavy "
        "modules inside the functions that need them"
        for row in rows
        if float(row.get("import_ms") or 0) > SLOW_IMPORT_MS
    ]
