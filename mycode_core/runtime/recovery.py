"""The inner model-call loop: one model turn, with retries (backoff, ``Retry-After``),
compaction, a nudge for an empty reply and continuation of a cut one, all without using a step;
the rest raises :class:`RunStopped`. Also counts the run's cost and context fill."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable, Sequence
from typing import Any

from mycode_core.events import (
    AssistantEvent,
    NoticeEvent,
    ReasoningDeltaEvent,
    RetryEvent,
    TextDeltaEvent,
)
from mycode_core.pricing import cost_usd, price_for
from mycode_core.providers.base import ContextLengthExceeded, ModelError, ModelReply, call_model
from mycode_core.runtime.context import ContextOverflow, ModelView
from mycode_core.runtime.messages import assistant_message
from mycode_core.runtime.runner_base import RunnerBase
from mycode_core.runtime.state import LoopState, RunStopped, TransitionReason
from mycode_core.runtime.window import parse_context_error

EMPTY_REPLY_NUDGE = (
    "Your last reply was empty. Continue the task: call a tool, or give your final answer."
)
LENGTH_NUDGE = "Your reply was cut off by the output limit. Continue exactly where you stopped."
THINKING_CUT_NUDGE = (
    "Your reply was cut off by the output limit while you were still thinking, before any "
    "answer. Think more briefly: call a tool, or give your final answer."
)
CONTENT_FILTERED = (
    "the server's content filter stopped the model's reply: it may be cut short (a final "
    "answer so stopped is never a verified pass)"
)
INTERRUPTED_NOTE = "[interrupted by the user]"
MAX_COMPACTIONS = 3
MAX_LENGTH_CONTINUES = 2
FILL = ("input_tokens", "output_tokens")
LOADING_WAITS = 150  # how often a server still loading its model is asked again (2 s apart)


def backoff_delay(attempt: int, retry_after: float | None, settings: Any) -> float:
    """Seconds to wait before retry ``attempt`` (1-based): ``Retry-After`` if given, else
    exponential from ``retry_base_delay`` with jitter; never more than ``retry_max_delay``."""
    cap, base = settings.retry_max_delay, settings.retry_base_delay
    if retry_after is not None and retry_after >= 0:
        return float(min(retry_after, cap))
    return float(min(cap, base * (2 ** (attempt - 1)) * (0.75 + random.random() / 2)))


def call_until_cancelled(
    model: Any, cancelled: threading.Event, call: Callable[[], ModelReply], abandoned: Any
) -> ModelReply | None:
    """``call()`` in a helper thread, so a cancel takes effect at once: ``None`` once
    ``cancelled`` is set (``abandoned`` is set first, then the model's ``abort`` asked)."""
    done = threading.Event()
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["reply"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, daemon=True, name="mycode-model-call").start()
    while not done.wait(0.05):
        if cancelled.is_set():
            abandoned.set()
            abort = getattr(model, "abort", None)
            if callable(abort):
                with contextlib.suppress(Exception):  # best effort
                    abort()
            return None
    if "error" in outcome:
        raise outcome["error"]
    return outcome.get("reply")


class Recovery(RunnerBase):
    """One usable model turn for a step of the loop (part of :class:`.loop.AgentRunner`), and
    the run's cost and context fill (the model may change within a session)."""

    cost: float | None = 0.0  # USD so far; None once a reply's model has no known price
    last_prompt_tokens = 0  # the last turn's input tokens: how full the context is
    cut_text = ""  # the pieces of an answer the reply cap cut, in the current turn
    _partial: Sequence[str] = ()  # the text streamed so far by the call under way
    _last_compaction_step = 0
    _tool_names: tuple[Any, ...] = ()

    def record_interrupted(self) -> None:
        """Close an interrupted turn: after a final user message, add an assistant message with
        the text streamed so far and :data:`INTERRUPTED_NOTE` (never two user messages in a row)."""
        if not len(self.history) or self.history[-1].message.get("role") != "user":
            return
        partial = "".join(self._partial).rstrip()
        self._partial = []
        content = f"{partial}\n\n{INTERRUPTED_NOTE}" if partial else INTERRUPTED_NOTE
        self.history.append(assistant_message(content, []))
        self._emit(AssistantEvent(content=content, finish_reason="interrupted"))

    def add_usage(self, usage: dict[str, int], *, turn: bool = True) -> None:
        """Add a reply's token usage to the run's total and its price at the current model's to
        the cost; only a ``turn`` (not a side request) tells how full the context is."""
        for key in FILL:
            self.usage[key] = self.usage.get(key, 0) + int(usage.get(key, 0) or 0)
        if not usage:
            return
        if turn:
            self.last_prompt_tokens = int(usage.get("input_tokens", 0) or 0)
        spent = cost_usd(price_for(self.settings.model, self.settings.models), usage)
        self.cost = None if spent is None or self.cost is None else self.cost + spent

    def total_cost(self) -> float | None:
        """USD so far (None when a reply's model has no known price)."""
        price = price_for(self.settings.model, self.settings.models)
        return None if self.cost is None or price is None else round(self.cost, 6)

    def over_budget(self) -> str | None:
        """The stop message once the cost passes ``--max-budget-usd``, else None."""
        budget = getattr(self.settings, "max_budget_usd", None)
        if budget is None or self.cost is None or self.cost <= float(budget):
            return None
        return f"cost budget of ${float(budget):g} used up (${self.cost:.4f})"

    def context_fill(self, window: int) -> dict[str, Any]:
        """``{window, used, percent}`` of the last request."""
        used = self.last_prompt_tokens
        percent = round(100.0 * used / window, 1) if window else None
        return {"window": window, "used": used, "percent": percent}

    def _complete(
        self, state: LoopState, view: ModelView, messages: list[dict[str, Any]], tools: Any
    ) -> ModelReply:
        """Call the model (:func:`call_until_cancelled`), dropping an abandoned call's late text."""
        abandoned = threading.Event()
        partial: list[str] = []
        self._partial = partial

        def on_text(text: str) -> None:
            if not abandoned.is_set():
                partial.append(text)
                self._emit(TextDeltaEvent(text=text))

        def on_reasoning(text: str) -> None:
            if not abandoned.is_set():
                self._emit(ReasoningDeltaEvent(text=text))

        def call() -> ModelReply:
            cap = view.reply_cap()
            return call_model(
                self.model, messages, tools, on_text, max_tokens=cap, on_reasoning=on_reasoning
            )

        cancelled = self.context.cancelled
        if (reply := call_until_cancelled(self.model, cancelled, call, abandoned)) is None:
            raise RunStopped(state.finish("interrupted"))
        self._partial = []
        return reply

    def tool_specs(self) -> list[dict[str, Any]]:
        """The tool schemas the next request sends (counted in the view when they change)."""
        assert self.view is not None
        tools = [tool.spec() for tool in self.context.tools.all()]
        names = tuple(t.get("function", {}).get("name") for t in tools)
        if names != self._tool_names:
            self._tool_names = names
            self.view.set_tools(tools)
        return tools

    def _learn(self, view: ModelView, exc: ContextLengthExceeded, sent_raw: int) -> bool:
        """Learn from a context-length error; ``True`` when the next try can be smaller (a lower
        limit, a better calibration, a view over budget to compact, or the budget halved once)."""
        window, calibration = view.window, view.calibration
        info, before = parse_context_error(str(exc)), calibration.ratio
        if info.requested and sent_raw:
            calibration.raise_to(info.requested / sent_raw)
        if info.limit is not None and window.learn(info.limit):
            told = f"the server's context window is {info.limit} tokens (learned from its error)"
            self._emit(NoticeEvent(level="info", message=f"{told}; kept for this session"))
            return True
        if calibration.ratio > before or view.estimate() > view.budget:
            return True  # counted bigger, or the view outgrew its budget (a window known late)
        budget = view.budget
        window.halved = True  # never below what the tool schemas need (budget_with)
        if view.budget >= budget:
            return False
        why = (
            "without naming its limit"
            if info.limit is None
            else f"though its window of {info.limit} tokens was known (it counts the request "
            "bigger than estimated)"
        )
        told = f"the server rejected the request as too long {why}; halving the context budget"
        self._emit(NoticeEvent(level="warning", message=f"{told} to {view.budget} tokens"))
        return True

    def call(self, state: LoopState) -> tuple[LoopState, ModelReply]:
        """One usable model turn, or :class:`RunStopped`."""
        attempt = loads = reactive = 0  # loads: the server loading its model, no retries
        force_compact = False
        view, cancelled = self.view, self.context.cancelled
        assert view is not None
        self.cut_text = ""  # the pieces of an answer the reply cap cut, so far
        while True:
            if cancelled.is_set():
                raise RunStopped(state.finish("interrupted"))
            tools = self.tool_specs()
            try:
                messages, change = view.build(self.history, force_compact=force_compact)
            except ContextOverflow as exc:
                raise RunStopped(state.finish("context_overflow", str(exc))) from None
            if change is not None:  # the compaction event, before the request that uses it
                change.steps_since_last = state.step - self._last_compaction_step
                self._last_compaction_step = state.step
                self._emit(change)
            force_compact = False
            sent_raw, sent_cap = view.raw_tokens(), view.reply_cap()
            try:
                reply = self._complete(state, view, messages, tools)
            except ContextLengthExceeded as exc:
                reactive += 1
                if reactive > MAX_COMPACTIONS or not self._learn(view, exc, sent_raw):
                    why = f"{exc} (the view was ~{view.estimate()} tokens, budget "
                    why += f"{view.budget}; nothing left to shrink)"
                    raise RunStopped(state.finish("context_overflow", why)) from None
                # only the reply cap too big: the same view again with a smaller cap; else compact
                force_compact = not (
                    view.reply_cap() < sent_cap and view.estimate() <= view.trigger()
                )
                state = state.next(TransitionReason.COMPACTED, str(exc))
                continue
            except ModelError as exc:
                if cancelled.is_set():
                    raise RunStopped(state.finish("interrupted")) from None
                attempt, loads = attempt + 1, loads + (exc.kind == "loading")
                over = attempt - loads > self.settings.max_retries or loads > LOADING_WAITS
                if not exc.retryable or over:
                    raise RunStopped(state.finish("model_error", str(exc))) from None
                delay = backoff_delay(attempt - loads, exc.retry_after, self.settings)
                said = str(exc)
                if (exc.retry_after or 0) > delay:  # first: a shortened retry line keeps it
                    said = f"the server asked to wait {exc.retry_after:g}s, capped by "
                    said += f"retry_max_delay ({delay:g}s): {exc}"
                self._emit(
                    RetryEvent(
                        attempt=attempt, reason=exc.kind, delay=round(delay, 2), message=said
                    )
                )
                state = state.next(TransitionReason.RETRY, exc.kind)
                if cancelled.wait(delay):
                    raise RunStopped(state.finish("interrupted")) from None
                continue
            if cancelled.is_set():
                raise RunStopped(state.finish("interrupted"))
            view.window.requested.set()  # window discovery may ask the server now
            self.add_usage(reply.usage)
            reported = int((reply.usage or {}).get("input_tokens", 0) or 0)
            if not view.bounded:  # a byte bound is no sample of the tokenizer's ratio
                view.calibration.observe(sent_raw, reported)
            if reply.finish_reason == "content_filter":
                self._emit(NoticeEvent(level="warning", message=CONTENT_FILTERED))
            silent = not reply.tool_calls and not (reply.content or "").strip()
            thinking = silent and not reply.refusal and bool(reply.reasoning)
            cut = reply.finish_reason == "length" and not reply.tool_calls
            if cut and (thinking or not silent):
                # cut by the reply cap: kept and continued (a model that spent it all thinking is
                # told to think more briefly); the pieces make one answer
                if not thinking:
                    self.history.append(assistant_message(reply.content, []))
                    self._emit(
                        AssistantEvent(
                            content=reply.content, finish_reason="length", usage=reply.usage or None
                        )
                    )
                    self.cut_text += reply.content or ""
                used, limit = sum(map(reply.usage.get, FILL, (0, 0))), view.window.limit
                why = "the model's thinking filled" if thinking else "the answer was cut by"
                why += f" the reply cap ({sent_cap} tokens) {state.length_continues + 1} times: "
                why += "raise [model] max_output_tokens (and the server's context size)"
                if used >= limit:  # the prompt and the answer fill the window: no room to go on
                    why = f"the answer filled the context window ({limit} tokens): use a larger "
                    why += "context window (llama-server -c N)"
                if used >= limit or state.length_continues >= MAX_LENGTH_CONTINUES:
                    raise RunStopped(state.finish("model_error", why), self.cut_text)
                state = state.next(
                    TransitionReason.LENGTH_CONTINUE, length_continues=state.length_continues + 1
                )
                self._guide("runtime", THINKING_CUT_NUDGE if thinking else LENGTH_NUDGE)
                continue
            if silent and not reply.refusal:
                if state.empty_nudges >= 1:
                    raise RunStopped(
                        state.finish("model_error", "the model returned an empty reply twice")
                    )
                state = state.next(
                    TransitionReason.EMPTY_REPLY_NUDGE, empty_nudges=state.empty_nudges + 1
                )
                self._guide("runtime", EMPTY_REPLY_NUDGE)
                continue
            return state, reply
