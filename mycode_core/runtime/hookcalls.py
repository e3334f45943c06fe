"""Calling hooks through pluggy so one broken plugin does not break the rest: the raising
plugin is found from the traceback, reported once, and the call goes on without it. Verdicts and
transforms fail closed (SPEC §7, :class:`HookGuard`): a raising or wrong-typed implementation is
skipped for the run (a failing ``permission_verdict`` denies that call); strict plugins exit 2."""

from __future__ import annotations

import inspect
import re
import signal
import sys
import threading
from collections.abc import Callable
from types import CodeType, FrameType, TracebackType
from typing import Any

import pluggy

from mycode_core.errors import SetupError, error_line
from mycode_core.events import NoticeEvent
from mycode_core.plugins import strict_plugins

Notice = Callable[[str], None]
OnError = Callable[[str | None, str, BaseException], None]  # (plugin, message, exception)
Codes = dict[CodeType, list[tuple[str, object]]]
Valid = Callable[[Any], bool]


_FAILED = re.compile(r"^plugin '([^']+)' failed in (\w+)")


def failure_notice(message: str) -> NoticeEvent:
    """A ``warning`` notice, carrying ``plugin`` and ``hook`` when it is a plugin's failure."""
    found = _FAILED.match(message)
    plugin, hook = (found.group(1), found.group(2)) if found else (None, None)
    return NoticeEvent(level="warning", message=message, plugin=plugin, hook=hook)


def is_plugin_failure(exc: BaseException) -> bool:
    """Whether ``exc`` from a hook call is the plugin's failure: anything but a real Ctrl-C
    (main thread, Python's SIGINT handler) or a plugin refusing the run (:class:`SetupError`)."""
    if isinstance(exc, KeyboardInterrupt) and threading.current_thread() is threading.main_thread():
        return signal.getsignal(signal.SIGINT) is not signal.default_int_handler
    return not isinstance(exc, SetupError)


def implementation_codes(pm: pluggy.PluginManager, hook_name: str) -> Codes:
    """Code objects of a hook's implementations → their ``(plugin name, plugin)`` pairs."""
    codes: Codes = {}
    for impl in getattr(pm.hook, hook_name).get_hookimpls():
        code = getattr(impl.function, "__code__", None)
        if code is not None:
            codes.setdefault(code, []).append((impl.plugin_name, impl.plugin))
    return codes


def _owner(codes: Codes, frame: FrameType) -> str | None:
    candidates = codes.get(frame.f_code)
    if not candidates:
        return None
    if len(candidates) > 1:
        instance = frame.f_locals.get("self")  # equal code objects: same class, or same text
        for name, plugin in candidates:
            if plugin is instance or getattr(plugin, "__dict__", None) is frame.f_globals:
                return name
    return candidates[0][0]


