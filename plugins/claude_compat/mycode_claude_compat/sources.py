"""Hook definitions in Claude Code's format, parsed and indexed by event and matcher.

``{"hooks": {EVENT: [{"matcher": REGEX, "hooks": [{"type": "command", "command", "timeout"}]}]}}``
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.project_files import ProjectFileRefused, read_config_text

EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "UserPromptExpansion",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "PreCompact",
    "PostCompact",
    "SessionEnd",
    "Notification",
)
DEFAULT_TIMEOUT = 600.0
"""A command hook's default (seconds), as in Claude Code since it went from 60 s to 10 minutes."""
PROMPT_TIMEOUT = 30.0
"""A prompt hook's default (seconds), as in Claude Code."""
_PLAIN = re.compile(r"^[A-Za-z0-9_|,-]+$")
_RULE = re.compile(r"^\s*([A-Za-z0-9_*|-]+)\s*(?:\((.*)\))?\s*$", re.S)


@dataclass(frozen=True)
class CommandHook:
    """One ``{"type": "command"}`` hook — or ``{"type": "http"}`` (``url`` set: the input is
    POSTed there, the answer read like a command's stdout), or ``{"type": "prompt"}``
    (``prompt`` set, also as ``command``: the run's model judges) — and where it came from."""

    event: str
    command: str
    timeout: float
    source: str
    """The file it was read from (shown in notices)."""
    layer: str
    """``user``, ``project``, ``local`` or ``plugin:NAME`` — the permission layer it decides as."""
    plugin_root: Path | None = None
    plugin_data: Path | None = None
    """``PLUGIN_DATA`` of a folder plugin's hook (its writable folder under ``MYCODE_HOME``)."""
    if_rule: str | None = None
    background: bool = False
    """``async``/``asyncRewake``: run without waiting; its output is not used, but for
    ``rewake``."""
    rewake: str | None = None
    """``asyncRewake``: the ``rewakeMessage`` (``""`` without one) that leads what the hook
    wrote to stderr when it exits 2, for the model; ``None`` for any other hook."""
    rewake_summary: str = ""
    """``rewakeSummary``: the line the user sees then."""
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    allowed_env: tuple[str, ...] = ()
    """``allowedEnvVars``: the variables ``$NAME`` in a header value may be replaced by."""
    prompt: str | None = None
    args: tuple[str, ...] | None = None
    """``args`` (Claude Code's exec form): ``command`` is started with these arguments, no
    shell between, ``${VAR}`` of the hook's environment filled in (:func:`.runner.argv`)."""

    @property
    def key(self) -> str:
        """What makes two hooks the same hook (run once for an event): the command, and for
        a plugin's hook its folder too — two plugins' ``${CLAUDE_PLUGIN_ROOT}/hooks/start.sh``
        are two different scripts (Claude Code expands the variable before comparing)."""
        if self.url:
            return f"http {self.url}"
        if self.prompt is not None:
            return f"prompt {self.prompt}"
        command = self.command if self.args is None else "\0".join([self.command, *self.args])
        if self.plugin_root is not None:
            return f"{self.plugin_root}\0{command}"
        return command

    @property
    def label(self) -> str:
        """A short name for messages: the command's (or URL's) first 60 characters."""
        command = " ".join((self.url or self.command).split())
        return repr(command if len(command) <= 60 else command[:57] + "...")


class Matcher:
    """A Claude Code matcher: missing/empty/``*`` matches all; names (letters, digits, ``_``
    and ``-``) joined by ``|`` or ``,`` match exactly, as Claude Code matches them now
    (``mcp__brave-search`` is that tool only, not each ``mcp__brave-search__*``; ``Bash,Edit``
    is either); else a regular expression searched in the name."""

    def __init__(self, raw: Any) -> None:
        text = str(raw).strip() if isinstance(raw, str) else ""
        self.any = text in ("", "*")
        self.names = frozenset(re.split(r"[|,]", text)) if _PLAIN.match(text) else None
        self.regex: re.Pattern[str] | None = None
        if not self.any and self.names is None:
            self.regex = re.compile(text)

    def matches(self, target: str) -> bool:
        """Whether ``target`` (a tool name, a source, a trigger...) is matched."""
        if self.any:
            return True
        if self.names is not None:
            return target in self.names
        assert self.regex is not None
        return self.regex.search(target) is not None


