"""The patterns and verdicts of the default stagnation policy.

The package's ``stagnation_verdict`` hook (marked ``trylast``, so any other plugin implementing
it replaces this policy) calls :func:`verdict`. It reads the run's
:class:`~mycode_core.records.Observation` facts and reports four patterns, all "work that
brought no new information":

* ``same_tool_repeat`` — the identical call (same signature) returned the same result again.
* ``alternation`` — two (or three) calls repeated in turn, A-B-A-B, with unchanged results.
* ``same_result_repeat`` — the same tool, on the same target, returned the same result for
  calls whose arguments differ (``a.py`` vs ``./a.py``, ``cat 'a'`` vs ``cat a``, another
  offset or description, …). The target is the file (line range aside), the normalised
  command, or the search; tools without resources (e.g. MCP tools) share one target.
* ``resource_repeat`` — the same resource (a file's lines, a command) looked at again and
  again when the lines were already read and nothing changed in between.

Progress is never stagnation: a mutation (an edit, a command that changed files) starts a fresh
segment, and so does a command that waits (``sleep 30; cat status``: polling), a result never
seen before is new information, and reading different files or line ranges touches different
resources. A write that repeats an earlier write word for word with the same result is not
progress.

Soft answer: one ``guide`` per episode. The episode ends with progress (a mutation or a new
result). Hard answer: if, after the guidance, the calls that caused it are repeated
``hard_after_guidance`` more times without new information, ``stop``.

Cost: the policy keeps its per-run state in ``context.store["stagnation"]`` and looks only at
the new observations and a window of the last ``window`` ones, so its cost per call does not
grow with the length of the run.
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from mycode_core.records import Observation, RunContext, StagnationVerdict

STORE_KEY = "stagnation"
TABLE = "stagnation"
"""The config table the thresholds are read from."""
_RANGE = re.compile(r"^file:(?P<path>.+):(?P<start>\d+)-(?P<end>\d+)$")
_MAX_SHOWN = 160


@dataclass
class StagnationState:
    """Per-run state of the default policy (kept in ``context.store["stagnation"]``)."""

    processed: int = 0
    """How many observations have been looked at."""
    segment_start: int = 0
    """Index of the first observation of the current segment (after the last progress)."""
    guided: bool = False
    """Whether the current episode has already had its guidance."""
    pattern: str | None = None
    culprits: set[str] = field(default_factory=set)
    """Signatures of the calls that caused the guidance."""
    repeats_after_guidance: int = 0
    guidance_count: int = 0

    def end_episode(self, new_segment_start: int) -> None:
        """Progress happened: forget the episode and start a new segment."""
        self.segment_start = new_segment_start
        self.guided = False
        self.pattern = None
        self.culprits = set()
        self.repeats_after_guidance = 0


@dataclass(frozen=True)
class Finding:
    """A detected pattern: its name, the calls involved, and a sentence describing it."""

    pattern: str
    culprits: frozenset[str]
    description: str


@dataclass(frozen=True)
class Limits:
    """The thresholds of the policy, read from ``[stagnation]``."""

    enabled: bool = True
    repeat_threshold: int = 3
    hard_after_guidance: int = 3
    window: int = 12

    @classmethod
    def from_settings(cls, settings: Any) -> Limits:
        """Read the ``[stagnation]`` table (tolerating a missing or partial section)."""
        section_of = getattr(settings, "section", None)
        section = section_of(TABLE) if callable(section_of) else {}

        def get(name: str, default: Any) -> Any:
            return section.get(name, default)

        return cls(
            enabled=bool(get("enabled", True)),
            repeat_threshold=max(2, int(get("repeat_threshold", 3))),
            hard_after_guidance=max(1, int(get("hard_after_guidance", 3))),
            window=max(4, int(get("window", 12))),
        )


# --- facts about one observation --------------------------------------------------------


def _command_key(command: str) -> str:
    """A command with spelling differences removed: quotes, spacing, ``./`` prefixes."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return " ".join(word.removeprefix("./") or "." for word in words)


def _target(obs: Observation) -> str:
    """What the call was about: its resources, line ranges dropped, commands normalised."""
    parts = set()
    for resource in obs.resources:
        match = _RANGE.match(resource)
        if match:
            parts.add(f"file:{match.group('path')}")
        elif resource.startswith("command:"):
            parts.add("command:" + _command_key(resource.removeprefix("command:")))
        else:
            parts.add(resource)
    return "|".join(sorted(parts))


