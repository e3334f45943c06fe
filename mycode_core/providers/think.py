"""A leading ``<think>…</think>`` block in ``content`` is the model's thinking, not its answer.

llama-server started with ``--reasoning-format none`` (and some vLLM or Ollama set-ups) leave a
reasoning model's thoughts inline at the start of ``content`` instead of sending them apart as
``reasoning_content``. :class:`ThinkSplitter` routes them where ``reasoning_content`` goes, piece
by piece as they stream: a tag split across chunks is held back (never more than a tag's
length), an unterminated block is thinking to the end, and a tag later in the answer is text.
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"
MAX_LEAD = 256
"""Whitespace waited through before ``<think>``: past it, the content is answer text."""


class ThinkSplitter:
    """Splits streamed ``content`` into thinking and answer text; each piece costs O(piece)."""

    def __init__(self) -> None:
        # lead: nothing decided yet; think: inside the block; gap: the blank lines after it
        # (dropped); text: the answer, passed through
        self.state = "lead"
        self.held = ""

    def feed(self, piece: str) -> tuple[str, str]:
        """The thinking and the answer text that ``piece`` completes (either may be empty)."""
        if self.state == "text":
            return "", piece
        data, self.held = self.held + piece, ""
        thought = ""
        if self.state == "lead":
            head = data.lstrip()
            if head.startswith(OPEN):
                self.state, data = "think", head[len(OPEN) :]
            elif OPEN.startswith(head) and len(data) <= MAX_LEAD:
                self.held = data
                return "", ""
            else:
                self.state = "text"
                return "", data
        if self.state == "think":
            end = data.find(CLOSE)
            if end < 0:
                keep = next(
                    (k for k in range(len(CLOSE) - 1, 0, -1) if data.endswith(CLOSE[:k])), 0
                )
                self.held = data[len(data) - keep :]
                return data[: len(data) - keep], ""
            thought, data = data[:end], data[end + len(CLOSE) :]
            self.state = "gap"
        answer = data.lstrip()
        if answer:
            self.state = "text"
        return thought, answer

    def finish(self) -> tuple[str, str]:
        """What was held back when the content ends: text that only looked like ``<think>``,
        or the start of a ``</think>`` that never came (still thinking)."""
        held, self.held = self.held, ""
        return (held, "") if self.state == "think" else ("", held)
