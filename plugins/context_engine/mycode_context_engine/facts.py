"""What the runtime knows for certain, rendered for the summary message with a bounded size.

Files read (with line ranges), files changed, the latest validation results; the most recent
entries are kept when a list is long, so a 2,000-step session's summary stays small.
"""

from __future__ import annotations

from typing import Any

MAX_READ = 25
MAX_CHANGED = 40
MAX_VALIDATIONS = 5


class FactLedger:
    """The facts, folded in incrementally: each observation is read once (O(1) amortised per
    step, whatever the session length). One ledger per run, kept in ``context.store``."""

    def __init__(self) -> None:
        self.seen = 0
        self.read: dict[str, list[str]] = {}
        self.changed: dict[str, None] = {}
        self.validations: list[tuple[int, str, str, bool]] = []
        self.last_mutation = -1

    def update(self, observations: list[Any]) -> None:
        """Fold in the observations recorded since the last call."""
        for obs in observations[self.seen :]:
            if obs.mutation:
                self.last_mutation = max(self.last_mutation, obs.step)
            for resource in obs.resources:
                if resource.startswith("file:") and not obs.mutation:
                    path, _, span = resource[5:].partition(":")
                    ranges = self.read.pop(path, [])
                    if span and span not in ranges:
                        ranges.append(span)
                    self.read[path] = ranges[-4:]  # re-inserted: most recently read last
            for path in obs.mutated:
                self.changed.pop(path, None)
                self.changed[path] = None
            if obs.validation is not None:
                entry = (
                    obs.step,
                    obs.validation.command,
                    obs.validation.kind,
                    obs.validation.passed,
                )
                self.validations = [*self.validations[-(MAX_VALIDATIONS - 1) :], entry]
        self.seen = len(observations)

    def render(self) -> str:
        """The facts section (bounded lists, most recent entries kept)."""
        read_items = list(self.read.items())[-(MAX_READ + 1) :]
        read_lines = [
            f"- {path}" + (f" (lines {', '.join(spans)})" if spans else "")
            for path, spans in read_items
        ]
        lines = ["## Recorded by mycode", "Files read:"]
        lines += _tail_count(read_lines, len(self.read), MAX_READ, "files") or ["- none"]
        lines.append("Files changed:")
        changed = [f"- {p}" for p in list(self.changed)[-(MAX_CHANGED + 1) :]]
        lines += _tail_count(changed, len(self.changed), MAX_CHANGED, "files") or ["- none"]
        lines.append("Test status:")
        for step, command, kind, passed in self.validations:
            when = "after" if step >= self.last_mutation else "before"
            outcome = "passed" if passed else "failed"
            lines.append(f"- `{command}` ({kind}) {outcome}, step {step}, {when} the latest change")
        if not self.validations:
            lines.append("- no test, lint or build command was run")
        return "\n".join(lines)


def _tail_count(items: list[str], total: int, limit: int, what: str) -> list[str]:
    if total <= limit:
        return items
    return [f"- … {total - limit} earlier {what} not listed", *items[-limit:]]


STORE_KEY = "context_engine.facts"


def recorded_facts(context: Any) -> str:
    """The facts section for ``context`` (its ledger is created on first use)."""
    store = getattr(context, "store", None)
    ledger = store.get(STORE_KEY) if isinstance(store, dict) else None
    if not isinstance(ledger, FactLedger):
        ledger = FactLedger()
        if isinstance(store, dict):
            store[STORE_KEY] = ledger
    ledger.update(getattr(context, "observations", []))
    return ledger.render()
