"""mycode's completion gate: no "done" without evidence.

The default ``completion_verdict`` policy. It is marked ``trylast``, so a team's own policy
(any other plugin implementing ``completion_verdict``) is asked first and replaces it by
returning a verdict; returning ``None`` hands the decision back to this gate.

Choose a built-in policy with ``[completion_gate] policy = "strict" | "standard" | "lenient" |
"off"`` in ``config.toml`` or ``--completion-policy``. Any other name is left to the plugin
that claims it; if none does, the gate warns once and applies ``standard``.

Modules: :mod:`.requirements` (what the user asked, the todos), :mod:`.evidence` (what the
session proves), :mod:`.project` (does the project have tests), :mod:`.policies` (the verdicts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mycode_core import hookimpl, subscribe

if TYPE_CHECKING:
    from mycode_core.records import (
        CompletionVerdict,
        Observation,
        RunContext,
        Tool,
        ToolCall,
        ToolResult,
    )

OUTPUTS_KEY = "completion_gate.outputs"
"""``context.store`` key: the end of each ``run_command`` output, by call id."""

__all__ = ["completion_verdict", "on_event", "tool_result_verdict"]


@hookimpl
@subscribe("assistant")
def on_event(event: Any, context: RunContext) -> None:
    """Import the gate (its request patterns take ~20 ms to compile) once the model answers,
    on this plugin's observer thread while the run waits for tools and the next answer, and
    not between the final answer and the exit."""
    import mycode_completion_gate.gate  # noqa: F401


@hookimpl
def tool_result_verdict(
    call: ToolCall, tool: Tool | None, result: ToolResult, context: RunContext
) -> list[str] | None:
    """Keep the end of each command's output: a test run whose exit status a pipe hid
    (``pytest | tail -5``) is judged by the summary it printed."""
    if call.name == "run_command":
        from mycode_completion_gate.commands import OUTPUT_KEPT

        outputs = context.store.setdefault(OUTPUTS_KEY, {})
        outputs[call.id] = result.text()[-OUTPUT_KEPT:]
    return None


@hookimpl(trylast=True)
def completion_verdict(
    final_text: str, observations: list[Observation], context: RunContext
) -> CompletionVerdict | None:
    """Judge the final answer with the configured built-in policy (see the package docs)."""
    from mycode_completion_gate.gate import verdict

    return verdict(final_text, observations, context)
