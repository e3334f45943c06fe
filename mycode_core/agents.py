"""Child agents: what a plugin asks ``context.spawn_agent`` for (it never raises for a failing
child), and what it gets back. A child runs in the calling thread with its own history, view
and budget; events carry ``agent_id``/``parent_call_id``; usage and facts add to the parent's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentRequest:
    """What to run in a child agent: ``task`` is its first user message."""

    task: str
    name: str = "agent"  # a short label (the profile name); the ``agent_id`` is built from it
    instructions: str = ""  # put before the system prompt the child builds
    tools: list[str] | None = None  # exact allowlist of the parent's tool names (None: all)
    model: str | None = None  # ``None``: the parent's model
    max_steps: int | None = None  # ``None``: the parent's setting
    max_tokens: int | None = None  # always clamped to what remains of the parent's budget
    description: str = ""  # a few words for people (shown in the live view)


@dataclass
class AgentOutcome:
    """How a child agent ended: ``final_text`` is its answer, or what an unfinished child found
    so far (its last words and step-limit checkpoint); ``files_changed`` and ``validations``
    (``{"kind", "command", "passed"}``) come from its observations."""

    agent_id: str
    stop_reason: str
    verdict: str
    steps: int
    final_text: str
    usage: dict[str, int]
    error: str | None = None
    files_changed: list[str] = field(default_factory=list)
    validations: list[dict[str, Any]] = field(default_factory=list)
    transcript: str | None = None

    @property
    def ok(self) -> bool:
        """Whether the child completed its task."""
        return self.stop_reason == "completed"
