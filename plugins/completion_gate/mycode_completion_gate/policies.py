"""The built-in gate policies: what each requires, and the verdict it gives.

* ``strict`` — every change needs a passing validation after it (a test run when the project
  has tests), plus what the user asked for and the unfinished todos.
* ``standard`` (default) — what the user asked for, the unfinished todos, and a passing test
  run after the latest change when code changed in a project that has tests.
* ``lenient`` — only what the user asked for.
* ``off`` — always pass.

A requirement the user softened ("if possible", "尽量") that is not met gives ``unverified``
instead of ``fail``; so does a code change in a project with no way to verify it, and a test
run asked for in a project where no tests were found, once the model was told so and still ran
none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mycode_completion_gate.evidence import Evidence
from mycode_completion_gate.project import Project
from mycode_completion_gate.requirements import Request
from mycode_core.records import CompletionVerdict

POLICIES = ("strict", "standard", "lenient", "off")
SOURCE = "completion_gate"
_CANNOT_RUN = "Not verified (this agent cannot run commands: plan mode or a read-only profile): "
NO_TESTS = "test_not_found"
"""The key of a test run asked for in a project where no tests were found."""

_LABEL = {
    "test": "test run",
    "lint": "lint run",
    "typecheck": "type-check",
    "build": "build",
    "check": "verification (tests, lint, type-check or build)",
}
_ACTION = {
    "test": "run the tests",
    "lint": "run the linter",
    "typecheck": "run the type checker",
    "build": "run the build",
    "check": "run the project's tests or checks",
}


@dataclass(frozen=True)
class Need:
    """A verification the policy requires."""

    kind: str
    must_pass: bool
    best_effort: bool
    reason: str
    """``request`` (the user asked), ``change`` (code changed) or ``strict``."""
    phrase: str = ""


@dataclass(frozen=True)
class Gap:
    """Something missing, in words the model can act on."""

    key: str
    message: str
    soft: bool = False
    """Best effort only: leaves the run ``unverified`` rather than failing it."""


def needs_for(
    policy: str, request: Request, evidence: Evidence, project: Project, can_run: bool = True
) -> list[Need]:
    """The verifications ``policy`` requires for this request and session; an agent that
    cannot run commands (``can_run`` false) is asked for none of them."""
    if policy == "off":
        return []
    needs: dict[str, Need] = {}
    for kind, ask in request.asks.items():
        needs[kind] = Need(
            kind=kind,
            must_pass=ask.must_pass or evidence.mutated,
            best_effort=ask.best_effort
            or not can_run
            or (kind == "check" and not project.verifiable),
            reason="request",
            phrase=ask.phrase,
        )
    wants_tests = "test" not in request.declined and "test" not in needs and project.has_tests
    if policy == "standard" and evidence.changed_code and wants_tests:
        needs["test"] = Need("test", True, request.softens_session, "change")
    if policy == "strict" and evidence.mutated:
        if wants_tests:
            needs["test"] = Need("test", True, request.softens_session, "change")
        if not needs:
            needs["check"] = Need("check", True, request.softens_session, "strict")
    return list(needs.values())


def describe_files(paths: list[str], limit: int = 3) -> str:
    """``a.py, b.py and 2 more files`` (or ``files`` when unknown)."""
    if not paths:
        return "files"
    shown = ", ".join(paths[:limit])
    rest = len(paths) - limit
    return f"{shown} and {rest} more file{'s' if rest > 1 else ''}" if rest > 0 else shown


def gap_for(need: Need, evidence: Evidence, project: Project) -> Gap | None:
    """What is missing for ``need``, or ``None`` when the evidence covers it."""
    status = evidence.status(need.kind)
    if status.status == "passed":
        return None
    asked = f'The user asked: "{need.phrase}". ' if need.reason == "request" else ""
    if status.status == "failed":
        if not need.must_pass:
            return None
        where = " after your last change" if evidence.mutated else ""
        message = (
            f"{asked}The last run of `{status.command}`{where} failed: fix the failure and "
            "run it again until it passes."
        )
        return Gap(need.kind, message, need.best_effort)
    if (denied := evidence.refused_command(need.kind)) is not None:
        message = f"{asked}`{denied}` was not allowed to run, so this is unverified."
        return Gap(need.kind, message, soft=True)
    hint = evidence.last_command(need.kind) or project.hint(need.kind)
    example = f" (e.g. `{hint}`)" if hint else ""
    label, action = _LABEL[need.kind], _ACTION[need.kind]
    hidden = [v for v in evidence.masked if need.kind in ("check", v.kind)]
    if hidden:
        message = (
            f"{asked}`{hidden[-1].command}` exits with the status of its last command, not of "
            f"the {label}, so it proves nothing: {action} on their own, without `|`, `;` or "
            f"`||` after them{example}, and report the result."
        )
    elif need.kind == "test" and not project.has_tests and status.before_change is None:
        message = (
            f"{asked}No test run was run, and no tests were found in the project: look for its "
            "tests and run them, or say that it has none."
        )
        return Gap(NO_TESTS, message, need.best_effort)
    elif evidence.mutated:
        before = status.before_change
        files = describe_files(list(status.changed_since) or evidence.changed)
        if before is not None:
            message = (
                f"{asked}You changed {files} after the last {label} (`{before.command}`), so it "
                f"does not cover your change: {action} again{example} and report the result."
            )
        else:
            message = (
                f"{asked}You changed {files} but no {label} passed after that change: "
                f"{action}{example} and report the result."
            )
    else:
        message = f"{asked}No {label} was run: {action}{example} and report the result."
    return Gap(need.kind, message, need.best_effort)


def todo_gap(todos: list[dict[str, Any]], limit: int = 5) -> Gap | None:
    """The unfinished todos as one gap, or ``None``."""
    if not todos:
        return None
    items = [
        f'"{str(item.get("content", "")).strip()}" ({item.get("status", "pending")})'
        for item in todos[:limit]
    ]
    if len(todos) > limit:
        items.append(f"and {len(todos) - limit} more")
    count = len(todos)
    noun = "todo is" if count == 1 else "todos are"
    return Gap(
        "todos",
        f"{count} {noun} not completed: {'; '.join(items)}. Finish them, or update the todo "
        "list if they no longer apply.",
    )


def _feedback(gaps: list[Gap]) -> str:
    if len(gaps) == 1:
        return gaps[0].message
    return "Not done yet:\n" + "\n".join(f"- {gap.message}" for gap in gaps)


def judge(
    policy: str,
    *,
    request: Request,
    evidence: Evidence,
    project: Project,
    todos: list[dict[str, Any]],
    told_no_tests: bool = False,
    can_run: bool = True,
) -> CompletionVerdict:
    """The verdict of built-in ``policy`` (one of :data:`POLICIES`). With ``told_no_tests``
    (the model was already blocked once for it), a test run asked for in a project with no
    tests found no longer fails: "it has none" may be the true answer. Without ``can_run``
    (plan mode, a read-only subagent) a check asked for leaves the run unverified."""
    if policy == "off":
        return CompletionVerdict(verdict="pass", feedback="completion gate is off", source=SOURCE)
    gaps = [
        gap
        for need in needs_for(policy, request, evidence, project, can_run)
        if (gap := gap_for(need, evidence, project)) is not None
    ]
    if policy in ("strict", "standard"):
        pending = todo_gap(todos)
        if pending is not None:
            gaps.append(pending)
    missing = [gap.key for gap in gaps]
    if any(not gap.soft and not (told_no_tests and gap.key == NO_TESTS) for gap in gaps):
        return CompletionVerdict(
            verdict="fail", feedback=_feedback(gaps), source=SOURCE, missing=missing
        )
    if gaps:
        return CompletionVerdict(
            verdict="unverified",
            feedback=("Not verified: " if can_run else _CANNOT_RUN) + _feedback(gaps),
            source=SOURCE,
            missing=missing,
        )
    if policy in ("strict", "standard") and evidence.changed_code:
        verified = evidence.status("check").status == "passed"
        if not verified and not project.has_tests:
            return CompletionVerdict(
                verdict="unverified",
                feedback="No tests found in the project to verify the change.",
                source=SOURCE,
            )
        if not verified and "test" in request.declined:
            return CompletionVerdict(
                verdict="unverified",
                feedback="The change was not verified: the user asked not to run the tests.",
                source=SOURCE,
            )
    return CompletionVerdict(verdict="pass", source=SOURCE)
