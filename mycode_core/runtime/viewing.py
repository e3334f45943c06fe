"""The runner's model view: window, compaction, message shaping, the view a resumed session
restores, and the checkpoint at the step limit (part of :class:`.loop.AgentRunner`)."""

from __future__ import annotations

import threading
from functools import partial
from typing import Any

from mycode_core.errors import error_line
from mycode_core.events import CheckpointEvent
from mycode_core.providers.base import ModelError, call_model
from mycode_core.providers.discovery import (
    NO_TOOLS,
    Limits,
    cached_window,
    claimed_window,
    remember_window,
)
from mycode_core.records import Observation
from mycode_core.runtime.context import ContextOverflow, ModelView
from mycode_core.runtime.hookcalls import culprit_of, implementation_codes, is_plugin_failure
from mycode_core.runtime.recovery import Recovery, call_until_cancelled
from mycode_core.runtime.state import LoopState
from mycode_core.runtime.window import ContextWindow
from mycode_core.sessions import SessionStore
from mycode_core.verdicts import CompactedView

DISCOVERY_WAIT = 30.0  # seconds discovery waits for the first reply before asking anyway
DISCOVERY_SETTLE = 1.0  # seconds the end of a turn waits for a discovery under way
CHECKPOINT_REQUEST = (
    "You have reached the step limit and cannot call tools any more. Write a continuation "
    "checkpoint for whoever resumes this task, under these headings: Confirmed facts; Files read; "
    "Files changed; Test status; Remaining actions; Blockers. Be concrete and brief."
)


def _compaction(value: Any) -> bool:
    """A ``compact_context`` answer: ``None``, the new messages or a ``CompactedView``."""
    if value is None or isinstance(value, CompactedView):
        return True
    return isinstance(value, list | tuple) and all(isinstance(m, dict) for m in value)