def _ranges(obs: Observation) -> list[tuple[str, int, int]]:
    """The ``(path, start, end)`` line ranges this observation read."""
    out = []
    for resource in obs.resources:
        match = _RANGE.match(resource)
        if match:
            out.append((match.group("path"), int(match.group("start")), int(match.group("end"))))
    return out


class _Seen:
    """What a stretch of observations already showed: results, and file lines read."""

    def __init__(self, observations: Sequence[Observation] = ()) -> None:
        self.results: set[tuple[str, str, str]] = set()
        self.hashes: set[str] = set()
        self.exact: set[tuple[str, str]] = set()
        self.lines: dict[str, list[tuple[int, int]]] = {}
        for obs in observations:
            self.add(obs)

    def add(self, obs: Observation) -> None:
        """Remember what ``obs`` showed."""
        self.results.add((obs.tool, obs.result_hash, _target(obs)))
        self.hashes.add(obs.result_hash)
        for resource in obs.resources:
            self.exact.add((resource, obs.result_hash))
        for path, start, end in _ranges(obs):
            self.lines.setdefault(path, []).append((start, end))

    def covered(self, path: str, start: int, end: int) -> bool:
        """Whether lines ``start..end`` of ``path`` were already read."""
        return any(a <= start and end <= b for a, b in self.lines.get(path, ()))

    def is_stale(self, obs: Observation) -> bool:
        """True when ``obs`` brought nothing new: a known result, or lines already read."""
        if (obs.tool, obs.result_hash, _target(obs)) in self.results:
            return True
        ranges = _ranges(obs)
        if ranges and all(self.covered(p, a, b) for p, a, b in ranges):
            return True
        others = [r for r in obs.resources if not _RANGE.match(r)]
        if ranges or not others:
            return False
        return all((r, obs.result_hash) in self.exact for r in others)

    def is_new(self, obs: Observation) -> bool:
        """True when ``obs`` returned a result this stretch has not shown at all."""
        return obs.result_hash not in self.hashes and not self.is_stale(obs)


def _is_progress_mutation(obs: Observation, before: Sequence[Observation]) -> bool:
    """A mutation is progress unless it repeats an earlier mutation word for word."""
    if not obs.mutation:
        return False
    return not any(
        prev.mutation and prev.signature == obs.signature and prev.result_hash == obs.result_hash
        for prev in before
    )


_WAITS = re.compile(r"(?:^|[\s;&|(])sleep\s+(?:0*[1-9]|0*\.0*[1-9])")


def _waits(obs: Observation) -> bool:
    """Whether ``obs`` is a command that waits (``sleep 30; cat status``): time passed, so an
    unchanged answer is what polling a running build or server looks like, not a loop."""
    if obs.tool != "run_command":
        return False
    try:
        arguments = json.loads(obs.signature.partition(" ")[2])
    except ValueError:
        return False
    command = arguments.get("command") if isinstance(arguments, dict) else None
    return isinstance(command, str) and bool(_WAITS.search(command))


def _shown(signature: str) -> str:
    return signature if len(signature) <= _MAX_SHOWN else signature[: _MAX_SHOWN - 1] + "…"


# --- the four detectors -----------------------------------------------------------------


def _same_tool_repeat(segment: Sequence[Observation], threshold: int) -> Finding | None:
    counts = Counter((obs.signature, obs.result_hash) for obs in segment)
    (signature, _hash), count = max(counts.items(), key=lambda item: item[1], default=(("", ""), 0))
    if count < threshold:
        return None
    return Finding(
        "same_tool_repeat",
        frozenset({signature}),
        f"you have made the identical call `{_shown(signature)}` {count} times and got the "
        "same result each time",
    )


def _alternation(segment: Sequence[Observation]) -> Finding | None:
    for period in (2, 3):
        if len(segment) < 2 * period:
            continue
        tail = segment[-2 * period :]
        first, second = tail[:period], tail[period:]
        signatures = [obs.signature for obs in first]
        if len(set(signatures)) < 2:
            continue
        if all(
            a.signature == b.signature and a.result_hash == b.result_hash
            for a, b in zip(first, second, strict=True)
        ):
            calls = ", ".join(f"`{_shown(s)}`" for s in signatures)
            return Finding(
                "alternation",
                frozenset(signatures),
                f"you are cycling through the same calls ({calls}) and they return the same "
                "results each round",
            )
    return None


def _same_result_repeat(segment: Sequence[Observation], threshold: int) -> Finding | None:
    groups: dict[tuple[str, str, str], list[Observation]] = {}
    for obs in segment:
        if not obs.mutation:
            groups.setdefault((obs.tool, obs.result_hash, _target(obs)), []).append(obs)
    for (tool, _hash, _target_key), members in groups.items():
        if len(members) >= threshold:
            return Finding(
                "same_result_repeat",
                frozenset(obs.signature for obs in members),
                f"you have called `{tool}` {len(members)} times with different arguments on the "
                "same target and got the identical result every time",
            )
    return None