def if_matches(rule: str, tool: str, tool_input: dict[str, Any]) -> bool:
    """A hook's ``if`` condition in permission-rule syntax: ``Bash(git commit:*)``,
    ``Edit(src/**)``, ``Bash``."""
    match = _RULE.match(rule)
    if match is None:
        return False
    name, pattern = match.group(1), match.group(2)
    if not Matcher(name).matches(tool):
        return False
    if pattern is None or pattern.strip() in ("", "*"):
        return True
    pattern = pattern.strip()
    command = tool_input.get("command") if tool == "Bash" else None
    if command is not None:  # each command of the line: ``git add -A && git commit -m x``
        return any(_accepts(pattern, value) for value in subcommands(str(command)))
    if pattern.startswith("~"):  # ``Read(~/.ssh/**)``: the home folder, as in Claude Code
        pattern = os.path.expanduser(pattern)
    return _accepts(pattern, str(tool_input.get("file_path") or tool_input.get("path") or ""))


def _accepts(pattern: str, value: str) -> bool:
    value = value.strip()
    if pattern.endswith(":*"):
        prefix = pattern[:-2]
        return value == prefix or value.startswith(prefix + " ")
    return fnmatch.fnmatchcase(value, pattern) or fnmatch.fnmatchcase(
        value, "*/" + pattern.lstrip("/")
    )


_SEPARATORS = set("();|&\n")


def subcommands(command: str) -> list[str]:
    """The commands of a shell line, split at ``&&``, ``||``, ``;``, ``|``, ``&``, newlines
    and parentheses, as Claude Code matches an ``if`` rule against each of them (a
    ``Bash(git commit:*)`` hook fires for ``git add -A && git commit -m x``). The whole line
    when it is not valid shell (an open quote)."""
    import shlex  # a hook's ``if`` on a command only: not on every start-up

    lexer = shlex.shlex(command, posix=True, punctuation_chars="();<>|&\n")
    lexer.whitespace, lexer.whitespace_split = " \t\r", True
    try:
        tokens = list(lexer)
    except ValueError:
        return [command]
    found: list[str] = []
    current: list[str] = []
    for token in [*tokens, ";"]:
        if token and set(token) <= _SEPARATORS:
            if current:
                found.append(" ".join(current))
            current = []
        else:
            current.append(token)
    return found or [command]


@dataclass
class HookSet:
    """Every hook of a run, by event, with its matcher."""

    by_event: dict[str, list[tuple[Matcher, CommandHook]]] = field(default_factory=dict)

    def add(self, matcher: Matcher, hook: CommandHook) -> None:
        """Add one hook."""
        self.by_event.setdefault(hook.event, []).append((matcher, hook))

    def has(self, event: str) -> bool:
        """Whether any hook is configured for ``event``."""
        return bool(self.by_event.get(event))

    def matching(
        self, event: str, target: str = "", tool_input: dict[str, Any] | None = None
    ) -> list[CommandHook]:
        """The hooks of ``event`` whose matcher (and ``if``) accept ``target``."""
        entries = self.by_event.get(event)
        if not entries:
            return []
        out = []
        for matcher, hook in entries:
            if not matcher.matches(target):
                continue
            if hook.if_rule and not if_matches(hook.if_rule, target, tool_input or {}):
                continue
            out.append(hook)
        return out

    def count(self) -> int:
        """How many hooks there are."""
        return sum(len(entries) for entries in self.by_event.values())

    def summary(self) -> str:
        """``PreToolUse: 2, Stop: 1``."""
        return ", ".join(f"{event}: {len(items)}" for event, items in self.by_event.items())


