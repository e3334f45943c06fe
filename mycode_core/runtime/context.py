"""The model view: what the model sees each step, built from history within a token budget.
Kept incrementally (each message shaped and counted once); between compactions each request
extends the previous one exactly (prompt caches). History itself is never changed."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from mycode_core import tokens as token_counts
from mycode_core.events import CompactionEvent
from mycode_core.records import ContextSection
from mycode_core.runtime.history import History
from mycode_core.runtime.window import ContextWindow
from mycode_core.tokens import Calibration, count_message, count_text

Compactor = Callable[..., Any]
"""``compactor(messages, budget, reason, instructions, tokens)`` → messages, an object with
``messages`` and ``summary``, or ``None`` to decline."""
Shaper = Callable[[dict[str, Any], int], dict[str, Any] | None]
"""``shaper(message, budget)`` → the message's form in the view, or ``None`` for as is."""

SUMMARY_MARK = "[mycode: context summary]"
MASK_MARK = "[masked result of "
"""How the context engine's summary message and masked results start (for ``/context``)."""

MIN_ROOM = 64  # least tokens a compaction is given; tool schemas leaving less end the run
ViewRef = int | dict[str, Any]  # a view message in the transcript: a history index or itself


class ContextOverflow(Exception):
    """The view cannot be made to fit the window; the message says what is too big."""


def render_system_prompt(sections: list[ContextSection]) -> str:
    """Join ``build_context`` sections into one system prompt, lowest priority first."""
    parts = []
    for section in sorted(sections, key=lambda section: section.priority):
        if text := section.text.strip():
            parts.append(f"# {section.title}\n\n{text}" if section.title else text)
    return "\n\n".join(parts)


