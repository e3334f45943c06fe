"""What the session proves: the files changed, and the validations that ran after the change.

Only validations after the latest mutation count. A validation that itself wrote files (a
formatter, a coverage report) does not move that line: its own writes are what it checked.
Under ``standard`` and ``lenient`` a change of documentation only (:func:`is_documentation`)
does not move it either: a test run that passed before notes were written still holds, in
this turn or a later one of the session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Literal

from mycode_completion_gate.commands import judged, masked, refused, review
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
    changed_since: tuple[str, ...] = ()
    """The paths changed after the last *passing* validation of this kind before the latest
    change (all changed paths when none passed): what that validation does not cover."""


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
    before_at: list[int] = field(default_factory=list)
    """The observation index of each validation in ``before``."""
    mutations: list[tuple[int, list[str]]] = field(default_factory=list)
    """``(observation index, paths)`` of every change, in order."""
    masked: list[Validation] = field(default_factory=list)
    """Runs after the latest change whose exit status a ``|``, ``;`` or ``||`` hid: no proof."""
    refused: list[tuple[str, str]] = field(default_factory=list)
    """``(kind, command)`` of verifications after the latest change that the permission policy
    did not let run (denied in ``-p``, declined by the user)."""

    def refused_command(self, kind: str) -> str | None:
        """The latest refused command of ``kind`` (``check`` = any kind), else ``None``."""
        commands = [command for k, command in self.refused if kind in ("check", k)]
        return commands[-1] if commands else None

    def changed_after(self, index: int) -> list[str]:
        """The paths changed by observations after ``index``, in first-change order."""
        out: list[str] = []
        for at, paths in self.mutations:
            if at > index:
                out.extend(path for path in paths if path not in out)
        return out

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
        previous = [
            (at, v)
            for at, v in zip(self.before_at, self.before, strict=True)
            if kind == "check" or v.kind == kind
        ]
        before = previous[-1][1] if previous else None
        passed_at = [at for at, v in previous if v.passed]
        since = tuple(self.changed_after(passed_at[-1]) if passed_at else self.changed)
        if not matching:
            return KindStatus("missing", before_change=before, changed_since=since)
        latest: dict[str, Validation] = {}
        for validation in matching:
            latest[" ".join(validation.command.split())] = validation
        failed = [v for v in latest.values() if not v.passed]
        if failed:
            return KindStatus("failed", failed[-1].command, before, since)
        return KindStatus("passed", matching[-1].command, before, since)

    def last_command(self, kind: str) -> str | None:
        """The most recent command of ``kind`` run in this session (to suggest it again)."""
        for validation in reversed(self.before + self.after):
            if kind == "check" or validation.kind == kind:
                return validation.command
        return None


def collect(
    observations: Sequence[Observation],
    outputs: Mapping[str, str] | None = None,
    *,
    code_only: bool = False,
) -> Evidence:
    """Build the :class:`Evidence` of a run from its observations (``outputs``: the end of each
    command's output by call id, which judges a run whose exit status was masked;
    ``code_only``: a documentation-only change keeps the validations before it)."""
    evidence = Evidence()
    seen: set[str] = set()
    reviewed = [review(obs) for obs in observations]
    for index, obs in enumerate(observations):
        if not obs.mutation:
            continue
        evidence.mutated = True
        evidence.mutations.append((index, list(obs.mutated)))
        for path in obs.mutated:
            if path not in seen:
                seen.add(path)
                evidence.changed.append(path)
        if not obs.mutated:
            evidence.unknown_change = True
        docs = code_only and obs.mutated and all(map(is_documentation, obs.mutated))
        if not reviewed[index] and not docs:
            evidence.cutoff = index
    for index, validations in enumerate(reviewed):
        for validation in validations:
            _count(evidence, index, validation, outputs, observations[index].call_id)
        if index > evidence.cutoff:
            evidence.refused.extend(refused(observations[index]))
    return evidence


def _count(
    evidence: Evidence,
    index: int,
    validation: Validation,
    outputs: Mapping[str, str] | None,
    call_id: str,
) -> None:
    if masked(validation):
        stated = judged((outputs or {}).get(call_id, ""))
        if stated is None:
            if index > evidence.cutoff:
                evidence.masked.append(validation)
            return
        validation = validation.model_copy(update={"passed": stated})
    if index > evidence.cutoff:
        evidence.after.append(validation)
    else:
        evidence.before.append(validation)
        evidence.before_at.append(index)
