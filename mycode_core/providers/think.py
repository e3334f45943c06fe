"""A leading ``<think>…</think>`` block in ``content`` (llama-server ``--reasoning-format none``
and the like) is the model's thinking, not its answer: split it off as it streams (a tag split
across pieces is held back; an unterminated block is thinking to the end)."""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"
MAX_LEAD = 256  # whitespace waited through before <think>: past it, the content is answer text


class ThinkSplitter:
    """Splits streamed ``content`` into thinking and answer text, each piece in O(piece)."""

    def __init__(self) -> None:
        self.state = "lead"  # then "think", "gap" (blank lines after it, dropped), "text"
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
        """What was held back when the content ends, as thinking or text."""
        held, self.held = self.held, ""
        return (held, "") if self.state == "think" else ("", held)