class ModelView:
    """Builds the message list for each model call."""

    def __init__(
        self,
        system_prompt: str,
        window: ContextWindow | int,
        compactor: Compactor,
        *,
        shaper: Shaper | None = None,
        threshold: float = 1.0,
        recheck: int = 0,
    ) -> None:
        self.system_message: dict[str, Any] = {"role": "system", "content": system_prompt}
        self.bounded = not token_counts.exact()  # some count is a byte bound (see recount)
        self.system_tokens = count_text(system_prompt, bound=True) + 4
        self._tools_text = ""
        self.window = window if isinstance(window, ContextWindow) else ContextWindow(budget=window)
        self.calibration = Calibration()
        self.tool_tokens = 0
        self.threshold = min(1.0, max(0.1, float(threshold)))
        self.recheck = max(0, int(recheck))  # re-offer after this many tool results; 0: never
        self._compactor, self._shaper = compactor, shaper
        self._prefix: list[dict[str, Any]] = []
        self._tail: list[dict[str, Any]] = []
        self._prefix_tokens = self._tail_tokens = self._synced = self._fresh = 0
        self._ids: dict[int, int] = {}
        self._manual: str | None = None
        self._declined_below = self.compactions = 0

    @property
    def budget(self) -> int:
        """Tokens the view may use (window minus output reserve)."""
        return self.window.budget_with(self.calibration.scale(self.tool_tokens))

    def reply_cap(self) -> int:
        """The ``max_tokens`` of the next request (:meth:`ContextWindow.reply_cap`)."""
        return self.window.reply_cap(self.estimate())

    def raw_tokens(self) -> int:
        """Our own count of the current view (system, messages, tool schemas); O(1)."""
        return self.system_tokens + self._prefix_tokens + self._tail_tokens + self.tool_tokens

    def estimate(self) -> int:
        """The view's size as the provider would count it (calibrated)."""
        return self.calibration.scale(self.raw_tokens())

    def trigger(self) -> int:
        """The estimate past which the view is compacted: ``threshold`` of the messages' room."""
        tools = self.calibration.scale(self.tool_tokens)
        return tools + int(max(0, self.budget - tools) * self.threshold)

    def set_tools(self, tools: list[dict[str, Any]]) -> None:
        """Count the tool schemas sent with each request (call when the list changes)."""
        self.bounded = self.bounded or not token_counts.exact()
        self._tools_text = json.dumps(tools, ensure_ascii=False) if tools else ""
        self.tool_tokens = count_text(self._tools_text, bound=True) if tools else 0

    def recount(self) -> None:
        """Count the whole view again with the tokenizer (loaded now if need be)."""
        token_counts.load_now()
        self.system_tokens = count_message(self.system_message)
        self.tool_tokens = count_text(self._tools_text) if self._tools_text else 0
        self._prefix_tokens = sum(count_message(m) for m in self._prefix)
        self._tail_tokens = sum(count_message(m) for m in self._tail)
        self.bounded = False

    def _shape(self, message: dict[str, Any]) -> dict[str, Any]:
        if self._shaper is None:
            return message
        shaped = self._shaper(message, self.budget)
        return message if shaped is None else shaped

    def sync(self, history: History) -> None:
        """Append the view form of history messages not seen yet (each counted once)."""
        for index in range(self._synced, len(history)):
            entry = history[index]
            shaped = self._shape(entry.message)
            if not entry.exact or not token_counts.exact():
                self.bounded = True
            tokens = entry.tokens if shaped is entry.message else count_message(shaped, bound=True)
            self._tail.append(shaped)
            self._tail_tokens += tokens
            self._ids[id(shaped)] = index
            self._fresh += entry.message.get("role") == "tool"
        self._synced = len(history)

    def messages(self) -> list[dict[str, Any]]:
        """The current view: system message, compacted prefix, then the live tail."""
        return [self.system_message, *self._prefix, *self._tail]

    def composition(self) -> dict[str, int]:
        """What the view holds, in tokens (``/context``): ``system``, ``tools``, ``summary``,
        ``recent`` (messages as they are) and ``masked`` (results shown as placeholders)."""
        parts = {"system": self.system_tokens, "tools": self.tool_tokens}
        parts.update(summary=0, recent=0, masked=0)
        for message in [*self._prefix, *self._tail]:
            content, role = message.get("content"), message.get("role")
            text = content if isinstance(content, str) else ""
            kind = "summary" if role == "user" and text.startswith(SUMMARY_MARK) else "recent"
            kind = "masked" if role == "tool" and text.startswith(MASK_MARK) else kind
            parts[kind] += count_message(message)
        return {key: self.calibration.scale(value) if value else 0 for key, value in parts.items()}

    def request_compaction(self, instructions: str | None = None) -> None:
        """Compact before the next request (``/compact``), with optional instructions."""
        self._manual = (instructions or "").strip()

    def set_system_prompt(self, system_prompt: str) -> None:
        """Replace the system prompt (a no-op when the text is unchanged)."""
        if system_prompt != self.system_message["content"]:
            self.system_message = {"role": "system", "content": system_prompt}
            self.bounded = self.bounded or not token_counts.exact()
            self.system_tokens = count_text(system_prompt, bound=True) + 4

    def build(
        self, history: History, *, force_compact: bool = False
    ) -> tuple[list[dict[str, Any]], CompactionEvent | None]:
        """``(messages, event)``, compacted first (its ``compaction`` event, ``steps_since_last``
        left to the loop) when forced, asked by ``/compact``, or past the trigger or ``recheck``;
        raises :class:`ContextOverflow`."""
        self.sync(history)
        estimate = self.estimate()
        near = force_compact or estimate > self.budget * self.threshold / 2
        if self.bounded and (near or token_counts.exact()):
            self.recount()  # the tokenizer is here, or the bound nears the budget: count exactly
            estimate = self.estimate()
        instructions: str | None = None
        if self._manual is not None:
            reason, instructions, self._manual = "manual", self._manual or None, None
        elif force_compact:
            reason = "reactive"
        elif (
            estimate > self.trigger()
            and (estimate > self.budget or estimate >= self._declined_below)
        ) or 0 < self.recheck <= self._fresh:
            reason = "proactive"
        else:
            return self.messages(), None
        return self._compact(history, estimate, reason, instructions)

    def _compact(
        self, history: History, before: int, reason: str, instructions: str | None
    ) -> tuple[list[dict[str, Any]], CompactionEvent | None]:
        current, self._fresh = self.messages(), 0
        # the budget the messages must fit, in our own token units (tool schemas set aside)
        room = int(self.budget / self.calibration.ratio) - self.tool_tokens
        if self.tool_tokens and room < MIN_ROOM:
            if self.bounded:  # byte bounds so far: count exactly before giving up
                self.recount()
                room = int(self.budget / self.calibration.ratio) - self.tool_tokens
            if room < MIN_ROOM:  # the schemas alone fill the budget: no compaction can help
                window, scale = self.window, self.calibration.scale
                raise ContextOverflow(
                    f"the tool schemas (~{scale(self.tool_tokens)} tokens) and the system prompt "
                    f"(~{scale(self.system_tokens)}), sent with every request, alone take more "
                    f"than the context budget of {self.budget} tokens (window {window.limit}, "
                    f"{window.source}): use a larger context window (llama-server -c N, shared "
                    "among its -np slots) or offer fewer tools (MYCODE_DISABLE_PLUGINS=NAME,... "
                    "leaves out a plugin and its tools)"
                )
        target = max(MIN_ROOM, room)
        tokens = self.raw_tokens() - self.tool_tokens  # what the hooks would count
        result = self._compactor(current, target, reason, instructions, tokens)
        if result is None:
            if before > self.budget and reason != "reactive":
                raise ContextOverflow(self._overflow_text(current, before, "compaction declined"))
            if before > self.trigger():  # declined: try again once the view has grown noticeably
                self._declined_below = before + max(64, self.budget // 20)
            return current, None
        messages: list[dict[str, Any]] = list(getattr(result, "messages", None) or result)
        summary = getattr(result, "summary", None)
        stage = getattr(result, "stage", None)
        if not messages or messages[0].get("role") != "system":
            messages = [self.system_message, *messages]
        self.system_message = messages[0]
        self.system_tokens = count_message(messages[0])
        ids = {id(m): self._ids[id(m)] for m in messages[1:] if id(m) in self._ids}
        refs: list[ViewRef] = [ids.get(id(m), m) for m in messages[1:]]
        self._set_prefix(messages[1:], ids)
        self._declined_below = 0
        after = self.estimate()
        if after > self.budget:
            raise ContextOverflow(self._overflow_text(messages, after, "after compaction"))
        self.compactions += 1
        return messages, CompactionEvent(
            reason=reason,
            before_tokens=before,
            after_tokens=after,
            before_messages=len(current),
            after_messages=len(messages),
            summary=summary,
            view=refs,
            history_length=len(history),
            stage=str(stage) if stage else ("summary" if summary else "truncate"),
            count=self.compactions,
            context_window=self.window.limit,
            window_source=self.window.source,
        )

    def _overflow_text(self, messages: list[dict[str, Any]], tokens: int, when: str) -> str:
        window = self.window
        parts = [f"system prompt ~{self.calibration.scale(self.system_tokens)} tokens"]
        if self.tool_tokens:
            parts.append(f"tool schemas ~{self.calibration.scale(self.tool_tokens)} tokens")
        if rest := messages[1:]:
            biggest = max(rest, key=count_message)
            parts.append(
                f"largest message ({biggest.get('role')}) "
                f"~{self.calibration.scale(count_message(biggest))} tokens"
            )
        return (
            f"the context does not fit ({when}): ~{tokens} tokens needed, the budget is "
            f"{self.budget} (window {window.limit} from {window.source}, minus "
            f"{window.reserve} for the reply); {', '.join(parts)}"
        )

    def restore(self, refs: list[ViewRef], history: History, history_length: int) -> bool:
        """Rebuild a compacted view recorded in a transcript; ``False`` if it does not match."""
        if history_length > len(history):
            return False
        prefix: list[dict[str, Any]] = []
        ids: dict[int, int] = {}
        for ref in refs:
            if isinstance(ref, int):
                if not 0 <= ref < history_length:
                    return False
                message = self._shape(history[ref].message)
                ids[id(message)] = ref
                prefix.append(message)
            elif isinstance(ref, dict):
                prefix.append(ref)
            else:
                return False
        self._set_prefix(prefix, ids)
        self._synced = history_length
        self.sync(history)
        return True

    def _set_prefix(self, prefix: list[dict[str, Any]], ids: dict[int, int]) -> None:
        """``prefix`` (``ids``: message id → history index) is fixed; the tail starts empty."""
        self._prefix = prefix
        self._prefix_tokens = sum(count_message(m) for m in prefix)
        self._tail, self._tail_tokens, self._ids = [], 0, ids