def _describe_target(target: str) -> str:
    """Readable words for a target key (``file:a.py`` → ``a.py``)."""
    words = []
    for part in target.split("|"):
        kind, _, rest = part.partition(":")
        if kind == "file":
            words.append(f"`{rest}`")
        elif kind == "command":
            words.append(f"the output of `{_shown(rest)}`")
        else:
            words.append(f"`{_shown(part)}`")
    return ", ".join(words)


def _resource_repeat(segment: Sequence[Observation], threshold: int) -> Finding | None:
    seen = _Seen()
    touches: Counter[str] = Counter()
    stale: dict[str, list[Observation]] = {}
    for obs in segment:
        if not obs.mutation and obs.resources:
            touches[_target(obs)] += 1
            if seen.is_stale(obs):
                stale.setdefault(_target(obs), []).append(obs)
        seen.add(obs)
    for target, members in stale.items():
        if len(members) + 1 >= threshold:
            return Finding(
                "resource_repeat",
                frozenset(obs.signature for obs in members),
                f"you have looked at {_describe_target(target)} {touches[target]} times; "
                f"{len(members)} of those showed only what you had already seen",
            )
    return None


def detect(segment: Sequence[Observation], threshold: int) -> Finding | None:
    """The first stagnation pattern found in ``segment`` (observations since the last progress)."""
    return (
        _same_tool_repeat(segment, threshold)
        or _alternation(segment)
        or _same_result_repeat(segment, threshold)
        or _resource_repeat(segment, threshold)
    )


# --- messages ---------------------------------------------------------------------------


def guidance_message(finding: Finding) -> str:
    """The soft message: name the repetition, do not dictate the next tool."""
    return (
        f"You are repeating yourself without getting new information: {finding.description}, "
        "with no change to the workspace in between. Doing it again will not tell you anything "
        "new. Work from what you already know: if something is unclear, approach it another "
        "way; if you are done, give your final answer; if you are blocked, say what blocks you."
    )


def stop_message(finding_pattern: str | None, repeats: int) -> str:
    """The hard message: why the run stopped."""
    return (
        f"Stopped: the repetition ({finding_pattern or 'repeated calls'}) continued {repeats} "
        "more times after guidance without any new information."
    )


# --- the hook ---------------------------------------------------------------------------


def _state(context: RunContext, total: int) -> StagnationState:
    state = context.store.get(STORE_KEY)
    if not isinstance(state, StagnationState) or state.processed > total:
        state = StagnationState()
        context.store[STORE_KEY] = state
    return state


def evaluate(
    observations: Sequence[Observation], state: StagnationState, limits: Limits
) -> StagnationVerdict | None:
    """Advance ``state`` over the new observations and return a verdict, or ``None``."""
    total = len(observations)
    first_new = max(state.processed, total - limits.window)
    for index in range(first_new, total):
        obs = observations[index]
        recent = observations[max(0, index - limits.window) : index]
        if _is_progress_mutation(obs, recent) or _waits(obs):
            state.end_episode(index + 1)
            continue
        if state.guided:
            before = observations[max(state.segment_start, index - limits.window) : index]
            if _Seen(before).is_new(obs):
                state.end_episode(index)
            elif obs.signature in state.culprits:
                state.repeats_after_guidance += 1
    state.processed = total

    if state.guided:
        if state.repeats_after_guidance >= limits.hard_after_guidance:
            return StagnationVerdict(
                action="stop",
                pattern=state.pattern,
                message=stop_message(state.pattern, state.repeats_after_guidance),
            )
        return None

    segment = observations[max(state.segment_start, total - limits.window) : total]
    finding = detect(segment, limits.repeat_threshold)
    if finding is None:
        return None
    state.guided = True
    state.pattern = finding.pattern
    state.culprits = set(finding.culprits)
    state.repeats_after_guidance = 0
    state.guidance_count += 1
    return StagnationVerdict(
        action="guide", pattern=finding.pattern, message=guidance_message(finding)
    )


def verdict(observations: list[Observation], context: RunContext) -> StagnationVerdict | None:
    """Guide once per episode of repetition, stop if it goes on (see the module docs)."""
    limits = Limits.from_settings(context.settings)
    if not limits.enabled:
        return None
    with context.lock:
        return evaluate(observations, _state(context, len(observations)), limits)
