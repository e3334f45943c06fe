"""Agent profiles: Markdown files with YAML front matter, as Claude Code writes them.

```markdown
---
name: reviewer
description: Reviews a change for bugs. Use after editing code.
tools: Read, Grep, Glob        # or a YAML list; omitted: every tool of the parent
model: inherit                 # sonnet/opus/haiku/inherit: the parent's model
---
You are a careful reviewer...   (the body: the child's instructions)
```

Claude Code's tool names are mapped to mycode's (``Read`` → ``read_file``, ``Bash`` →
``run_command``, ...); other fields (``color``...) are ignored.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.api import mycode_tool_name
from mycode_core.project_files import ProjectFileRefused, link_refusal, read_project_bytes

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*\r?$\n?", re.S | re.M)
_FIELD_LINE = re.compile(r"^([A-Za-z_][\w-]*)\s*:(?:\s+|$)(.*)$")
KNOWN_FIELDS = frozenset(
    {
        "name",
        "description",
        "tools",
        "disallowedTools",
        "model",
        "color",
        "permissionMode",
        "skills",
        "hooks",
        "mcpServers",
        "memory",
        "maxTurns",
    }
)
"""Front-matter fields of Claude Code's agent files (``name``, ``description``, ``tools``,
``disallowedTools``, ``model`` and ``maxTurns`` mean something here)."""
MAX_PROFILE_BYTES = 256_000


class ProfileError(ValueError):
    """A profile file that cannot be read; the message names the file and the problem."""


@dataclass
class Profile:
    """One agent profile.

    ``tools`` is the exact allowlist as written (``None``: every tool of the parent);
    ``read_only_mcp`` adds the read-only MCP tools (the built-in ``explore``).
    """

    name: str
    description: str
    instructions: str = ""
    tools: list[str] | None = None
    model: str | None = None
    source: str = "built-in"
    read_only_mcp: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    plugin: str | None = None
    """The plugin folder it came from: it also answers to ``plugin:name`` (Claude Code's
    name for a plugin's agent)."""
    disallowed: list[str] | None = None
    """Claude Code's ``disallowedTools``: removed from what ``tools`` gives (a specifier such
    as ``Bash(rm:*)`` removes the whole tool)."""
    project: bool = False
    """Read from the workspace's own folders (an untrusted workspace's may not pick a model)."""
    max_turns: int | None = None
    """Claude Code's ``maxTurns``: the child's step cap, if lower than ``[subagents]``'s."""

    def tool_names(self) -> list[str] | None:
        """The allowlist in mycode's tool names (``None``: all tools)."""
        return None if self.tools is None else _mycode_names(self.tools)

    def disallowed_names(self) -> list[str]:
        """The denylist (``disallowedTools``) in mycode's tool names."""
        return _mycode_names(self.disallowed or [])


def _mycode_names(raw_names: list[str]) -> list[str]:
    names: list[str] = []
    for raw in raw_names:
        base = raw.split("(", 1)[0].strip()  # `Bash(git:*)` → Bash
        name = mycode_tool_name(base)
        if name and name not in names:
            names.append(name)
    return names


EXPLORE = Profile(
    name="explore",
    description=("Read-only: finds and reads code, answers questions."),
    instructions=(
        "You are an exploration agent. Investigate with the read-only tools you have and "
        "answer the question you were given. Cite file paths and line numbers. You cannot "
        "change files or run commands."
    ),
    tools=["read_file", "glob", "grep"],
    read_only_mcp=True,
)
GENERAL = Profile(
    name="general",
    description=("Multi-step work: investigate, edit, test."),
    instructions="",
)
BUILTIN_PROFILES = (EXPLORE, GENERAL)


def _split_names(text: str) -> list[str]:
    """``Read, Agent(a, b), Bash(git:*)`` → the names, commas inside parentheses kept."""
    items, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif char == "," and depth == 0:
            items.append(text[start:index])
            start = index + 1
    items.append(text[start:])
    return [item.strip() for item in items]


def _tools_field(value: Any, path: Path, key: str = "tools") -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        items = _split_names(value)
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = [item.strip() for item in value]
    else:
        raise ProfileError(f"{path}: `{key}` must be a comma-separated string or a list of names")
    items = [item for item in items if item]
    if items == ["*"]:
        return None
    return items


def _scalar(value: str) -> Any:
    """A lenient field value: a flow list (``["Read", "Grep"]``) or a quoted string is read as
    YAML (``YAMLError`` when broken), anything else is the text as written."""
    import yaml

    text = value.strip()
    if text[:1] in ("[", '"', "'"):
        return yaml.safe_load(text)  # a broken one makes the whole front matter broken
    return text


def _lenient_front_matter(text: str) -> dict[str, Any] | None:
    """Claude Code's files often are not strict YAML: a ``description`` runs over several
    lines holding ``<example>`` blocks with unquoted colons. Read them as Claude Code does:
    a line starting with a known field name (``name:``, ``tools:``...) starts that field, any
    other line continues the field before it."""
    data: dict[str, str] = {}
    current: str | None = None
    for line in text.splitlines():
        match = _FIELD_LINE.match(line)
        if match is not None and match.group(1) in KNOWN_FIELDS:
            current = match.group(1)
            data[current] = match.group(2)
        elif current is not None:
            data[current] += "\n" + line
        elif line.strip() and not line.lstrip().startswith("#"):
            return None
    import yaml

    try:
        return {key: _scalar(value) for key, value in data.items()} or None
    except yaml.YAMLError:
        return None


def parse_front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """``(fields, body)`` of a Markdown file; :class:`ProfileError` when it has none or it
    is broken."""
    import yaml

    match = _FRONT_MATTER.match(text)
    if match is None:
        raise ProfileError(f"{path}: no front matter (a `---` block with name and description)")
    raw, body = match.group(1), text[match.end() :]
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        data = _lenient_front_matter(raw)
        if data is None:
            where = getattr(exc, "problem_mark", None)
            line = f" (line {where.line + 2})" if where is not None else ""
            problem = getattr(exc, "problem", None) or "invalid YAML"
            raise ProfileError(f"{path}: broken front matter{line}: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ProfileError(f"{path}: the front matter must be `key: value` fields")
    return data, body


def parse_profile(path: Path, workspace: Path | None = None) -> Profile:
    """Read one profile file; :class:`ProfileError` with a readable message when it is bad.

    :param workspace: for a project profile: read without following a symlink out of it."""
    try:
        if workspace is not None:
            raw = read_project_bytes(workspace, path, limit=MAX_PROFILE_BYTES + 1)
            if len(raw) > MAX_PROFILE_BYTES:
                raise ProfileError(f"{path}: larger than {MAX_PROFILE_BYTES} bytes")
            text = raw.decode("utf-8", errors="replace")
        else:
            if not path.is_file() or path.stat().st_size > MAX_PROFILE_BYTES:
                raise ProfileError(f"{path}: not a file of at most {MAX_PROFILE_BYTES} bytes")
            text = path.read_text(encoding="utf-8", errors="replace")
    except ProjectFileRefused as exc:
        raise ProfileError(str(exc)) from None
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    data, body = parse_front_matter(text, path)
    name = data.get("name", path.stem)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][\w.-]{0,63}", name.strip()):
        raise ProfileError(f"{path}: `name` must be a short name (letters, digits, - _ .)")
    description = data.get("description")
    if description is None:
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        description = first[:200]
    if not isinstance(description, str):
        raise ProfileError(f"{path}: `description` must be text")
    model = data.get("model")
    if model is not None and not isinstance(model, str):
        raise ProfileError(f"{path}: `model` must be a model name")
    turns = data.get("maxTurns")
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 1):
        raise ProfileError(f"{path}: `maxTurns` must be a whole number of steps, 1 or more")
    known = {"name", "description", "tools", "disallowedTools", "model", "maxTurns"}
    return Profile(
        name=name.strip(),
        description=" ".join(description.split()),
        instructions=body.strip(),
        tools=_tools_field(data.get("tools"), path),
        disallowed=_tools_field(data.get("disallowedTools"), path, "disallowedTools"),
        model=model.strip() if isinstance(model, str) else None,
        max_turns=turns,
        source=str(path),
        extra={key: value for key, value in data.items() if key not in known},
    )


