"""Long-run guards: the near-limit warning and the continuation checkpoint."""

from __future__ import annotations

from mycode_core.records import Observation

CHECKPOINT_REQUEST = (
    "You have reached the step limit and cannot call tools any more. Write a continuation "
    "checkpoint for whoever resumes this task, under these headings: Confirmed facts; Files read; "
    "Files changed; Test status; Remaining actions; Blockers. Be concrete and brief."
)


def near_limit_message(remaining: int) -> str:
    """Guidance sent once when few steps remain."""
    return (
        f"Only {remaining} step(s) remain before the step limit. Finish the most important "
        "remaining work, verify it, and give your final answer."
    )


def recorded_facts(observations: list[Observation]) -> str:
    """What the runtime itself knows: files read (with ranges), files changed, test status."""
    read: dict[str, list[str]] = {}
    changed: list[str] = []
    validations: list[str] = []
    last_mutation = max((o.step for o in observations if o.mutation), default=-1)
    for obs in observations:
        for resource in obs.resources:
            if resource.startswith("file:") and not obs.mutation:
                path, _, span = resource[5:].partition(":")
                ranges = read.setdefault(path, [])
                if span and span not in ranges:
                    ranges.append(span)
        for path in obs.mutated:
            if path not in changed:
                changed.append(path)
        if obs.validation is not None:
            when = "after" if obs.step >= last_mutation else "before"
            outcome = "passed" if obs.validation.passed else "failed"
            validations.append(
                f"- `{obs.validation.command}` ({obs.validation.kind}) {outcome}, step {obs.step}, "
                f"{when} the latest change"
            )
    lines = ["## Recorded by mycode", "Files read:"]
    lines += [f"- {p}" + (f" (lines {', '.join(r)})" if r else "") for p, r in read.items()] or [
        "- none"
    ]
    lines.append("Files changed:")
    lines += [f"- {p}" for p in changed] or ["- none"]
    lines.append("Test status:")
    lines += validations[-5:] or ["- no test, lint or build command was run"]
    return "\n".join(lines)
