"""Child agents (issue 11): what a plugin asks for and what it gets back.

A tool handler starts a child agent with ``context.spawn_agent(AgentRequest(...))``. The child
runs in-process, synchronously in the calling thread, through the same runtime as the parent:
the same plugin manager (every hook and policy sees its calls), the same permission settings
and session grants, the same cancellation flag (Ctrl-C stops it), but its own history, model
view, observations, step cap and token budget. Its events reach the parent's event stream (and
so the transcript and every ``on_event`` observer) stamped with ``agent_id`` and
``parent_call_id``; its own transcript is kept under ``MYCODE_HOME/sessions/<session>.agents/``.

When it ends, the core adds its token usage to the parent's (the parent's ``result`` then
carries ``usage_by_agent``) and copies the child's file changes and validation runs into the
parent's ``context.observations``, so the parent's completion gate judges a child's edit like
one of its own. ``spawn_agent`` never raises for a failing child: the outcome says what
happened (``stop_reason``, ``error``), with what the child found so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class AgentRequest:
    """What to run in a child agent.

    :param task: the child's first user message.
    :param name: a short label (the profile name); the ``agent_id`` is built from it.
    :param instructions: put before the system prompt the child builds from ``build_context``.
    :param tools: exact allowlist of tool names from the parent's tools (``None``: all of them).
    :param model: a model id for the child; ``None`` uses the parent's model.
    :param max_steps: the child's step cap (``None``: the parent's setting).
    :param max_tokens: the child's token budget; always clamped to what remains of the
        parent's budget.
    :param description: a few words for people (shown in the live view).
    """

    task: str
    name: str = "agent"
    instructions: str = ""
    tools: list[str] | None = None
    model: str | None = None
    max_steps: int | None = None
    max_tokens: int | None = None
    description: str = ""


@dataclass
class AgentOutcome:
    """How a child agent ended.

    ``final_text`` is its final answer, or for a child that did not complete, what it had
    found so far (its last words and its step-limit checkpoint). ``files_changed`` and
    ``validations`` (``{"kind", "command", "passed"}``) come from its observations.
    """

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
