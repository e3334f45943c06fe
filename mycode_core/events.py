"""The event stream: one typed model per event of SPEC §4, consumed by the CLI, the JSON
output, the transcript and plugins (``on_event``)."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mycode_core.providers.wire import dumps

SCHEMA_VERSION = 1

StopReason = Literal[
    "completed",
    "max_steps",
    "token_budget",
    "model_error",
    "context_overflow",
    "gate_exhausted",
    "stagnation",
    "interrupted",
]
VerdictName = Literal["pass", "fail", "unverified", "none"]


def without_lone_surrogates(text: str) -> str:
    """``text`` with unpaired UTF-16 surrogates replaced by U+FFFD (they cannot be encoded)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


class AgentEvent(BaseModel):
    """Base of every event: a ``type`` tag and a timestamp; a child agent's events also carry
    ``agent_id`` and ``parent_call_id`` (the ``delegate_task`` call that started it)."""

    model_config = ConfigDict(defer_build=True)

    type: str
    ts: float = Field(default_factory=time.time)
    agent_id: str | None = None
    parent_call_id: str | None = None

    def to_json(self) -> str:
        """One line of stream-json."""
        try:
            return self.model_dump_json(exclude_none=True)
        except ValueError:  # unpaired surrogates (model text), values JSON does not know
            return dumps(self.model_dump(mode="python", exclude_none=True)).decode("utf-8")


class SystemEvent(AgentEvent):
    type: Literal["system"] = "system"
    schema_version: int = SCHEMA_VERSION
    session_id: str
    model: str
    cwd: str
    tools: list[str]
    plugins: list[str]
    permission_mode: str = "default"
    resumed_from: str | None = None
    plugin_errors: list[dict[str, Any]] = Field(default_factory=list)  # plugins failing to load


class UserEvent(AgentEvent):
    """A user turn (how a transcript rebuilds history); ``images``: its images' saved copies."""

    type: Literal["user"] = "user"
    content: str
    images: list[dict[str, str]] | None = None


class StepStartEvent(AgentEvent):
    type: Literal["step_start"] = "step_start"
    step: int


class TextDeltaEvent(AgentEvent):
    type: Literal["text_delta"] = "text_delta"
    text: str


class ReasoningDeltaEvent(AgentEvent):
    """A piece of the model's thinking, when the server streams it apart from the answer."""

    type: Literal["reasoning_delta"] = "reasoning_delta"
    text: str


class AssistantEvent(AgentEvent):
    """A full model turn."""

    type: Literal["assistant"] = "assistant"
    content: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, int] | None = None


class ToolCallEvent(AgentEvent):
    type: Literal["tool_call"] = "tool_call"
    id: str
    name: str
    arguments: Any


class PermissionEvent(AgentEvent):
    """The permission decision taken for a tool call, naming the rule and layer; ``tool``
    (SPEC §4) and ``name`` both hold the tool's name."""

    type: Literal["permission"] = "permission"
    id: str
    tool: str
    name: str
    decision: str
    reason: str = ""
    rule: str | None = None
    layer: str | None = None


class ToolResultEvent(AgentEvent):
    type: Literal["tool_result"] = "tool_result"
    id: str
    name: str
    is_error: bool
    content: str | list[dict[str, Any]]
    metadata: dict[str, Any] = Field(default_factory=dict)
    duration_ms: int | None = None
    original: dict[str, Any] | None = None  # the tool's own content/is_error, if transformed


class ObservationEvent(AgentEvent):
    type: Literal["observation"] = "observation"
    observation: dict[str, Any]


class GuidanceEvent(AgentEvent):
    """Runtime feedback injected for the model."""

    type: Literal["guidance"] = "guidance"
    source: str
    message: str
    pattern: str | None = None


class RetryEvent(AgentEvent):
    type: Literal["retry"] = "retry"
    attempt: int
    reason: str
    delay: float
    message: str = ""


class CompactionEvent(AgentEvent):
    """The view was compacted; emitted before the first request that uses the new view.

    Tokens are the engine's estimates; ``count`` is the run's n-th compaction. ``view`` records
    the new view for ``--resume`` (history indexes, or messages not in history such as the
    summary); ``history_length`` is how much history it stands for."""

    type: Literal["compaction"] = "compaction"
    before_messages: int
    after_messages: int
    reason: str = ""
    before_tokens: int = 0
    after_tokens: int = 0
    summary: str | None = None
    stage: str | None = None
    count: int = 0
    steps_since_last: int = 0
    context_window: int | None = None
    window_source: str | None = None
    view: list[Any] | None = None
    history_length: int | None = None


class ProgressEvent(AgentEvent):
    type: Literal["progress"] = "progress"
    source: str
    message: str = ""
    progress: float | None = None
    total: float | None = None


class NoticeEvent(AgentEvent):
    """Something the user should know that is not part of the conversation (a warning)."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "info"
    message: str
    source: str | None = None
    plugin: str | None = None  # a failing plugin's notice names it and the ``hook``
    hook: str | None = None


class CheckpointEvent(AgentEvent):
    type: Literal["checkpoint"] = "checkpoint"
    text: str


class ResultEvent(AgentEvent):
    type: Literal["result"] = "result"
    session_id: str
    stop_reason: StopReason
    verdict: VerdictName
    steps: int
    final_text: str
    usage: dict[str, int]
    duration_ms: int = 0
    error: str | None = None
    is_error: bool = False
    usage_by_agent: dict[str, dict[str, int]] | None = None  # by ``main``/agent_id, if children ran
    cost_usd: float | None = None  # ``None`` when the model's price is unknown
    context: dict[str, Any] | None = None  # {window, used, percent}: used = last prompt tokens
    structured_output: Any = None  # ``--json-schema``: the final answer's parsed JSON

    def to_json(self) -> str:
        """One line of stream-json; ``cost_usd`` is kept as ``null`` when unknown (SPEC §4)."""
        text = super().to_json()
        return text[:-1] + ',"cost_usd":null}' if self.cost_usd is None else text
