"""Calling hooks through pluggy so one broken plugin does not break the rest: the raising
plugin is found from the traceback, reported once, and the call goes on without it."""

from __future__ import annotations

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

Notice = Callable[[str], None]
OnError = Callable[[str | None, str, BaseException], None]  # (plugin, message, exception)
Codes = dict[CodeType, list[tuple[str, object]]]


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


def _ran_before(pm: pluggy.PluginManager, hook_name: str, culprit: str) -> list[str]:
    """Plugins whose implementations pluggy called before ``culprit``'s."""
    order = [impl.plugin_name for impl in reversed(getattr(pm.hook, hook_name).get_hookimpls())]
    return order[: order.index(culprit)] if culprit in order else []


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
            by = (
                f"plugin {culprit!r} failed in {hook_name}"
                if culprit
                else f"hook {hook_name} failed"
            )
            message = f"{by}: {error_line(exc)}"
            notice(message)
            if on_error is not None:
                on_error(culprit, message, exc)
            if culprit is None:
                return results
            if side_effects:
                removed.extend(p for p in _ran_before(pm, hook_name, culprit) if p not in removed)
            removed.append(culprit)
            continue
        if isinstance(outcome, list):
            results.extend(outcome)
        elif outcome is not None:
            results.append(outcome)
        return results
