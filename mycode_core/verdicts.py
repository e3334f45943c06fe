"""What hooks and tools answer the core: policy verdicts, why a call needs approval, a slash
command's result, a compacted view. Import them from :mod:`mycode_core.records`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SkipValidation

Decision = Literal["allow", "deny", "ask"]
Verdict = Literal["pass", "fail", "unverified"]


class _Answer(BaseModel):
    model_config = ConfigDict(defer_build=True)  # every answer: built at first use, not at start-up


class PermissionVerdict(_Answer):
    """Answer of a ``permission_verdict`` policy.

    ``rule`` is the rule that decided (e.g. ``run_command(git push:*)`` or ``mode:plan``),
    ``layer`` its config layer (``default``, ``user``, ``project``, ``local``, ``env``, ``cli``,
    ``session``). For ``ask``, ``grant`` is the key an "allow for this session" answer adds to
    ``context.session_grants`` (the policy should then allow calls matching it). For
    ``allow``/``ask``, ``updated_arguments`` replace the call's; the core checks them against
    the tool's schema before the call runs (invalid ones make an error result).
    """

    decision: Decision
    reason: str = ""
    rule: str | None = None
    layer: str | None = None
    grant: str | None = None
    updated_arguments: dict[str, Any] | None = None


class CallApproval(_Answer):
    """Why one tool call needs the user's approval (see ``Tool.approval_for``). ``subject`` is
    what ``tool(spec)`` rules match (``user`` for ``remember(user)``); ``grant`` the rule an
    "allow for this session" answer remembers and the reason suggests (default: the tool)."""

    reason: str
    subject: str | None = None
    grant: str | None = None


class StagnationVerdict(_Answer):
    """Answer of a ``stagnation_verdict`` policy: keep going, guide the model, or stop."""

    action: Literal["continue", "guide", "stop"]
    pattern: str | None = None
    message: str = ""


class CompletionVerdict(_Answer):
    """Answer of a ``completion_verdict`` policy for a final answer: ``pass`` and
    ``unverified`` end the run; ``fail`` sends ``feedback`` back to the model."""

    verdict: Verdict
    feedback: str = ""
    source: str = "completion_gate"
    missing: list[str] = Field(default_factory=list)
    counts: bool = True  # False: a fail its plugin bounds itself, not counted to max_blocks


class PromptVerdict(_Answer):
    """Answer of a ``user_prompt_verdict`` hook for the user's prompt: ``block`` drops it (the
    model never sees it) and shows ``reason`` to the user; ``context`` lines are added to what
    the model sees with the prompt."""

    block: bool = False
    reason: str = ""
    context: list[str] = Field(default_factory=list)
    source: str = ""


class SlashResult(_Answer):
    """What a slash command returns: a ``prompt`` to run as the user's turn, ``output`` to show
    the user, and/or ``rewind``: cut the conversation back to before the session's N-th user
    turn (recorded, so ``--resume`` goes on from there). ``exit_code`` is what ``mycode -p
    "/name"`` exits with: the same operation's code as a subcommand (2: usage, nothing to do)."""

    prompt: str | None = None
    output: str | None = None
    rewind: int | None = None
    exit_code: int = 0


class CompactedView(_Answer):
    """What a ``compact_context`` implementation may return instead of a plain list: the new
    messages (system message first; not copied, as the transcript names them by identity), the
    ``compaction`` event's summary and the ``stage`` (``mask``: old tool results became
    placeholders; ``summary``: older turns were summarised; ``truncate``: they were dropped)."""

    messages: SkipValidation[list[dict[str, Any]]]
    summary: str | None = None
    stage: str | None = None
