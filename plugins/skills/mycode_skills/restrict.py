"""``allowed-tools``: while a skill that lists tools is active, other tools need the user's say.

Semantics (documented in the README):

* A skill becomes *active* when it is loaded (``load_skill`` or ``/skill:NAME``) and stays
  active until the end of that turn (the user's next prompt starts with no active skill).
* While one or more active skills have ``allowed-tools``, a call is *inside* when any of
  those lists matches it; ``load_skill`` is always inside. A call outside is turned into an
  ``ask`` (interactive: the user decides; ``-p``: a denial naming the skill).
* ``allowed-tools`` only restricts, it never pre-approves: a call inside the list still goes
  through the permission rules and modes, and a denial from them stands. ``bypass`` mode
  (no prompts) does not apply the restriction.

Entries are written as the ecosystem writes them: ``Read``, ``Bash(git:*)``, ``Edit(src/**)``
(Claude Code names are mapped to mycode's), or mycode names (``read_file``,
``run_command(git status)``).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Any

from mycode_core.api import mycode_tool_name

PATH_TOOLS = {"read_file", "write_file", "edit_file", "glob", "grep"}
ALWAYS_INSIDE = {"load_skill"}
_RULE = re.compile(r"^\s*([A-Za-z0-9_.*-]+)\s*(?:\((.*)\))?\s*$")


@dataclass(frozen=True)
class ToolRule:
    """One entry of ``allowed-tools``: a tool name (mycode's) and an optional pattern."""

    tool: str
    pattern: str | None = None

    def matches(self, name: str, arguments: dict[str, Any]) -> bool:
        """True when this entry covers a call of ``name`` with ``arguments``."""
        if not fnmatch.fnmatchcase(name, self.tool):
            return False
        if self.pattern is None or self.pattern in ("", "*"):
            return True
        if name == "run_command":
            return _command_matches(str(arguments.get("command", "")), self.pattern)
        if name in PATH_TOOLS:
            path = str(arguments.get("path") or arguments.get("pattern") or "")
            return fnmatch.fnmatch(path.lstrip("./"), self.pattern.lstrip("./"))
        return fnmatch.fnmatch(str(arguments), f"*{self.pattern}*")


def _command_matches(command: str, pattern: str) -> bool:
    command = " ".join(command.split())
    if pattern.endswith(":*"):
        prefix = pattern[:-2].strip()
        return command == prefix or command.startswith(prefix + " ")
    if "*" in pattern:
        return fnmatch.fnmatchcase(command, pattern)
    return command == " ".join(pattern.split())


def parse_rule(text: str) -> ToolRule | None:
    """``Bash(git:*)`` → ``ToolRule("run_command", "git:*")``; ``None`` if unreadable."""
    match = _RULE.match(text)
    if match is None:
        return None
    name, pattern = match.group(1), match.group(2)
    name = mycode_tool_name(name)
    return ToolRule(name, pattern.strip() if pattern is not None else None)


def parse_rules(entries: tuple[str, ...]) -> list[ToolRule]:
    """Every readable entry of an ``allowed-tools`` list (unreadable ones are skipped)."""
    rules = []
    for entry in entries:
        rule = parse_rule(entry)
        if rule is not None:
            rules.append(rule)
    return rules


@dataclass
class ActiveSkill:
    """A loaded skill and the turn it belongs to."""

    name: str
    rules: list[ToolRule] | None
    turn: str | None
    """``context.prompt`` when it became active (``None``: bind at the next check)."""


class Restrictions:
    """The active skills of a run and the check their ``allowed-tools`` imply."""

    def __init__(self) -> None:
        self.active: list[ActiveSkill] = []

    def activate(self, name: str, allowed: tuple[str, ...] | None, turn: str | None) -> None:
        """Mark ``name`` active for the turn identified by ``turn``."""
        rules = parse_rules(allowed) if allowed is not None else None
        self.active = [skill for skill in self.active if skill.name != name]
        self.active.append(ActiveSkill(name, rules, turn))

    def current(self, turn: str) -> list[ActiveSkill]:
        """The skills active in the turn ``turn`` (older ones expire)."""
        for skill in self.active:
            if skill.turn is None:
                skill.turn = turn
        self.active = [skill for skill in self.active if skill.turn == turn]
        return self.active

    def outside(self, turn: str, name: str, arguments: dict[str, Any]) -> list[str] | None:
        """Names of the restricting skills when the call is outside every list, else ``None``."""
        restricting = [skill for skill in self.current(turn) if skill.rules is not None]
        if not restricting or name in ALWAYS_INSIDE:
            return None
        for skill in restricting:
            if any(rule.matches(name, arguments) for rule in skill.rules or ()):
                return None
        return [skill.name for skill in restricting]
