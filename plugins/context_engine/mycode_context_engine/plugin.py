"""The context engine's hooks: ``compact_context``, ``summarize_context``, ``view_message``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mycode_core.hookspecs import hookimpl

if TYPE_CHECKING:
    from mycode_context_engine.compaction import Summarize
    from mycode_core.records import CompactedView, RunContext

# The engine's modules are imported inside the hooks: loading the plugin (``mycode --help``
# loads every plugin) costs nothing.
_NOTICES = "context_engine.notices"


def _notice(context: RunContext, message: str) -> None:
    """A warning for the user, once per run for the same text."""
    from mycode_core.events import NoticeEvent

    seen = context.store.setdefault(_NOTICES, set())
    if message not in seen:
        seen.add(message)
        context.emit(NoticeEvent(level="warning", message=message, source="context_engine"))


def _summarizer(context: RunContext, instructions: str | None, budget: int) -> Summarize:
    """Calls ``summarize_context`` through pluggy and turns every failure into a problem."""
    from mycode_context_engine.compaction import problem_of
    from mycode_core.api import ModelError

    def summarize(
        older: list[dict[str, Any]], previous: str | None
    ) -> tuple[str | None, str | None]:
        try:
            summary = context.hook.summarize_context(
                messages=older,
                previous_summary=previous,
                instructions=instructions,
                budget=budget,
                context=context,
            )
        except ModelError as exc:
            return None, f"the summary request failed ({exc})"
        except Exception as exc:  # noqa: BLE001 - a broken summariser must not lose the task
            who = _raiser(context, exc)
            named = (
                f"plugin {who!r} failed in summarize_context" if who else "the summariser failed"
            )
            failed = getattr(context, "plugin_failed", None)
            if callable(failed):  # strict plugins: the run stops (exit 2)
                failed(f"{named}: {type(exc).__name__}: {exc}")
            return None, f"{named} ({type(exc).__name__}: {exc})"
        if summary is not None and not isinstance(summary, str):
            if hasattr(summary, "close") and hasattr(summary, "cr_frame"):
                summary.close()  # a coroutine, never awaited
            return None, f"a summarize_context answer was {type(summary).__name__}, not text"
        if summary == "":
            return "", None  # the summariser chose facts only
        problem = problem_of(summary)
        return (summary.strip() if summary else None), problem

    return summarize


def _raiser(context: RunContext, exc: BaseException) -> str | None:
    """The plugin whose ``summarize_context`` raised ``exc`` (its innermost frame), if any."""
    pm = getattr(context, "plugin_manager", None)
    if pm is None:
        return None
    codes = {
        getattr(impl.function, "__code__", None): str(impl.plugin_name)
        for impl in pm.hook.summarize_context.get_hookimpls()
    }
    found, tb = None, exc.__traceback__
    while tb is not None:
        found = codes.get(tb.tb_frame.f_code, found)
        tb = tb.tb_next
    return found


@hookimpl
def compact_context(
    messages: list[dict[str, Any]],
    budget: int,
    context: RunContext,
    reason: str,
    instructions: str | None,
    tokens: int,
) -> CompactedView | None:
    """Summarise older turns, keep the recent ones, re-state the pinned context."""
    from mycode_context_engine.compaction import compact_view
    from mycode_context_engine.settings import engine_settings

    settings = engine_settings(context.settings)
    summarize = _summarizer(context, instructions, budget)
    result, problem = compact_view(messages, budget, context, reason, settings, summarize, tokens)
    if result is not None and settings.strategy == "off":
        _notice(
            context,
            "[context] strategy = off: the view reached the window's limit; older turns were "
            "dropped (the task, pins and recorded facts stay)",
        )
    if result is not None and problem is not None:  # once per run for the same problem
        _notice(context, f"context compaction: {problem}; kept the recorded facts instead")
    return result


@hookimpl(trylast=True)
def summarize_context(
    messages: list[dict[str, Any]],
    previous_summary: str | None,
    instructions: str | None,
    budget: int,
    context: RunContext,
) -> str | None:
    """Ask the model for a structured summary in a side request without tools."""
    from mycode_context_engine.settings import engine_settings
    from mycode_context_engine.summary import default_summary

    settings = engine_settings(context.settings)
    if not settings.summarizer:
        return ""
    return default_summary(
        messages,
        previous_summary,
        instructions,
        context,
        max_tokens=max(100, int(budget * settings.summary_share)),
        request_chars=max(2_000, int(budget * 0.6) * 3),
    )


@hookimpl
def view_message(
    message: dict[str, Any], budget: int, context: RunContext
) -> dict[str, Any] | None:
    """Big tool results → head + tail + saved path; huge tool-call arguments → elided."""
    from mycode_context_engine.settings import engine_settings
    from mycode_context_engine.shaping import shape_tool_calls, shape_tool_result

    settings = engine_settings(context.settings)
    role = message.get("role")
    if role == "tool":
        shaped = shape_tool_result(message, budget, settings, lambda: context.artifacts_dir)
        content, text = message.get("content"), str((shaped or {}).get("content", ""))
        size = len(content) if isinstance(content, str) else 0
        if text.startswith("[binary output: "):
            _notice(
                context,
                f"a tool result of {size:,} characters is binary bytes: the model sees a "
                "placeholder and the path of the saved output",
            )
        elif shaped is not None and size > budget * 4:  # bigger than the window
            _notice(
                context,
                f"a tool result of {size:,} characters is bigger than the context window: the "
                "model sees its head and tail and the path of the saved full output",
            )
        return shaped
    if role == "assistant":
        return shape_tool_calls(message, settings)
    return None
