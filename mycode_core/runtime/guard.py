"""Fail-closed hook calls (SPEC §7 "Failure semantics").

A ``*_verdict`` or transform implementation that raises (any ``BaseException`` but a real
Ctrl-C) or answers with the wrong type is *skipped for the rest of the run*: the call goes on
through ``pm.subset_hook_caller`` without it, so the other plugins, wrappers included, decide;
a failing ``permission_verdict`` instead denies the call and is asked again for the next.
Each failure is one ``notice`` event carrying ``plugin``, ``hook`` and the exception. With
``[plugins] strict = true`` (or ``MYCODE_STRICT_PLUGINS=1``) the first failure also stops the
run: :attr:`HookGuard.strict_failure` is set and the CLI exits 2.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any

import pluggy

from mycode_core.events import NoticeEvent
from mycode_core.plugins import strict_plugins
from mycode_core.runtime.hookcalls import culprit_of, implementation_codes, is_plugin_failure

Valid = Callable[[Any], bool]


def strict_from(settings: Any) -> bool:
    """``[plugins] strict`` or ``MYCODE_STRICT_PLUGINS`` set."""
    if strict_plugins():
        return True
    section = getattr(settings, "section", None)
    table = section("plugins") if callable(section) else {}
    return bool(table.get("strict", False)) if isinstance(table, dict) else False


def discard(value: Any) -> None:
    """Close ``value`` if it is a coroutine a plugin answered with (no "never awaited"
    warning later)."""
    if inspect.iscoroutine(value):
        value.close()


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
        self.upstream: HookGuard | None = None
        """The parent agent's guard (a child agent's failures count for the whole run)."""
        self._lock = threading.Lock()

    def caller(self, hook_name: str, without: tuple[str, ...] | list[str] = ()) -> Any:
        """``pm.hook.<hook_name>``, or a subset caller without the skipped plugins (and the
        ``without`` ones)."""
        names = {*self.skipped.get(hook_name, ()), *without}
        removed = [self.pm.get_plugin(name) for name in names]  # none: ``pm.hook.<name>``
        return self.pm.subset_hook_caller(hook_name, remove_plugins=removed)

    def implementations(self, hook_name: str, *, wrappers: bool = False) -> list[Any]:
        """The implementations still in use, in pluggy's calling order: the plain ones, or
        with ``wrappers`` the wrappers."""
        skipped = set(self.skipped.get(hook_name, ()))
        impls = getattr(self.pm.hook, hook_name).get_hookimpls()
        return [
            impl
            for impl in reversed(impls)
            if impl.plugin_name not in skipped and (impl.hookwrapper or impl.wrapper) == wrappers
        ]

    def fail(self, hook_name: str, plugin: str | None, problem: str, skip: bool = True) -> None:
        """Report one failing implementation and (with ``skip``) skip it for the rest of the run."""
        name = plugin or "unknown"
        with self._lock:
            if skip and plugin is not None and plugin not in self.skipped.setdefault(hook_name, []):
                self.skipped[hook_name].append(plugin)
        message = f"plugin {name!r} failed in {hook_name}: {problem}"
        tail = "; skipped for this run" if skip else "; the call is denied"
        tail = "; the run stops (strict plugins)" if self.strict else tail
        self.emit(
            NoticeEvent(
                level="error", message=message + tail, source=name, plugin=name, hook=hook_name
            )
        )
        self.count(message)

    def count(self, message: str) -> None:
        """Count one plugin failure already reported as a notice (by :meth:`fail`, or where a
        hook is called outside :meth:`call`: observers, ``build_context``, ``view_message``,
        start-up tasks, slash commands, ...): with strict plugins the first one stops the run
        (:attr:`strict_failure`, exit 2); otherwise nothing more happens."""
        with self._lock:
            first_strict = self.strict and self.strict_failure is None
            if first_strict:
                self.strict_failure = message
        if self.upstream is not None:
            self.upstream.count(message)
        if first_strict and self.on_strict is not None:
            self.on_strict()

    def on_error(self, plugin: str | None, message: str, exc: BaseException) -> None:
        """:meth:`count` as the ``on_error`` callback of
        :func:`~mycode_core.runtime.hookcalls.call_hook` (which has emitted the notice)."""
        self.count(message)

    def call(
        self,
        hook_name: str,
        valid: Valid,
        *,
        veto: bool = False,
        passes: tuple[type[BaseException], ...] = (),
        once: bool = False,
        **kwargs: Any,
    ) -> tuple[Any, list[str]]:
        """Call the hook through pluggy; returns ``(outcome, plugins that failed)``.

        ``valid`` judges the outcome (for a ``firstresult`` hook: the one answer); a wrong
        answer is blamed on the implementation that gave it, not on a wrapper that choked on
        it. A wrapper of a ``firstresult`` hook that turns the inner plugins' verdict into
        ``None`` fails too (it would loosen the decision). When the culprit cannot be named
        the outcome is ``None`` and ``"unknown"`` is in the list: fail closed. With ``veto``
        a wrapper's ``None`` is an answer (``compact_context``: send the view unchanged);
        exceptions of the ``passes`` types are the plugin's way to end the run, raised on. With
        ``once`` the first failure ends the call (``None``) and the plugin is asked again next
        time (``permission_verdict``: skipping it would loosen the later decisions).
        """
        failed: list[str] = []
        codes = implementation_codes(self.pm, hook_name)
        for _ in range(len(codes) + 1):
            if once and failed:
                return None, failed
            try:
                outcome = self.caller(hook_name)(**kwargs)
            except BaseException as exc:
                if not is_plugin_failure(exc) or isinstance(exc, passes):
                    raise
                _close_unstarted(exc.__traceback__)
                culprit = culprit_of(codes, exc.__traceback__)
                if culprit is None or culprit in self._wrappers(hook_name):
                    wrong = self._answerer(hook_name, valid, kwargs)  # what the wrapper choked on
                    if wrong is not None:
                        problem = f"returned {wrong[1]}, which is not a valid answer"
                        self.fail(hook_name, wrong[0], problem, not once)
                        failed.append(wrong[0])
                        continue
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                self.fail(hook_name, culprit, problem, not once)
                failed.append(culprit or "unknown")
                if culprit is None:
                    return None, failed
                continue
            if valid(outcome):
                dropper = None if veto else self._dropper(hook_name, outcome, valid, kwargs)
                if dropper is None:
                    return outcome, failed
                problem = "returned None where the inner plugins gave a verdict"
                self.fail(hook_name, dropper, problem, not once)
                failed.append(dropper)
                continue
            shown = type(outcome).__name__
            discard(outcome)
            wrong = self._answerer(hook_name, valid, kwargs)
            culprit = wrong[0] if wrong else None
            culprit = culprit or self._wrapper_culprit(
                hook_name, kwargs, lambda value: value is not None and valid(value)
            )
            problem = f"returned {shown}, which is not a valid answer"
            self.fail(hook_name, culprit, problem, not once)
            failed.append(culprit or "unknown")
            if culprit is None:
                return None, failed
        return None, [*failed, "unknown"]

    def _wrappers(self, hook_name: str) -> list[str]:
        """The plugins whose wrappers of ``hook_name`` are still in use, outermost first."""
        return [str(impl.plugin_name) for impl in self.implementations(hook_name, wrappers=True)]

    def _without(self, hook_name: str, plugins: list[str], kwargs: dict[str, Any]) -> Any:
        """The hook's outcome without ``plugins`` (and the skipped ones); ``None`` if it fails."""
        try:
            outcome = self.caller(hook_name, plugins)(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - probing only
            if not is_plugin_failure(exc):
                raise
            _close_unstarted(exc.__traceback__)
            return None
        return outcome

    def _dropper(self, hook_name: str, outcome: Any, valid: Valid, kwargs: dict[str, Any]) -> Any:
        """The wrapper that answered ``None`` over the inner plugins' verdict, if one did."""
        if outcome is not None or not getattr(self.pm.hook, hook_name).spec.opts["firstresult"]:
            return None
        wrappers = self._wrappers(hook_name)
        if not wrappers:
            return None
        inner = self._without(hook_name, wrappers, kwargs)
        if inner is None or not valid(inner):
            discard(inner)
            return None
        return (
            self._wrapper_culprit(hook_name, kwargs, lambda value: value is not None)
            or (wrappers[0])
        )

    def _wrapper_culprit(self, hook_name: str, kwargs: dict[str, Any], good: Valid) -> str | None:
        """The wrapper without which the outcome is ``good``."""
        for name in self._wrappers(hook_name):
            outcome = self._without(hook_name, [name], kwargs)
            ok = good(outcome)
            discard(outcome)
            if ok:
                return name
        return None

    def _answerer(
        self, hook_name: str, valid: Valid, kwargs: dict[str, Any]
    ) -> tuple[str, str] | None:
        """The first implementation (in calling order) whose own answer is not valid, and the
        type of that answer."""
        firstresult = getattr(self.pm.hook, hook_name).spec.opts["firstresult"]
        for impl in self.implementations(hook_name):
            try:
                answer = impl.function(*[kwargs[name] for name in impl.argnames])
            except BaseException:  # noqa: BLE001 - probing only; a raise is found by `call`
                continue
            if answer is None:
                continue
            bad = not (valid(answer) if firstresult else valid([answer]))
            discard(answer)
            if bad:
                return str(impl.plugin_name), type(answer).__name__
        return None


def _close_unstarted(tb: TracebackType | None) -> None:
    """Close the never-started coroutines a failed call left in its frames (a plugin answered
    with one and a wrapper choked on it): no "never awaited" warning later."""
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            candidates = value if isinstance(value, list) else [value]
            for item in candidates:
                if inspect.iscoroutine(item) and inspect.getcoroutinestate(item) == "CORO_CREATED":
                    item.close()
        tb = tb.tb_next
