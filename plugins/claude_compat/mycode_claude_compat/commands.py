"""Claude Code slash commands: ``commands/*.md`` with optional front matter (``description``,
``argument-hint``, ``allowed-tools``, ``arguments``); the body is the prompt, with ``$ARGUMENTS``,
``$N`` and named arguments replaced by the command's arguments; its ``!`cmd``` marks are
run by the core's ``api.run_inline_commands``."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.api import fill_arguments, split_rules

_FIELD = re.compile(r"^([A-Za-z_][\w-]*):(?:[ \t]+(.*)|[ \t]*)$")


@dataclass
class CommandFile:
    """One parsed command file."""

    name: str
    path: Path
    body: str
    description: str = ""
    argument_hint: str = ""
    arguments: tuple[str, ...] = ()
    """Names of the arguments (front matter ``arguments``, a list or space-separated words)."""
    allowed_tools: list[str] = field(default_factory=list)


def markdown_files(folder: Path) -> list[Path]:
    """``*.md`` below ``folder``, subfolders included (Claude Code's namespaced commands,
    ``commands/review/security.md``), no symlinked folder followed."""
    found = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        dirs.sort()
        found += [Path(current) / name for name in sorted(files) if name.endswith(".md")]
    return found


def split_front_matter(text: str) -> tuple[dict[str, Any], str, str | None]:
    """``(front matter, body, problem)``; a file without front matter is all body."""
    if not text.startswith("---"):
        return {}, text, None
    lines = text.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            import yaml

            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            try:
                data = yaml.safe_load(raw) or {}
            except yaml.YAMLError as exc:
                data = _lenient_fields(raw)
                if data is None:
                    first = str(exc).splitlines()[0] if str(exc) else "invalid YAML"
                    return {}, body, f"invalid front matter: {first}"
            if not isinstance(data, dict):
                return {}, body, "front matter is not a mapping"
            return data, body, None
    return {}, text, None


def _lenient_fields(raw: str) -> dict[str, Any] | None:
    """Front matter that is not strict YAML, read field by field as Claude Code does: a field
    whose value YAML cannot read is its text. The documented ``argument-hint: [pr-number]
    [priority]`` is such a field (two flow lists in a row); one field must not cost the file
    its ``description`` and ``allowed-tools``. ``None`` when the text is not ``key: value``
    lines (with indented continuation lines) at all."""
    import yaml

    chunks: dict[str, list[str]] = {}
    current: str | None = None
    for line in raw.splitlines():
        match = _FIELD.match(line)
        if match is not None:
            current = match.group(1)
            chunks[current] = [match.group(2) or ""]
        elif current is not None and (not line.strip() or line[:1] in (" ", "\t", "-")):
            chunks[current].append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            return None
    data: dict[str, Any] = {}
    for key, lines in chunks.items():
        try:
            value = yaml.safe_load(f"{key}: " + "\n".join(lines))
            data[key] = value[key] if isinstance(value, dict) else "\n".join(lines).strip()
        except yaml.YAMLError:
            data[key] = " ".join(part.strip() for part in lines if part.strip())
    return data or None


def _text(value: Any) -> str:
    """A display field: ``argument-hint: [name]`` is a YAML list, shown as written."""
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return str(value) if value else ""


def _tools(value: Any, rules: bool = True) -> list[str]:
    """A list field; a string is split at spaces, or also at commas outside parentheses."""
    if isinstance(value, str):
        return split_rules(value) if rules else value.split()
    if isinstance(value, list):
        return [str(item) for item in value]
    return []


def read_command(path: Path) -> tuple[CommandFile | None, str | None]:
    """Parse one command file; ``(None, problem)`` when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {path}: {exc}"
    return parse_command(path, text)


def parse_command(path: Path, text: str) -> tuple[CommandFile, str | None]:
    """The command in ``text`` (the file ``path``), and a problem of its front matter."""
    meta, body, problem = split_front_matter(text)
    description = meta.get("description")
    hint = meta.get("argument-hint")
    command = CommandFile(
        name=path.stem,
        path=path,
        body=body.strip(),
        description=_text(description),
        argument_hint=_text(hint),
        arguments=tuple(_tools(meta.get("arguments"), rules=False)),
        allowed_tools=_tools(meta.get("allowed-tools")),
    )
    return command, (f"{path}: {problem}" if problem else None)


def expand(body: str, arguments: str, names: tuple[str, ...] = ()) -> str:
    """The prompt: ``$ARGUMENTS`` is the whole argument string, ``$ARGUMENTS[N]``/``$N`` one
    argument and ``$name`` one named in the front matter's ``arguments``, as Claude Code fills
    them in (:func:`mycode_core.api.fill_arguments`: a command using neither ``$0`` nor
    ``$ARGUMENTS[N]`` counts ``$1`` as the first). Without any placeholder, the arguments are
    appended (as Claude Code does)."""
    text, filled = fill_arguments(body, arguments, names)
    if not filled and arguments.strip():
        text = f"{text}\n\nARGUMENTS: {arguments.strip()}"
    return text
