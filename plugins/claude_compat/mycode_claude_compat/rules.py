"""Claude Code's rules: the Markdown files of ``.claude/rules/``, sub-folders included (and,
once ``user_claude_settings = true`` opts in, ``~/.claude/rules/``).

A rule without ``paths`` in its front matter is an instruction from the start, like the
project's ``CLAUDE.md``. A rule with ``paths`` (globs such as ``src/api/**/*.ts`` or
``**/*.{ts,tsx}``, a list or one comma-separated string) applies to matching files only: it is
given to the model with the result of the first tool call that reads or changes one of them,
once a run. Rules are instruction files, read as the others are (SPEC §8): never through a
symlink leading out of the workspace (one notice), trusted or not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from mycode_claude_compat.commands import markdown_files, split_front_matter
from mycode_core.project_files import ProjectFileRefused, allowed_dirs, read_project_text

MAX_RULE_CHARS = 40_000
MAX_CHANGED = 1_000
"""Of the files one call changed, how many are matched (``npm install`` may change 50,000)."""
SECTION_PRIORITY = 21
"""Just after the project's instruction files (20)."""
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_COMMA = re.compile(r",(?![^{}]*\})")
"""A comma between globs, not one inside braces."""
_LINES = re.compile(r":\d+(?:-\d+)?$")
"""The line range ``read_file`` adds to a resource (``file:src/a.py:1-40``)."""


@dataclass
class Rule:
    """One rule file: where it is shown from, its text, and the globs it is scoped to."""

    title: str
    text: str
    paths: tuple[str, ...] = ()

    @cached_property
    def _spec(self) -> Any:
        import pathspec

        globs = [option for pattern in self.paths for option in _expanded(pattern)]
        return pathspec.GitIgnoreSpec.from_lines(globs)

    def applies_to(self, path: str) -> bool:
        """Whether the workspace-relative ``path`` is one of the rule's files."""
        return bool(self._spec.match_file(path))


def _expanded(pattern: str) -> list[str]:
    """``*.{ts,tsx}`` → ``*.ts``, ``*.tsx`` (gitignore globs have no braces)."""
    match = _BRACE.search(pattern)
    if match is None:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [
        found for option in match.group(1).split(",") for found in _expanded(head + option + tail)
    ]


def _globs(value: Any) -> tuple[str, ...]:
    items = (
        _COMMA.split(value) if isinstance(value, str) else value if isinstance(value, list) else []
    )
    return tuple(str(item).strip() for item in items if str(item).strip())


def user_rules(settings: Any) -> Path | None:
    """``~/.claude/rules``, once the user's config opts in to ``~/.claude``."""
    from mycode_claude_compat.loading import user_claude

    return Path.home() / ".claude" / "rules" if user_claude(settings) else None


def load_rules(
    workspace: Path, settings: Any, user_folder: Path | None, notice: Callable[[str], None]
) -> list[Rule]:
    """The rules of ``user_folder`` (yours, when given) then of the workspace's
    ``.claude/rules/``, each folder's files in name order."""
    rules = []
    allowed = allowed_dirs(settings)
    sources: list[tuple[Path, Path | None]] = [(workspace / ".claude" / "rules", workspace)]
    if user_folder is not None:
        sources.insert(0, (user_folder, None))
    for folder, inside in sources:
        for path in markdown_files(folder) if folder.is_dir() else []:
            try:
                if inside is None:
                    text = path.read_text(encoding="utf-8", errors="replace")
                else:
                    text = read_project_text(
                        inside, path, allowed=allowed, limit=4 * MAX_RULE_CHARS
                    )
            except ProjectFileRefused as exc:
                notice(str(exc))
                continue
            except OSError:
                continue
            front, body, problem = split_front_matter(text)
            if problem is not None:
                notice(f"{path}: {problem}; its rule is read without it")
            if not body.strip():
                continue
            title = str(path.relative_to(inside)) if inside is not None else str(path)
            rule = Rule(title, body.strip()[:MAX_RULE_CHARS], _globs(front.get("paths")))
            try:
                rule.applies_to("")  # its globs compiled now: a bad one is said once
            except ValueError as exc:  # pathspec's pattern errors
                notice(f"{path}: a glob of `paths` is not valid ({exc}); the rule is not used")
                continue
            rules.append(rule)
    return rules


def sections(rules: Iterable[Rule]) -> list[Any]:
    """The rules that always apply, as system-prompt sections."""
    from mycode_core import ContextSection

    return [
        ContextSection(title=f"Rules ({rule.title})", text=rule.text, priority=SECTION_PRIORITY)
        for rule in rules
        if not rule.paths
    ]


def touched_files(call_id: str, observations: list[Any]) -> list[str]:
    """The workspace files a call read (its path arguments) or changed."""
    for observation in reversed(observations):
        if observation.call_id == call_id:
            read = [_LINES.sub("", r[5:]) for r in observation.resources if r.startswith("file:")]
            return [*read, *observation.mutated[:MAX_CHANGED]]
    return []


def newly_applying(rules: Iterable[Rule], files: list[str], shown: set[str]) -> list[str]:
    """The text of each scoped rule one of ``files`` matches, not shown before (then it is)."""
    lines = []
    for rule in rules:
        if not rule.paths or rule.title in shown:
            continue
        matched = next((name for name in files if rule.applies_to(name)), None)
        if matched is not None:
            shown.add(rule.title)
            lines.append(f"Rules for {matched} ({rule.title}):\n{rule.text}")
    return lines
