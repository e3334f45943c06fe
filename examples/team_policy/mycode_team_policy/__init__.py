"""An example team completion policy for mycode: "every change must pass ``make check``".

Selected by name: it answers only when the configuration says
``[completion_gate] policy = "team_policy"`` and returns ``None`` otherwise, so the built-in
policies (``strict``, ``standard``, ``lenient``, ``off``) keep working with it installed.

When selected, it replaces the default gate entirely (the default gate is ``trylast``, so this
plugin is always asked first) and requires:

1. if the run changed files: the team's check command (``[team_policy] command``, default
   ``make check``) ran **after the latest change** and passed;
2. the final answer mentions that command, so the reviewer sees its result.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from mycode_core import hookimpl

if TYPE_CHECKING:
    from mycode_core.records import CompletionVerdict, Observation, RunContext

NAME = "team_policy"
DEFAULT_COMMAND = "make check"


def _command_of(obs: Observation) -> str | None:
    """The shell command of a ``run_command`` observation, whitespace-normalised."""
    if obs.tool != "run_command":
        return None
    _, _, raw = obs.signature.partition(" ")
    try:
        command = json.loads(raw).get("command")
    except (ValueError, AttributeError):
        return None
    return " ".join(command.split()) if isinstance(command, str) else None


def _passed(obs: Observation) -> bool:
    """Exit code 0: the core's validation says so, or the result is not an error."""
    return obs.validation.passed if obs.validation is not None else not obs.is_error


def judge(final_text: str, observations: list[Observation], command: str) -> CompletionVerdict:
    """The team's rules, as a pure function of the facts (easy to unit-test)."""
    from mycode_core.records import CompletionVerdict

    wanted = " ".join(command.split())
    last_change = max((i for i, o in enumerate(observations) if o.mutation), default=-1)
    if last_change < 0:
        return CompletionVerdict(verdict="pass", source=NAME)
    runs = [o for o in observations[last_change + 1 :] if _command_of(o) == wanted]
    missing: list[str] = []
    problems: list[str] = []
    if not runs:
        missing.append(wanted)
        problems.append(f"Team policy: run `{wanted}` after your last change (not run since).")
    elif not _passed(runs[-1]):
        missing.append(wanted)
        problems.append(f"Team policy: `{wanted}` failed after your last change; make it pass.")
    if wanted not in " ".join(final_text.split()):
        missing.append("report")
        problems.append(f"Team policy: say in your final answer whether `{wanted}` passed.")
    if problems:
        return CompletionVerdict(
            verdict="fail", feedback=" ".join(problems), source=NAME, missing=missing
        )
    return CompletionVerdict(verdict="pass", source=NAME)


def _selected(settings: Any) -> bool:
    gate = getattr(settings, "completion_gate", None)
    return str(getattr(gate, "policy", "")).strip().lower() == NAME


@hookimpl
def completion_verdict(
    final_text: str, observations: list[Observation], context: RunContext
) -> CompletionVerdict | None:
    """Judge the final answer when ``[completion_gate] policy = "team_policy"``."""
    if not _selected(context.settings):
        return None  # not chosen: leave the decision to the built-in gate
    command = str(context.settings.section(NAME).get("command") or DEFAULT_COMMAND)
    return judge(final_text, observations, command)