def read_json_file(
    path: Path, workspace: Path | None = None
) -> tuple[dict[str, Any] | None, str | None]:
    """``(data, None)``, ``(None, None)`` when absent, or ``(None, problem)``.

    :param workspace: for a project file: never read through a symlink leading out of it."""
    if workspace is None and not path.is_file():
        return None, None
    try:
        text = read_config_text(path, workspace)
    except FileNotFoundError:
        return None, None
    except ProjectFileRefused as exc:
        return None, str(exc)
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {exc}"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return None, f"{path} is not valid JSON: {exc}"
    if not isinstance(data, dict):
        return None, f"{path} must hold a JSON object"
    return data, None


def parse_hooks(
    data: Any,
    *,
    source: str,
    layer: str,
    plugin_root: Path | None = None,
    plugin_data: Path | None = None,
    into: HookSet,
) -> list[str]:
    """Add the hooks of one ``{"hooks": {...}}`` object to ``into``; return the problems."""
    problems: list[str] = []
    table = data.get("hooks") if isinstance(data, dict) else None
    if table is None:
        return problems
    if not isinstance(table, dict):
        return [f"{source}: 'hooks' must be an object of events"]
    for event, groups in table.items():
        if event not in EVENTS:
            problems.append(f"{source}: hook event {event!r} is not supported; ignored")
            continue
        if not isinstance(groups, list):
            problems.append(f"{source}: hooks.{event} must be a list; ignored")
            continue
        for group in groups:
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                problems.append(f"{source}: an entry of hooks.{event} has no 'hooks' list")
                continue
            try:
                matcher = Matcher(group.get("matcher"))
            except re.error as exc:
                problems.append(f"{source}: matcher {group.get('matcher')!r} is invalid: {exc}")
                continue
            for entry in group["hooks"]:
                problem = _add_entry(
                    entry, event, matcher, source, layer, (plugin_root, plugin_data), into
                )
                if problem:
                    problems.append(problem)
    return problems


def _add_entry(
    entry: Any,
    event: str,
    matcher: Matcher,
    source: str,
    layer: str,
    plugin: tuple[Path | None, Path | None],
    into: HookSet,
) -> str | None:
    if not isinstance(entry, dict):
        return f"{source}: a hook of {event} is not an object"
    kind = entry.get("type", "command")
    if kind not in ("command", "http", "prompt"):
        return f"{source}: {event} hook of type {kind!r} is not supported"
    command = entry.get(kind) if kind in ("command", "prompt") else ""
    url = entry.get("url") if kind == "http" else None
    if kind != "http" and (not isinstance(command, str) or not command.strip()):
        return f"{source}: a {event} hook has no {kind!r}"
    if kind == "http" and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        return f"{source}: a {event} http hook has no http(s) 'url'"
    raw_args = entry.get("args") if kind == "command" else None
    if raw_args is not None and not (
        isinstance(raw_args, list) and all(isinstance(a, str) for a in raw_args)
    ):
        return f"{source}: a {event} hook's 'args' must be a list of strings"
    raw_headers, raw_allowed = entry.get("headers"), entry.get("allowedEnvVars")
    headers: dict[Any, Any] = raw_headers if isinstance(raw_headers, dict) else {}
    allowed: list[Any] = raw_allowed if isinstance(raw_allowed, list) else []
    default = PROMPT_TIMEOUT if kind == "prompt" else DEFAULT_TIMEOUT
    raw_timeout = entry.get("timeout", default)
    timeout = (
        float(raw_timeout) if isinstance(raw_timeout, int | float) and raw_timeout > 0 else default
    )
    rule = entry.get("if")
    into.add(
        matcher,
        CommandHook(
            event=event,
            command=str(command or ""),
            timeout=timeout,
            source=source,
            layer=layer,
            plugin_root=plugin[0],
            plugin_data=plugin[1],
            if_rule=rule if isinstance(rule, str) and rule.strip() else None,
            background=bool(entry.get("async") or entry.get("asyncRewake")),
            rewake=str(entry.get("rewakeMessage") or "") if entry.get("asyncRewake") else None,
            rewake_summary=str(entry.get("rewakeSummary") or ""),
            url=url,
            headers=tuple((str(k), str(v)) for k, v in headers.items()),
            allowed_env=tuple(str(name) for name in allowed),
            prompt=str(command) if kind == "prompt" else None,
            args=tuple(raw_args) if raw_args is not None else None,
        ),
    )
    return None