class Viewing(Recovery):
    """The model view over the run's history and what keeps it inside the window."""

    def _compact(
        self,
        messages: list[dict[str, Any]],
        budget: int,
        reason: str,
        instructions: str | None,
        tokens: int,
    ) -> Any:
        return self.guard.call(  # a failing compactor is skipped; the others compact
            "compact_context",
            _compaction,
            veto=True,
            passes=(ContextOverflow,),
            messages=messages,
            budget=budget,
            context=self.context,
            reason=reason,
            instructions=instructions,
            tokens=tokens,
        )[0]  # a tuple of messages is read as a list by the view

    def _make_window(self) -> ContextWindow:
        """This run's context window: configured, else cached for this server, else the default
        until background discovery (after the first reply) or an error says otherwise."""
        settings = self.settings
        configured = "context_window" in settings.model_fields_set
        window = ContextWindow(
            default=int(settings.context_window),
            configured=int(settings.context_window) if configured else None,
            reserve=settings.max_output_tokens,
        )
        self.context.context_window = lambda: window.limit
        discover = getattr(self.model, "discover_context_window", None)
        if not configured and callable(discover):
            base_url = str(getattr(settings, "base_url", None) or "")
            model_id = str(getattr(self.model, "model_id", ""))
            if base_url:
                window.discover(*cached_window(self.home, base_url, model_id))
                window.on_learn = lambda limit: remember_window(
                    self.home,
                    base_url,
                    model_id,
                    Limits(limit, window.server_output),
                    claimed_window(self.home, base_url, model_id),
                )
            self._discovery = threading.Thread(
                target=self._refresh_window,
                args=(window, discover, base_url, model_id),
                daemon=True,
                name="mycode-window-discovery",
            )
            self._discovery.start()
        return window

    def _make_view(self, prompt: str, window: ContextWindow) -> ModelView:
        """The model view of ``prompt`` and history over ``window``."""
        context = self.settings.context  # strategy off: only reactive handling at the limit
        threshold = 1.0 if context.strategy == "off" else context.compact_threshold
        batch = max(5, context.keep_recent_results) if "mask" in context.strategy else 0
        view = ModelView(  # masking strategies mask old results in batches (recheck)
            prompt, window, self._compact, shaper=self._shape_message, threshold=threshold
        )
        view.recheck = batch
        self.context.side_request = self._side_request
        if self.resumed_from:  # --resume: rebuild the view the session's last compaction recorded
            try:
                events = SessionStore(self.home).read_events(str(self.resumed_from))
            except Exception:  # noqa: BLE001 - no transcript to read: start from plain history
                events = []
            if (recorded := last_view(events)) is not None:
                size = recorded.get("context_window")
                if recorded.get("window_source") == "learned":  # (learn() ignores a limit of 0)
                    window.learn(size if isinstance(size, int) else 0)
                view.restore(recorded["view"], self.history, int(recorded["history_length"]))
        return view

    _discovery: threading.Thread | None = None

    def _settle_window(self, state: LoopState) -> LoopState:
        """At a turn's end, give a discovery under way :data:`DISCOVERY_SETTLE` s to finish (so
        short runs learn the window too); a chat template that drops tools fails a completion."""
        discovery, view = self._discovery, self.view
        if discovery is None or view is None or self.context.cancelled.is_set():
            return state
        if view.window.requested.is_set():
            discovery.join(DISCOVERY_SETTLE)
        caps = getattr(self.model, "template_caps", None) or {}
        offered = self.context.tools.names() and caps.get("supports_tools") is False
        if state.stop_reason == "completed" and offered:
            return state.finish("model_error", NO_TOOLS, verdict="none")
        return state

    def _refresh_window(
        self, window: ContextWindow, discover: Any, base_url: str, model_id: str
    ) -> None:
        """Ask the server for its window once the first reply is in, and cache it; a limit
        learned from an error beats a bigger claimed one (cached with that claim)."""
        window.requested.wait(DISCOVERY_WAIT)
        try:  # its window, or ``Limits``; any failure means "unknown"
            value = discover()
        except Exception:  # noqa: BLE001 - discovery is best effort
            value = None
        parts = (*value, None)[:2] if isinstance(value, tuple) else (value, None)
        found = Limits(*(v if isinstance(v, int) and v > 0 else None for v in parts))
        learned = window.learned
        if not (base_url and found.window):
            window.discover(*found)
        elif learned and learned < found.window:
            window.discover(None, found.output)
            remember_window(
                self.home, base_url, model_id, Limits(learned, found.output), found.window
            )
        elif found.window == claimed_window(self.home, base_url, model_id):
            window.discover(None, found.output)  # the claim that was wrong: the cache stands
        else:
            window.discover(*found)
            remember_window(self.home, base_url, model_id, found)

    def _shape_message(self, message: dict[str, Any], budget: int) -> dict[str, Any] | None:
        try:
            shaped = self.pm.hook.view_message(message=message, budget=budget, context=self.context)
        except BaseException as exc:  # noqa: BLE001 - a broken shaper must not stop the run
            if not is_plugin_failure(exc):
                raise
            if not getattr(self, "_shaper_failed", False):
                self._shaper_failed = True
                codes = implementation_codes(self.pm, "view_message")
                plugin = culprit_of(codes, exc.__traceback__)
                who = (
                    f"plugin {plugin!r} failed in view_message" if plugin else "view_message failed"
                )
                failure = f"{who}: {error_line(exc)}"
                self._notice(f"{failure}; messages are sent as they are")
                self.guard.count(failure)  # strict plugins: the run stops
            return None
        return shaped if isinstance(shaped, dict) else None

    def _side_request(self, messages: list[dict[str, Any]], purpose: str = "summary") -> str:
        """One internal model request without tools (``purpose`` names it); its usage counts."""
        cap = self.view.window.reserve if self.view is not None else None
        ask = partial(
            call_model, self.model, messages, [], _ignore, max_tokens=cap, purpose=purpose
        )
        reply = call_until_cancelled(self.model, self.context.cancelled, ask, threading.Event())
        if reply is None:
            raise ModelError("interrupted by the user")  # Ctrl-C: the caller falls back
        self.add_usage(reply.usage, turn=False)
        return str(reply.content or "")

    def _write_checkpoint(self) -> None:
        assert self.view is not None
        facts = recorded_facts(self.context.observations)
        try:
            self.view.sync(self.history)
            messages = [*self.view.messages(), {"role": "user", "content": CHECKPOINT_REQUEST}]
            notes = self._side_request(messages, "checkpoint").strip()
        except ModelError as exc:
            notes = f"(the model could not write its notes: {exc})"
        text = (notes + "\n\n" if notes else "") + facts
        self._emit(CheckpointEvent(text=text))

    def context_report(self) -> str:
        """``/context``: what the model view holds, tokens each."""
        self.prepare()
        assert self.view is not None
        self.view.sync(self.history)
        self.tool_specs()  # before the first request too: the tools it will send
        if self.view.bounded:  # a run counts bytes (an upper bound) until it nears its budget
            self.view.recount()
        parts = self.view.composition()
        shown = ", ".join(f"{name} ~{tokens}" for name, tokens in parts.items())
        return f"view ~{sum(parts.values())} of {self.view.budget} tokens: {shown}"

    def request_compaction(self, instructions: str | None = None) -> None:
        """Compact the view before the next request (``/compact [instructions]``)."""
        self.prepare()
        assert self.view is not None
        self.view.request_compaction(instructions)


