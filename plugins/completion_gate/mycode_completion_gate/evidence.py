"""What the session proves: the files changed, and the validations that ran after the change.

Only validations after the latest mutation count. A validation that itself wrote files (a
formatter, a coverage report) does not move that line: its own writes are what it checked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from mycode_core.records import Observation, Validation

Status = Literal["passed", "failed", "missing"]

_DOC_SUFFIXES = {".md", ".markdown", ".rst", ".txt", ".adoc", ".org"}
_DOC_NAMES = {"license", "licence", "copying", "authors", "changelog", "changes", "notice"}
_DOC_DIRS = {"docs", "doc"}


def is_documentation(path: str) -> bool:
    """Whether ``path`` is documentation (no test run needed for it under ``standard``)."""
    pure = PurePosixPath(path.replace("\\", "/"))
    if pure.suffix.lower() in _DOC_SUFFIXES:
        return True
    if pure.stem.lower() in _DOC_NAMES or pure.name.lower() in _DOC_NAMES:
        return True
    return bool(pure.parts) and pure.parts[0].lower() in _DOC_DIRS


@dataclass(frozen=True)
class KindStatus:
    """The state of one verification kind after the latest change."""

    status: Status
    command: str = ""
    """The command that decided (the failing one, or the last passing one)."""
    before_change: Validation | None = None
    """The last validation of this kind that ran before the latest change, if any."""


@dataclass
class Evidence:
    """Facts drawn from the observations of the run."""

    changed: list[str] = field(default_factory=list)
    """Paths written during the run, in first-change order."""
    mutated: bool = False
    """Something changed the workspace (even when the paths are unknown)."""
    unknown_change: bool = False
    """A change whose paths are unknown (a command that touched files)."""
    cutoff: int = -1
    """Index of the latest mutation (``-1``: none); validations after it count."""
    after: list[Validation] = field(default_factory=list)
    before: list[Validation] = field(default_factory=list)

    @property
    def code_changed(self) -> list[str]:
        """Changed paths that are not documentation."""
        return [path for path in self.changed if not is_documentation(path)]

    @property
    def changed_code(self) -> bool:
        """A change that may affect behaviour (code, config, or unknown paths)."""
        return self.unknown_change or bool(self.code_changed)

    def status(self, kind: str) -> KindStatus:
        """``passed`` / ``failed`` / ``missing`` for ``kind`` (``check`` = any kind).

        Each distinct command counts by its latest run: a failing run is only cleared by
        running the same command again successfully.
        """
        matching = [v for v in self.after if kind == "check" or v.kind == kind]
        previous = [v for v in self.before if kind == "check" or v.kind == kind]
        before = previous[-1] if previous else None
        if not matching:
            return KindStatus("missing", before_change=before)
        latest: dict[str, Validation] = {}
        for validation in matching:
            latest[" ".join(validation.command.split())] = validation
        failed = [v for v in latest.values() if not v.passed]
        if failed:
            return KindStatus("failed", failed[-1].command, before)
        return KindStatus("passed", matching[-1].command, before)

    def last_command(self, kind: str) -> str | None:
        """The most recent command of ``kind`` run in this session (to suggest it again)."""
        for validation in reversed(self.before + self.after):
            if kind == "check" or validation.kind == kind:
                return validation.command
        return None


def collect(observations: Sequence[Observation]) -> Evidence:
    """Build the :class:`Evidence` of a run from its observations."""
    evidence = Evidence()
    seen: set[str] = set()
    for index, obs in enumerate(observations):
        if not obs.mutation:
            continue
        evidence.mutated = True
        for path in obs.mutated:
            if path not in seen:
                seen.add(path)
                evidence.changed.append(path)
        if not obs.mutated:
            evidence.unknown_change = True
        if obs.validation is None:
            evidence.cutoff = index
    for index, obs in enumerate(observations):
        if obs.validation is None:
            continue
        (evidence.after if index > evidence.cutoff else evidence.before).append(obs.validation)
    return evidence
