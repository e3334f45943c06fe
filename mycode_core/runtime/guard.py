"""Fail-closed hook calls (SPEC §7 "Failure semantics").

A ``*_verdict`` or transform implementation that raises (any ``BaseException`` but a real
Ctrl-C) or answers with the wrong type is *skipped for the rest of the run*: the call goes on
through ``pm.subset_hook_caller`` without it, so the other plugins, wrappers included, decide.
Each failure is one ``notice`` event carrying ``plugin``, ``hook`` and the exception. With
``[plugins] strict = true`` (or ``MYCODE_STRICT_PLUGINS=1``) the first failure also stops the
run: :attr:`HookGuard.strict_failure` is set and the CLI exits 2.
"""

from __future__ import annotations

import inspect
import os
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

import pluggy

from mycode_core.events import NoticeEvent
from mycode_core.runtime.hookcalls import Codes, _owner, implementation_codes, is_plugin_failure

Valid = Callable[[Any], bool]


def strict_from(settings: Any) -> bool:
    """``[plugins] strict`` or ``MYCODE_STRICT_PLUGINS`` set."""
    if os.environ.get("MYCODE_STRICT_PLUGINS", "") not in ("", "0", "false", "no"):
        return True
    section = getattr(settings, "section", None)
    table = section("plugins") if callable(section) else {}
    return bool(table.get("strict", False)) if isinstance(table, dict) else False


def _innermost(codes: Codes, tb: TracebackType | None) -> str | None:
    """The plugin whose implementation raised: the innermost implementation frame (a wrapper
    re-raising an inner implementation's exception is not blamed)."""
    found = None
    while tb is not None:
        found = _owner(codes, tb.tb_frame) or found
        tb = tb.tb_next
    return found


def _discard(value: Any) -> None:
    if inspect.iscoroutine(value):
        value.close()  # never awaited: no RuntimeWarning


class HookGuard:
    """Calls verdict and transform hooks so that a failing plugin never loosens a decision."""

    def __init__(
        self, pm: pluggy.PluginManager, emit: Callable[[Any], None], strict: bool = False
    ) -> None:
        self.pm = pm
        self.emit = emit
        self.strict = strict
        self.skipped: dict[str, list[str]] = {}
        """Hook name → plugins skipped for the rest of the run."""
        self.strict_failure: str | None = None
        self.on_strict: Callable[[], None] | None = None
        """Called once on the first failure in strict mode (the runner cancels the run)."""
        self._lock = threading.Lock()

    def caller(self, hook_name: str) -> Any:
        """``pm.hook.<hook_name>``, or a subset caller without the skipped plugins."""
        removed = [p for p in (self.pm.get_plugin(n) for n in self.skipped.get(hook_name, ())) if p]
        if not removed:
            return getattr(self.pm.hook, hook_name)
        return self.pm.subset_hook_caller(hook_name, remove_plugins=removed)

    def implementations(self, hook_name: str) -> list[Any]:
        """The non-wrapper implementations still in use, in pluggy's calling order."""
        skipped = set(self.skipped.get(hook_name, ()))
        impls = getattr(self.pm.hook, hook_name).get_hookimpls()
        return [
            impl
            for impl in reversed(impls)
            if impl.plugin_name not in skipped and not (impl.hookwrapper or impl.wrapper)
        ]

    def fail(self, hook_name: str, plugin: str | None, problem: str) -> None:
        """Report one failing implementation and skip it for the rest of the run."""
        name = plugin or "unknown"
        with self._lock:
            if plugin is not None and plugin not in self.skipped.setdefault(hook_name, []):
                self.skipped[hook_name].append(plugin)
            first_strict = self.strict and self.strict_failure is None
            message = f"plugin {name!r} failed in {hook_name}: {problem}"
            if first_strict:
                self.strict_failure = message
        tail = "; the run stops (strict plugins)" if self.strict else "; skipped for this run"
        self.emit(
            NoticeEvent(
                level="error", message=message + tail, source=name, plugin=name, hook=hook_name
            )
        )
        if first_strict and self.on_strict is not None:
            self.on_strict()

    def call(self, hook_name: str, valid: Valid, **kwargs: Any) -> tuple[Any, list[str]]:
        """Call the hook through pluggy; returns ``(outcome, plugins that failed)``.

        ``valid`` judges the outcome (for a ``firstresult`` hook: the one answer); a wrong
        answer is blamed on the implementation that gave it. When the culprit cannot be
        named the outcome is ``None`` and ``"unknown"`` is in the list: fail closed.
        """
        failed: list[str] = []
        codes = implementation_codes(self.pm, hook_name)
        for _ in range(len(codes) + 1):
            try:
                outcome = self.caller(hook_name)(**kwargs)
            except BaseException as exc:
                if not is_plugin_failure(exc):
                    raise
                culprit = _innermost(codes, exc.__traceback__)
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                self.fail(hook_name, culprit, problem)
                failed.append(culprit or "unknown")
                if culprit is None:
                    return None, failed
                continue
            if valid(outcome):
                return outcome, failed
            culprit = self._answerer(hook_name, valid, kwargs)
            shown = type(outcome).__name__
            _discard(outcome)
            self.fail(hook_name, culprit, f"returned {shown}, which is not a valid answer")
            failed.append(culprit or "unknown")
            if culprit is None:
                return None, failed
        return None, [*failed, "unknown"]

    def _answerer(self, hook_name: str, valid: Valid, kwargs: dict[str, Any]) -> str | None:
        """The first implementation (in calling order) whose own answer is not valid."""
        for impl in self.implementations(hook_name):
            try:
                answer = impl.function(*[kwargs[name] for name in impl.argnames])
            except BaseException:  # noqa: BLE001 - probing only; a raise is found by `call`
                continue
            bad = answer is not None and not valid(answer)
            _discard(answer)
            if bad or (answer is None and not valid(None)):
                return str(impl.plugin_name)
        return None
