"""Permission rules from the config layers, Claude Code style.

A rule is ``tool`` or ``tool(spec)``:

* ``run_command(git push:*)`` — the command starts with ``git push`` (a whole word:
  not ``git pushy``);
  ``run_command(make *)`` — ``*`` matches anything; ``run_command(npm test)`` — exactly.
* ``edit_file(src/**)``, ``read_file(.env)`` — gitignore-style patterns on the
  workspace-relative path. ``edit_file`` rules also cover ``write_file``; ``read_file`` rules
  also cover ``grep`` and ``glob`` (their ``path``, and a denied file is left out of what they
  find: :func:`read_denied`).
* ``mcp__server`` covers every tool of that server, and its resources read through the MCP
  bridge's ``read_mcp_resource`` / ``list_mcp_resources``; tool names may use ``*``.
* Claude Code's names work too: ``Bash``, ``Read``, ``Edit``, ``Write``, ``Glob``, ``Grep``.

Rules come from ``[permissions] allow/deny/ask`` of each layer (``user``, ``project``,
``local``, ``env``, ``cli``); "allow for this session" answers add ``session`` rules.
"""

from __future__ import annotations

import contextlib
import fnmatch
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

KINDS = ("deny", "ask", "allow")
ALIASES = {
    "bash": "run_command",
    "read": "read_file",
    "edit": "edit_file",
    "multiedit": "edit_file",
    "write": "write_file",
    "glob": "glob",
    "grep": "grep",
    "todowrite": "todo_write",
}
COVERS = {"edit_file": {"write_file"}, "read_file": {"grep", "glob"}}
LAYER_FILES = {
    "user": "$MYCODE_HOME/config.toml",
    "project": ".mycode/config.toml",
    "local": ".mycode/config.local.toml",
    "env": "the environment",
    "cli": "the command line",
    "session": "this session's answers",
    "config": "the settings",
}
_RULE = re.compile(r"^\s*([^\s()]+)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True)
class Rule:
    """One permission rule and where it came from."""

    kind: str
    text: str
    tool: str
    spec: str | None
    layer: str

    def applies_to(self, tool_name: str) -> bool:
        """Whether this rule is about ``tool_name``."""
        if self.tool == tool_name or tool_name in COVERS.get(self.tool, ()):
            return True
        if self.tool.startswith("mcp__") and tool_name.startswith(self.tool + "__"):
            return True
        return "*" in self.tool and fnmatch.fnmatchcase(tool_name, self.tool)


def parse_rule(text: str, kind: str, layer: str) -> Rule | None:
    """Parse ``tool(spec)``; ``None`` if it is not a rule."""
    match = _RULE.match(str(text))
    if not match:
        return None
    tool = match.group(1)
    tool = ALIASES.get(tool.lower(), tool) if tool[:1].isupper() else tool
    spec = match.group(2)
    if spec is not None:
        spec = spec.strip()
        if spec in ("", "*", "**"):
            spec = None
    return Rule(kind, str(text).strip(), tool, spec, layer)


def collect(settings: Any, grants: set[str] | None = None) -> list[Rule]:
    """Every rule of every layer (lowest precedence first), then the session grants."""
    rules: list[Rule] = []
    seen: set[tuple[str, str]] = set()
    layers = list(getattr(settings, "layers", None) or [])
    for layer, raw in layers:
        perms = raw.get("permissions") if isinstance(raw, dict) else None
        if not isinstance(perms, dict):
            continue
        for kind in KINDS:
            for text in perms.get(kind) or []:
                rule = parse_rule(str(text), kind, layer)
                if rule is not None:
                    rules.append(rule)
                    seen.add((kind, rule.text))
    merged = getattr(settings, "permissions", None)
    for kind in KINDS:
        for text in getattr(merged, kind, None) or []:
            rule = parse_rule(str(text), kind, "config")
            if rule is not None and (kind, rule.text) not in seen:
                rules.append(rule)
    for text in sorted(grants or ()):
        rule = parse_rule(text, "allow", "session")
        if rule is not None:
            rules.append(rule)
    return rules


def command_matches(spec: str | None, command: str) -> bool:
    """Does a ``run_command`` rule spec match one (normalised) command?"""
    if spec is None:
        return True
    command = " ".join(command.split())
    spec = " ".join(spec.split())
    if spec.endswith(":*"):
        prefix = spec[:-2].rstrip()
        if not command.startswith(prefix):
            return False
        rest = command[len(prefix) :]
        return not rest or not (prefix[-1:].isalnum() and rest[0].isalnum())
    if "*" in spec:
        return glob_match(spec, command)
    return command == spec


def may_match(spec: str | None, prefix: str) -> bool:
    """Could a command that begins with the literal words ``prefix`` (the rest unknown) match
    the rule ``spec``? ``""`` (nothing known) could match any rule."""
    if spec is None:
        return True
    literal = spec[:-2] if spec.endswith(":*") else spec
    literal = literal.split("*", 1)[0]
    known, wanted = prefix.split(), literal.split()
    for index, (have, want) in enumerate(zip(known, wanted, strict=False)):
        last = index == len(wanted) - 1 and "*" in spec[len(literal) - 1 :]
        if have != want and not (last and have.startswith(want)):
            return False
    return True


def glob_match(spec: str, text: str) -> bool:
    """``*`` matches any run of characters; linear in ``len(text)`` per piece (no regex)."""
    pieces = spec.split("*")
    first, last, middle = pieces[0], pieces[-1], pieces[1:-1]
    if len(text) < len(first) + len(last) or not text.startswith(first):
        return False
    if not text.endswith(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for piece in middle:
        found = text.find(piece, pos, end)
        if found < 0:
            return False
        pos = found + len(piece)
    return True


def path_matches(spec: str | None, rel: str) -> bool:
    """Does a file rule spec (gitignore style) match a workspace-relative path?"""
    if spec is None:
        return True
    import pathspec

    pattern = spec[2:] if spec.startswith("./") else spec
    try:
        matcher = pathspec.GitIgnoreSpec.from_lines([pattern])
    except (ValueError, TypeError):
        return False
    return bool(matcher.match_file(rel))


def read_denied(settings: Any, tool_name: str) -> Callable[[str], bool] | None:
    """Whether a ``deny`` rule with a path (``read_file(**/.env)``, Claude Code's
    ``Read(./.env)``) keeps ``tool_name`` (``grep``, ``glob``) from a workspace-relative file
    it came across in a folder: as Claude Code leaves such files out of Grep's and Glob's
    results, a denied ``.env`` is not shown by a search of the whole workspace. ``None`` when
    no such rule applies to the tool."""
    import pathspec

    matchers = []
    for rule in collect(settings):
        if rule.kind == "deny" and rule.spec is not None and rule.applies_to(tool_name):
            pattern = rule.spec[2:] if rule.spec.startswith("./") else rule.spec
            with contextlib.suppress(ValueError, TypeError):
                matchers.append(pathspec.GitIgnoreSpec.from_lines([pattern]))
    if not matchers:
        return None
    return lambda rel: any(matcher.match_file(rel) for matcher in matchers)


def first_match(
    rules: list[Rule], kind: str, tool_name: str, subject: str | None, matcher: Any
) -> Rule | None:
    """The matching rule of ``kind`` from the highest-precedence layer, or ``None``."""
    for rule in reversed(rules):
        if rule.kind != kind or not rule.applies_to(tool_name):
            continue
        if rule.spec is None or (subject is not None and matcher(rule.spec, subject)):
            return rule
    return None


def where(layer: str | None) -> str:
    """A human name for a config layer (``.mycode/config.toml`` for ``project``)."""
    return LAYER_FILES.get(layer or "", layer or "built-in defaults")