def calling_plugin(codes: Codes, default: str | None = None) -> str | None:
    """The plugin whose hook implementation is on the current call stack (innermost first)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = _owner(codes, frame)
        if name is not None:
            return name
        frame = frame.f_back
    return default


def culprit_of(codes: Codes, tb: TracebackType | None) -> str | None:
    """The plugin of the innermost implementation frame (not a wrapper around it) that raised."""
    found = None
    while tb is not None:
        found = _owner(codes, tb.tb_frame) or found
        tb = tb.tb_next
    return found


def call_hook(
    pm: pluggy.PluginManager,
    hook_name: str,
    notice: Notice,
    *,
    side_effects: bool = False,
    on_error: OnError | None = None,
    **kwargs: Any,
) -> list[Any]:
    """Call ``pm.hook.<hook_name>(**kwargs)``, a failing plugin reported and skipped; with
    ``side_effects`` (``register_*``) implementations that ran before a failure are not rerun."""
    codes = implementation_codes(pm, hook_name)
    removed: list[str] = []
    results: list[Any] = []
    while True:
        gone = [pm.get_plugin(name) for name in removed]  # none: the hook caller itself
        caller = pm.subset_hook_caller(hook_name, remove_plugins=gone)
        try:
            outcome = caller(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - one broken plugin must not break the run
            if not is_plugin_failure(exc):  # a plugin may refuse the run (exit 2)
                raise
            culprit = culprit_of(codes, exc.__traceback__)
            culprit = None if culprit in removed else culprit
            by = f"hook {hook_name} failed"
            if culprit:
                by = f"plugin {culprit!r} failed in {hook_name}"
            message = f"{by}: {error_line(exc)}"
            notice(message)
            if on_error is not None:
                on_error(culprit, message, exc)
            if culprit is None:
                return results
            if side_effects:  # and every plugin pluggy called before the culprit
                impls = reversed(getattr(pm.hook, hook_name).get_hookimpls())
                order = [impl.plugin_name for impl in impls]
                ran = order[: order.index(culprit)] if culprit in order else []
                removed.extend(p for p in ran if p not in removed)
            removed.append(culprit)
            continue
        if isinstance(outcome, list):
            results.extend(outcome)
        elif outcome is not None:
            results.append(outcome)
        return results


def strict_from(settings: Any) -> bool:
    """``[plugins] strict`` or ``MYCODE_STRICT_PLUGINS`` set."""
    if strict_plugins():
        return True
    section = getattr(settings, "section", None)
    table = section("plugins") if callable(section) else {}
    return bool(table.get("strict", False)) if isinstance(table, dict) else False


def discard(value: Any) -> None:
    """Close ``value`` if a plugin answered with a coroutine (no "never awaited" warning)."""
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
        self.skipped: dict[str, list[str]] = {}  # hook name → plugins skipped for the run
        self.strict_failure: str | None = None
        self.on_strict: Callable[[], None] | None = None  # called on the first strict failure
        self.upstream: HookGuard | None = None  # the parent agent's: a child's failures count
        self._lock = threading.Lock()

    def caller(self, hook_name: str, without: tuple[str, ...] | list[str] = ()) -> Any:
        """A caller of ``hook_name`` without the skipped plugins and the ``without`` ones."""
        names = {*self.skipped.get(hook_name, ()), *without}
        removed = [self.pm.get_plugin(name) for name in names]  # none: ``pm.hook.<name>``
        return self.pm.subset_hook_caller(hook_name, remove_plugins=removed)

    def implementations(self, hook_name: str, *, wrappers: bool = False) -> list[Any]:
        """The plain (or ``wrappers``) implementations still in use, in pluggy's calling order."""
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
        """Count a reported plugin failure; with strict plugins the first one stops the run."""
        with self._lock:
            first_strict = self.strict and self.strict_failure is None
            if first_strict:
                self.strict_failure = message
        if self.upstream is not None:
            self.upstream.count(message)
        if first_strict and self.on_strict is not None:
            self.on_strict()

    def on_error(self, plugin: str | None, message: str, exc: BaseException) -> None:
        """:meth:`count` as :func:`call_hook`'s ``on_error``."""
        self.count(message)

    def observe(self, hook_name: str, **kwargs: Any) -> list[Any]:
        """:func:`call_hook` for a lifecycle hook: a failure is one ``warning`` notice, counted."""

        def notice(message: str) -> None:
            self.emit(failure_notice(message))

        return call_hook(self.pm, hook_name, notice, on_error=self.on_error, **kwargs)

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

        ``valid`` judges the outcome (a wrong answer is blamed on the implementation that gave
        it; a ``firstresult`` wrapper turning the inner verdict into ``None`` fails too). An
        unnamed culprit gives ``None`` with ``"unknown"`` in the list. ``veto``: a wrapper's
        ``None`` is an answer; ``passes``: exception types raised on; ``once``: the first
        failure ends the call and the plugin is asked again next time.
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
                wrong = None
                if culprit is None or culprit in self._wrappers(hook_name):
                    wrong = self._answerer(hook_name, valid, kwargs)  # what the wrapper choked on
                problem = _exception_text(exc)
                if wrong is not None:
                    culprit, problem = wrong[0], f"returned {wrong[1]}, which is not a valid answer"
            else:
                if valid(outcome):
                    culprit = None if veto else self._dropper(hook_name, outcome, valid, kwargs)
                    if culprit is None:
                        return outcome, failed
                    problem = "returned None where the inner plugins gave a verdict"
                else:
                    problem = f"returned {type(outcome).__name__}, which is not a valid answer"
                    discard(outcome)
                    wrong = self._answerer(hook_name, valid, kwargs)
                    culprit = wrong[0] if wrong else None
                    culprit = culprit or self._wrapper_culprit(
                        hook_name, kwargs, lambda value: value is not None and valid(value)
                    )
            self.fail(hook_name, culprit, problem, not once)
            failed.append(culprit or "unknown")
            if culprit is None:
                return None, failed
        return None, [*failed, "unknown"]

    def chain(
        self,
        hook_name: str,
        key: str,
        value: Any,
        problem: Callable[[Any], str | None],
        **kwargs: Any,
    ) -> Any:
        """``value`` through each implementation in turn (``None`` passes it on); a raising one
        or one whose answer has a ``problem`` is reported, skipped for the run, and passed over."""
        for impl in self.implementations(hook_name):  # none: no cost (the common case)
            if impl.plugin_name in self.skipped.get(hook_name, ()):
                continue
            hookimpls = getattr(self.pm.hook, hook_name).get_hookimpls()
            others = [i.plugin for i in hookimpls if i is not impl]
            caller = self.pm.subset_hook_caller(hook_name, remove_plugins=others)
            try:
                answers = caller(**{key: value}, **kwargs)
            except BaseException as exc:
                if not is_plugin_failure(exc):
                    raise
                self.fail(hook_name, impl.plugin_name, _exception_text(exc))
                continue
            answer = answers[0] if isinstance(answers, list) and answers else None
            if answer is None:
                continue
            why = problem(answer)
            if why is not None:
                discard(answer)
                self.fail(hook_name, impl.plugin_name, why)
                continue
            value = answer
        return value

    def _wrappers(self, hook_name: str) -> list[str]:
        """The plugins whose wrappers are still in use, outermost first."""
        return [str(impl.plugin_name) for impl in self.implementations(hook_name, wrappers=True)]

    def _without(self, hook_name: str, plugins: list[str], kwargs: dict[str, Any]) -> Any:
        """The hook's outcome without ``plugins`` (and the skipped ones); ``None`` if it fails."""
        try:
            return self.caller(hook_name, plugins)(**kwargs)
        except BaseException as exc:  # noqa: BLE001 - probing only
            if not is_plugin_failure(exc):
                raise
            _close_unstarted(exc.__traceback__)
            return None

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
        return self._wrapper_culprit(hook_name, kwargs, lambda v: v is not None) or wrappers[0]

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
        """The first implementation whose own answer is not valid, and that answer's type."""
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
    """Close the never-started coroutines a failed call left in its frames."""
    while tb is not None:
        for value in list(tb.tb_frame.f_locals.values()):
            for item in value if isinstance(value, list) else [value]:
                if inspect.iscoroutine(item) and inspect.getcoroutinestate(item) == "CORO_CREATED":
                    item.close()
        tb = tb.tb_next


def _exception_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
