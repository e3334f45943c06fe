"""The model's context window (learned from an error, configured, discovered, or default) and
the view's budget: the window minus the output reserve, halved once on an unexplained reject."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import NamedTuple

MIN_BUDGET = 1024
MAX_OUTPUT_DEFAULT = 16_384

_NUMBER = r"(\d[\d,_]*)"
# Phrasings seen in the wild: the limit here, the prompt size in _REQUESTED_PATTERNS.
_LIMIT_PATTERNS = [
    rf"maximum context length is {_NUMBER}",  # OpenAI, vLLM, OpenRouter, Groq
    rf"maximum context length of {_NUMBER}",
    rf"available context size \({_NUMBER}",  # llama.cpp / Ollama
    rf"context size \({_NUMBER} tokens\)",
    rf"context window (?:size )?(?:of|is) {_NUMBER}",
    rf"context length of (?:only )?{_NUMBER}",  # LM Studio
    rf"tokens > {_NUMBER} maximum",  # "prompt is too long: 210000 tokens > 200000 maximum"
    rf"maximum model length of {_NUMBER}",  # vLLM decoder prompt
    rf"{_NUMBER} maximum context length",  # Mistral
    rf"must be <= {_NUMBER}",  # TGI
    rf"maximum number of tokens allowed \({_NUMBER}\)",  # Gemini
    rf"exceeds (?:the )?(?:context )?limit of {_NUMBER}",
    rf"\"n_ctx\"\s*:\s*{_NUMBER}",  # llama.cpp's error object
    rf"limit={_NUMBER}",  # Ollama's log form "prompt=2782 limit=2048"
]
_REQUESTED_PATTERNS = [
    rf"\({_NUMBER} in the messages",  # OpenAI / vLLM
    rf"your messages resulted in (?:over )?{_NUMBER}",
    rf"request \({_NUMBER} tokens\)",  # llama.cpp
    rf"input \({_NUMBER} tokens\) is larger",  # llama.cpp, a prompt it cannot split
    rf"{_NUMBER} of text input",  # OpenRouter
    rf"has {_NUMBER} input tokens",  # newer vLLM
    rf"prompt is too long: {_NUMBER}",
    rf"prompt \(length {_NUMBER}\)",
    rf"prompt contains {_NUMBER} tokens",
    rf"given: {_NUMBER} `inputs` tokens",
    rf"input token count \({_NUMBER}\)",
    rf"\"n_prompt_tokens\"\s*:\s*{_NUMBER}",
    rf"prompt={_NUMBER}",
]


class ContextErrorInfo(NamedTuple):
    """The limit and the prompt size a context-length error names, if it does."""

    limit: int | None
    requested: int | None


def _first(patterns: list[str], text: str) -> int | None:
    for pattern in patterns:
        match = re.search(pattern, text, re.IGNORECASE)
        if match:
            try:
                value = int(match.group(1).replace(",", "").replace("_", ""))
            except ValueError:
                continue
            if value > 0:
                return value
    return None


def parse_context_error(text: str) -> ContextErrorInfo:
    """Read the window limit (and the prompt's size) from a context-length error message."""
    return ContextErrorInfo(_first(_LIMIT_PATTERNS, text), _first(_REQUESTED_PATTERNS, text))


class ContextWindow:
    """The model's window and the view's budget; thread-safe (discovery runs in background)."""

    def __init__(
        self,
        *,
        default: int = 128_000,
        configured: int | None = None,
        reserve: int | None = None,
        budget: int | None = None,
    ) -> None:
        self.default = int(default)
        self.configured = int(configured) if configured else None
        self.discovered: int | None = None
        self.server_output: int | None = None  # the reply cap the server reports, if it does
        self.learned: int | None = None
        self.halved = False  # the server rejected a request the window seemed to hold
        self._reserve = reserve
        self._fixed_budget = budget
        self._lock = threading.Lock()
        self.requested = threading.Event()  # the first reply arrived: discovery may ask now
        self.on_learn: Callable[[int], None] | None = None  # told each limit learned

    @property
    def limit(self) -> int:
        """The window in tokens, from the strongest source known."""
        return self.learned or self.configured or self.discovered or self.default

    @property
    def source(self) -> str:
        """Where :attr:`limit` comes from: ``learned``, ``config``, ``server`` or ``default``."""
        known = {"learned": self.learned, "config": self.configured, "server": self.discovered}
        return next((name for name, value in known.items() if value), "default")

    @property
    def reserve(self) -> int:
        """Tokens kept for the reply (each request's ``max_tokens``): ``max_output_tokens`` or a
        quarter of the window up to :data:`MAX_OUTPUT_DEFAULT`; at most half the window and
        the server's cap."""
        cap = int(self._reserve) if self._reserve else min(MAX_OUTPUT_DEFAULT, self.limit // 4)
        return max(1, min(cap, self.limit // 2, self.server_output or cap))

    @property
    def floor(self) -> int:
        """The least room a reply keeps in a window short of room: half the reserve."""
        return max(1, self.reserve // 2)

    def reply_cap(self, view: int) -> int:
        """The ``max_tokens`` for a ``view``-token view: at most the reserve, at least floor."""
        return max(self.floor, min(self.reserve, self.limit - view))

    def budget_with(self, tools: int) -> int:
        """:attr:`budget` for a view whose tool schemas take ``tools`` tokens; when they crowd
        the messages, the reply reserve gives way down to :attr:`floor`."""
        budget = self.budget
        if self._fixed_budget is not None:
            return budget
        room = self.floor if self.halved else self.reserve  # halved: never below the schemas
        return max(budget, min(self.limit - self.floor, tools + room))

    @property
    def budget(self) -> int:
        """Tokens the view (messages and tool schemas) may use."""
        value = self._fixed_budget if self._fixed_budget is not None else self._unhalved()
        return max(MIN_BUDGET // 2, value // 2) if self.halved else value

    def _unhalved(self) -> int:
        """The window minus the reserve; at least MIN_BUDGET unless the reply gets under floor."""
        return max(min(MIN_BUDGET, self.limit - self.floor), self.limit - self.reserve)

    def learn(self, limit: int) -> bool:
        """Record a limit the server stated; ``True`` when it lowers the window."""
        with self._lock:
            if limit <= 0 or limit >= self.limit:
                return False
            self.learned = limit
            if self._fixed_budget is not None:
                self._fixed_budget = min(self._fixed_budget, self._unhalved())
        if self.on_learn is not None:
            self.on_learn(limit)
        return True

    def discover(self, limit: int | None, output: int | None = None) -> None:
        """Record the window (ignored when config says) and reply cap the server reports."""
        with self._lock:
            self.discovered = int(limit) if limit and limit > 0 else self.discovered
            self.server_output = int(output) if output and output > 0 else self.server_output
