"""Running a child agent synchronously inside a tool call: a runner sharing its parent's
plugins, tools, grants and cancellation, its events stamped and sent into the parent's stream."""

from __future__ import annotations

import re
import secrets
import threading
from typing import Any

from mycode_core.agents import AgentOutcome, AgentRequest
from mycode_core.errors import SetupError
from mycode_core.events import AgentEvent
from mycode_core.runtime.loop import AgentRunner
from mycode_core.sessions import SessionStore, Transcript


class ChildStream:
    """A child's event stream: stamp, write the child's transcript, forward to the parent."""

    def __init__(self, forward: Any, agent_id: str, parent_call_id: str | None) -> None:
        self.forward = forward
        self.agent_id = agent_id
        self.parent_call_id = parent_call_id
        self.transcript: Transcript | None = None
        self.result: Any = None
        self.last_text = ""
        self.checkpoint = ""
        self._lock = threading.Lock()

    def emit(self, event: AgentEvent) -> None:
        """Record and forward one event (a grandchild's keeps its own stamp)."""
        if event.agent_id is None:
            event.agent_id = self.agent_id
            event.parent_call_id = self.parent_call_id
        with self._lock:
            if self.transcript is not None:
                self.transcript.write(event)
        if event.agent_id == self.agent_id:
            data: Any = event
            if event.type == "result":
                self.result = event
            elif event.type == "assistant" and data.content:
                self.last_text = str(data.content)
            elif event.type == "checkpoint":
                self.checkpoint = str(data.text)
            if event.type in ("system", "result"):  # the parent's own; the child's ending
                return  # reaches it as the tool's result
        self.forward(event)

    def end_of_turn(self) -> None:
        """Nothing to signal: the caller waits for the child synchronously."""

    def discard_pending(self) -> None:
        """Nothing is queued."""

    def close(self) -> None:
        """Close the child's transcript."""
        with self._lock:
            if self.transcript is not None:
                self.transcript.close()


class ChildRunner(AgentRunner):
    """A runner for one child agent of ``parent``."""

    def __init__(
        self, parent: AgentRunner, request: AgentRequest, agent_id: str, call_id: str | None
    ) -> None:
        update: dict[str, Any] = {"max_tokens": request.max_tokens}
        if request.max_steps is not None:
            update["max_steps"] = max(1, int(request.max_steps))
        if request.model:
            update["model"] = request.model
        settings = parent.settings.model_copy(update=update)
        super().__init__(
            pm=parent.pm,
            settings=settings,
            workspace=parent.workspace,
            home=parent.home,
            session_id=parent.session_id,
            interactive=parent.context.interactive,
            ask=parent.context.ask,
            spawn_child=parent.spawn_child,
            expand_prompt=parent.expand_prompt,
        )
        self.parent = parent
        self.request = request
        context, above = self.context, parent.context
        context.cancelled = above.cancelled  # Ctrl-C of the turn stops the children too
        context.session_grants = above.session_grants
        context.session_store = above.session_store  # the session's state, one for the tree
        context.agent_id = agent_id
        context.parent_call_id = call_id
        context.agent_name = request.name
        context.depth = above.depth + 1
        for roots in ("readable_roots", "writable_roots", "protected_roots"):  # plugins' folders
            setattr(context, roots, list(getattr(above, roots) or ()))
        self.events = ChildStream(parent._emit, agent_id, call_id)  # type: ignore[assignment]
        self.guard.upstream = parent.guard  # strict plugins: a child's failure stops the run

    def _change_detector(self) -> Any:
        return self.parent.changes  # one watcher per workspace, shared along the agent tree

    def close(self, reason: str = "exit") -> None:
        """Close what is the child's own (not the parent's change detector)."""
        self.changes = None
        super().close(reason)

    def _open_transcript(self) -> None:
        folder = SessionStore(self.home).root / f"{self.session_id}.agents"  # next to its session's
        self.events.transcript = Transcript(folder / f"{self.context.agent_id}.jsonl")

    def _collect_tools(self) -> None:
        allowed = None if self.request.tools is None else set(self.request.tools)
        for tool in self.parent.context.tools.all():
            if allowed is None or tool.name in allowed:
                self.context.tools.add(tool, replace=True)

    def _make_model(self) -> Any:
        if not self.request.model:
            fork = getattr(self.parent.model, "fork", None)
            if callable(fork):
                return fork()
        return super()._make_model()

    def _system_prompt(self) -> str:
        base = super()._system_prompt()
        extra = self.request.instructions.strip()
        return f"{base}\n\n{extra}" if extra else base


def run_child(parent: AgentRunner, request: AgentRequest) -> AgentOutcome:
    """Run ``request`` as a child of ``parent`` to its end; never raises for a failing child."""
    call = parent.context.current_call
    call_id = call.id if call is not None else None
    slug = re.sub(r"[^a-zA-Z0-9_-]+", "-", request.name).strip("-")[:40] or "agent"
    agent_id = f"{slug}-{secrets.token_hex(3)}"
    budget, wanted = parent.settings.max_tokens, request.max_tokens
    if budget:  # never more than what remains of the parent's budget
        with parent._lock:
            used = parent.usage.get("input_tokens", 0) + parent.usage.get("output_tokens", 0)
        remaining = max(1, int(budget) - used)
        request.max_tokens = remaining if wanted is None else min(int(wanted), remaining)
    if call_id is not None:
        parent.spawned_calls.add(call_id)
    child = ChildRunner(parent, request, agent_id, call_id)
    stream: ChildStream = child.events  # type: ignore[assignment]
    setup_error = None
    try:
        try:
            child.prepare()
        except SetupError as exc:
            setup_error = str(exc)
        if setup_error is None:
            child._worker(request.task)
    finally:
        child.close()
    _roll_up(parent, child, agent_id)
    observed = child.context.observations
    changed = list(dict.fromkeys(path for o in observed if o.mutation for path in o.mutated))
    validations = [o.validation.model_dump() for o in observed if o.validation is not None]
    result = stream.result
    assert stream.transcript is not None  # opened first thing by ``prepare``
    transcript = str(stream.transcript.path)
    if setup_error is not None or result is None:
        return AgentOutcome(
            agent_id=agent_id,
            stop_reason="model_error",
            verdict="none",
            steps=0,
            final_text="",
            usage=dict(child.usage),
            error=setup_error or "the child agent ended without a result",
            transcript=transcript,
        )
    text = result.final_text
    if result.stop_reason != "completed":
        text = "\n\n".join(part for part in (stream.last_text, stream.checkpoint) if part)
    return AgentOutcome(
        agent_id=agent_id,
        stop_reason=result.stop_reason,
        verdict=result.verdict,
        steps=result.steps,
        final_text=text,
        usage=dict(result.usage),
        error=result.error,
        files_changed=changed,
        validations=validations,
        transcript=transcript,
    )


def _roll_up(parent: AgentRunner, child: ChildRunner, agent_id: str) -> None:
    """Add the child's tokens, edits and test runs to the parent's (its gate judges them)."""
    own = child._own_usage()
    with parent._lock:
        for key, value in child.usage.items():
            parent.usage[key] = parent.usage.get(key, 0) + value
        parent.children_usage[agent_id] = own
        parent.children_usage.update(child.children_usage)
    facts = [
        obs.model_copy(update={"step": parent._step})
        for obs in child.context.observations
        if obs.mutation or obs.validation is not None
    ]
    if facts:
        with parent.context.lock:
            parent.context.observations.extend(facts)
