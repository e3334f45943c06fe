"""The loop's state: a frozen value advanced only through :meth:`LoopState.next`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any


class Phase(StrEnum):
    """Where the loop is."""

    STARTING = "starting"
    CALLING_MODEL = "calling_model"
    ACTING = "acting"
    VERIFYING = "verifying"
    DONE = "done"


class TransitionReason(StrEnum):
    """Why the state changed; every transition records one."""

    START = "start"
    STEP_BEGIN = "step_begin"
    MODEL_REPLIED_TOOLS = "model_replied_tools"
    MODEL_REPLIED_TEXT = "model_replied_text"
    TOOLS_DONE = "tools_done"
    RETRY = "retry"
    COMPACTED = "compacted"
    EMPTY_REPLY_NUDGE = "empty_reply_nudge"
    LENGTH_CONTINUE = "length_continue"
    GATE_BLOCKED = "gate_blocked"
    STAGNATION_GUIDANCE = "stagnation_guidance"
    FINISHED = "finished"


@dataclass(frozen=True)
class Transition:
    """One recorded transition."""

    reason: TransitionReason
    phase: Phase
    step: int
    detail: str = ""


@dataclass(frozen=True)
class LoopState:
    """Counters of a run. Never mutated: ``next`` returns a new state."""

    phase: Phase = Phase.STARTING
    step: int = 0
    empty_nudges: int = 0
    length_continues: int = 0
    gate_blocks: int = 0
    stop_reason: str | None = None
    verdict: str = "none"
    detail: str = ""
    reason: TransitionReason = TransitionReason.START
    log: list[Transition] = field(default_factory=list, compare=False, repr=False)

    def next(self, reason: TransitionReason, note: str = "", **changes: Any) -> LoopState:
        """A new state with ``changes``; the transition is appended to the shared log."""
        new = replace(self, reason=reason, **changes)
        self.log.append(Transition(reason, new.phase, new.step, note))
        return new

    def finish(self, stop_reason: str, detail: str = "", **changes: Any) -> LoopState:
        """The final state: ``stop_reason`` set, ``detail`` says why (shown on failure)."""
        changes.update(stop_reason=stop_reason, detail=detail, phase=Phase.DONE)
        return self.next(TransitionReason.FINISHED, detail, **changes)


class RunStopped(Exception):
    """Ends the run with ``state`` (already finished); ``text``: the answer so far."""

    def __init__(self, state: LoopState, text: str = "") -> None:
        super().__init__(state.stop_reason)
        self.state, self.text = state, text