def last_checkpoint(events: list[dict[str, Any]]) -> str | None:
    """The continuation checkpoint a run that stopped at its step limit left last, if any."""
    checkpoint, stopped = None, None
    for event in events:
        if event.get("type") == "checkpoint":
            checkpoint = str(event.get("text", ""))
        elif event.get("type") == "result":
            stopped = event.get("stop_reason")
            checkpoint = checkpoint if stopped == "max_steps" else None
    return checkpoint if stopped == "max_steps" else None


def last_view(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The session's last ``compaction`` event, for ``--resume``; ``None`` when there is none or
    the history restarts from a checkpoint or was rewound since (the indexes would not match)."""
    if last_checkpoint(events) is not None:
        return None
    for event in reversed(events):
        if event.get("type") == "rewind":  # the turns it cut off may hold what it refers to
            return None
        if event.get("type") == "compaction":
            view, length = event.get("view"), event.get("history_length")
            return event if isinstance(view, list) and isinstance(length, int) else None
    return None


def recorded_facts(observations: list[Observation]) -> str:
    """What the runtime itself knows: files read (with ranges), files changed, test status."""
    read: dict[str, list[str]] = {}
    changed = dict.fromkeys(path for obs in observations for path in obs.mutated)
    validations: list[str] = []
    last_mutation = max((o.step for o in observations if o.mutation), default=-1)
    for obs in observations:
        for resource in obs.resources:
            if resource.startswith("file:") and not obs.mutation:
                path, _, span = resource[5:].partition(":")
                ranges = read.setdefault(path, [])
                if span and span not in ranges:
                    ranges.append(span)
        if obs.validation is not None:
            when = "after" if obs.step >= last_mutation else "before"
            outcome = "passed" if obs.validation.passed else "failed"
            validations.append(
                f"- `{obs.validation.command}` ({obs.validation.kind}) {outcome}, step {obs.step}, "
                f"{when} the latest change"
            )
    files = [f"- {p}" + (f" (lines {', '.join(r)})" if r else "") for p, r in read.items()]
    lines = ["## Recorded by mycode", "Files read:", *(files or ["- none"]), "Files changed:"]
    lines += [f"- {p}" for p in changed] or ["- none"]
    lines.append("Test status:")
    lines += validations[-5:] or ["- no test, lint or build command was run"]
    return "\n".join(lines)


def _ignore(_text: str) -> None:
    """Streamed text of an internal request is not shown."""
