"""Short unified diffs and "closest region" hints for edit results."""

from __future__ import annotations

import difflib

MAX_DIFF_LINES = 60
MAX_SCAN_LINES = 20_000


def short_diff(before: str, after: str, rel: str) -> str:
    """A unified diff of ``before`` → ``after`` capped at :data:`MAX_DIFF_LINES` lines."""
    lines = list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            fromfile=f"a/{rel}",
            tofile=f"b/{rel}",
            n=2,
            lineterm="",
        )
    )
    if len(lines) > MAX_DIFF_LINES:
        extra = len(lines) - MAX_DIFF_LINES
        lines = lines[:MAX_DIFF_LINES] + [f"… ({extra} more diff lines)"]
    return "\n".join(lines)


def line_numbers_of(text: str, needle: str) -> list[int]:
    """1-based line numbers where each (non-overlapping) occurrence of ``needle`` starts."""
    numbers: list[int] = []
    start = 0
    line = 1
    cursor = 0
    while True:
        index = text.find(needle, start)
        if index < 0:
            return numbers
        line += text.count("\n", cursor, index)
        cursor = index
        numbers.append(line)
        start = index + max(1, len(needle))


def closest_region(text: str, needle: str) -> str | None:
    """The numbered lines of ``text`` that look most like ``needle``, or ``None``."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if not lines:
        return None
    wanted = needle.splitlines() or [needle]
    size = max(1, len(wanted))
    target = "\n".join(part.strip() for part in wanted)
    best_ratio = 0.0
    best_start = -1
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for start in range(0, min(len(lines), MAX_SCAN_LINES)):
        chunk = "\n".join(part.strip() for part in lines[start : start + size])
        matcher.set_seq1(chunk)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_start = ratio, start
    if best_start < 0 or best_ratio < 0.4:
        return None
    end = min(len(lines), best_start + size)
    shown = [f"{number + 1:6}\t{lines[number]}" for number in range(best_start, end)]
    return "\n".join(shown)