def profile_files(path: Path) -> list[Path]:
    """A profile file, or the ``*.md`` files of a folder (sorted; not recursive)."""
    if path.is_file():
        return [path]
    if path.is_dir():  # symlinks too: reading them decides (issue 23 M1)
        return sorted(p for p in path.glob("*.md") if p.is_file() or p.is_symlink())
    return []


def profile_folders(workspace: Path, home: Path) -> list[Path]:
    """The folders read, lowest precedence first: user, then Claude Code's, then mycode's."""
    return [home / "agents", workspace / ".claude" / "agents", workspace / ".mycode" / "agents"]


def load_profiles(
    sources: Iterable[Path],
    notice: Callable[[str], None],
    workspace: Path | None = None,
    plugins: dict[Path, str] | None = None,
    filled: dict[Path, dict[str, str]] | None = None,
) -> dict[str, Profile]:
    """Built-ins, then each source in order (a later profile of the same name wins); a bad
    file costs one notice and the others still load. Files under ``workspace`` are never read
    through a symlink leading out of it (one notice each). ``filled`` gives a source's
    placeholders (``${CLAUDE_PLUGIN_ROOT}``...), replaced in its profiles' instructions.

    ``plugins`` names the plugin folder a source came from: its profiles answer to
    ``plugin:name`` too, and never replace another profile (:func:`_place`)."""
    root = Path(os.path.abspath(workspace)) if workspace is not None else None
    profiles: dict[str, Profile] = {profile.name: profile for profile in BUILTIN_PROFILES}
    seen: set[Path] = set()
    for source in sources:
        where = Path(os.path.abspath(source))
        inside = root is not None and (root == where or root in where.parents)
        if inside and root is not None and (refused := link_refusal(root, source)) is not None:
            notice(f"agent profiles skipped: {refused}")
            continue
        for path in profile_files(source):
            key = path.resolve()
            if key in seen:
                continue
            seen.add(key)
            try:
                profile = parse_profile(path, root if inside else None)
            except ProfileError as exc:
                notice(f"agent profile skipped: {exc}")
                continue
            profile.project = inside
            for placeholder, value in (filled or {}).get(source, {}).items():
                profile.instructions = profile.instructions.replace(placeholder, value)
            profile.plugin = (plugins or {}).get(source)
            _place(profiles, profile)
    return profiles


def _place(profiles: dict[str, Profile], profile: Profile) -> None:
    """Add ``profile`` under the name it answers to, as Claude Code names a plugin's agent
    (``plugin:name``): a plugin folder's profile takes its bare name only while no other
    profile holds it — it never replaces a built-in, package, user or project profile, nor
    another plugin's, and is listed as ``plugin:name`` instead; any other profile replaces the
    one of its name (later wins), and a plugin's profile listed under that name moves to
    ``plugin:name``, so it stays reachable."""
    held = profiles.get(profile.name)
    if held is not None and profile.plugin is not None and held.plugin != profile.plugin:
        profile.name = f"{profile.plugin}:{profile.name}"
    elif held is not None and held.plugin is not None and profile.plugin is None:
        held.name = f"{held.plugin}:{held.name}"
        profiles[held.name] = held
    profiles[profile.name] = profile
