"""Reading one ``SKILL.md``: bounded read, YAML front matter, agentskills.io validation.

The rules follow the Agent Skills specification (agentskills.io/specification):

* ``name`` — required (a skill without one is listed under its folder's name when that is a
  valid name, with a warning, as Claude Code does); 1-64 characters; lowercase letters,
  digits and hyphens; no leading, trailing or doubled hyphen; equal to the name of the folder
  holding ``SKILL.md`` — a valid name that differs from its folder's is loaded anyway, under
  its own name, with a warning (as agentskills.io's guide for clients says: "warn, load
  anyway").
* ``description`` — required, non-empty, at most 1024 characters.
* ``license`` (string), ``compatibility`` (string, at most 500 characters), ``metadata`` (a
  mapping), ``allowed-tools`` (a space-separated string or a list of strings) — optional.

Other front-matter keys (``version``, Claude Code's ``argument-hint``...) are kept in
``extra`` and otherwise ignored: clients extend the format and the spec leaves them alone.
A skill that breaks a rule is a :class:`SkillProblem` naming the rule; it never raises.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from typing import Any

from mycode_core.api import split_rules
from mycode_skills.skill import (
    HEAD_BYTES,
    MAX_BODY_BYTES,
    MAX_COMPATIBILITY,
    MAX_DESCRIPTION,
    MAX_NAME,
    SKILL_FILE,
    SKILL_FILE_LOWER,
    Skill,
    SkillProblem,
    read_body,
    skill_file_name,
    split_front_matter,
)

__all__ = [
    "HEAD_BYTES",
    "MAX_BODY_BYTES",
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "SKILL_FILE",
    "SKILL_FILE_LOWER",
    "Skill",
    "SkillProblem",
    "first_paragraph",
    "join_surrogate_pairs",
    "name_problem",
    "parse_skill",
    "read_body",
    "skill_file_name",
    "split_front_matter",
    "validate",
    "yaml12_loader",
]


def _read_head(path: Path) -> tuple[bytes, int]:
    """The first :data:`HEAD_BYTES` of ``path`` and its full size."""
    with path.open("rb") as fh:
        size = fh.seek(0, 2)
        fh.seek(0)
        return fh.read(HEAD_BYTES), size


def name_problem(name: str, folder_name: str) -> tuple[str, str] | None:
    """``(rule, message)`` if ``name`` breaks a naming rule of the spec, else ``None``."""
    normal = unicodedata.normalize("NFKC", name)
    if len(normal) > MAX_NAME:
        return "name-length", f"name is {len(normal)} characters long (at most {MAX_NAME})"
    bad = sorted({ch for ch in normal if not (ch == "-" or (ch.isalnum() and not ch.isupper()))})
    if bad:
        shown = ", ".join(repr(ch) for ch in bad)
        return (
            "name-characters",
            f"name {name!r} may only hold lowercase letters, digits and hyphens (found {shown})",
        )
    if normal.startswith("-") or normal.endswith("-") or "--" in normal:
        return (
            "name-hyphens",
            f"name {name!r} must not start or end with a hyphen or hold two in a row",
        )
    if normal != unicodedata.normalize("NFKC", folder_name):
        return (
            "name-folder",
            f"name {name!r} differs from its folder's name {folder_name!r}",
        )
    return None


def _tools_field(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, str):
        return tuple(split_rules(value))
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(item.strip() for item in value if item.strip())
    return None


_SURROGATE_PAIR = re.compile(
    r"(?<!\\)((?:\\\\)*)\\u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})"
)


def join_surrogate_pairs(text: str) -> str:
    """``"\\uD83D\\uDD2D"`` (JSON's way to write 🔭, used in skills' JSON-style ``metadata``)
    as the one YAML escape ``"\\U0001F52D"``: libyaml refuses a surrogate escape, and the
    pure-Python loader would keep two lone surrogates. Only a high-low pair of escapes is
    rewritten (not one after an escaped backslash); anything else is left to YAML."""

    def joined(match: re.Match[str]) -> str:
        high, low = int(match.group(2), 16), int(match.group(3), 16)
        code = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
        return f"{match.group(1)}\\U{code:08X}"

    return _SURROGATE_PAIR.sub(joined, text) if "\\u" in text else text


_PLAIN_LINE = re.compile(r"^([A-Za-z0-9_-]+):[ \t]+(\S.*?)[ \t]*$")


def _load_repaired(text: str, loader: Any) -> Any:
    """The front matter read again after quoting the one-line values YAML refuses, or ``None``.

    Skills written for other clients often hold technically invalid YAML their parsers accept:
    ``description: Use when: the user asks`` (a colon in a plain value) or Claude Code's
    ``argument-hint: [file] [mode]``. As agentskills.io's guide for clients suggests, such a
    top-level value on one line is read as a literal string (a block scalar) and the whole
    front matter parsed again; ``metadata`` is never rewritten (it must stay a mapping)."""
    import yaml

    lines = text.splitlines()
    changed = False
    for index, line in enumerate(lines):
        match = _PLAIN_LINE.match(line)
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if match is None or match.group(1) == "metadata" or following[:1] in (" ", "\t"):
            continue  # not a one-line top-level value
        key, value = match.groups()
        if value[0] in "\"'|>":
            continue
        try:
            yaml.load(f"{key}: {value}\n", Loader=loader)  # noqa: S506 - a safe loader
            continue
        except yaml.YAMLError:
            lines[index] = f"{key}: |-\n  {value}"
            changed = True
    if not changed:
        return None
    try:
        return yaml.load("\n".join(lines) + "\n", Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return None


_LOADER: Any = None
_BOOL = "tag:yaml.org,2002:bool"


def yaml12_loader() -> Any:
    """PyYAML's safe loader (libyaml when built with it) reading booleans as YAML 1.2 does:
    only ``true``/``false``. Claude Code's and Codex's YAML readers are 1.2: for them
    ``name: yes`` (a real skill's name) or ``metadata: {beta: on}`` are text, not booleans."""
    global _LOADER
    if _LOADER is None:
        import yaml

        base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        loader: Any = type("Yaml12SafeLoader", (base,), {})
        loader.yaml_implicit_resolvers = {
            first: [(tag, rx) for tag, rx in resolvers if tag != _BOOL]
            for first, resolvers in base.yaml_implicit_resolvers.items()
        }
        loader.add_implicit_resolver(
            _BOOL, re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
        )
        _LOADER = loader
    return _LOADER


def parse_skill(folder: Path, source: str, folder_names: bool = False) -> Skill | SkillProblem:
    """Read and validate the ``SKILL.md`` in ``folder``; never raises.

    With ``folder_names`` a ``name`` that breaks a naming rule (Claude Code plugins use
    display names such as ``Plugin Settings``) is replaced by the folder's name when that one
    is valid; the skill records the broken rule in ``renamed``.
    """
    import yaml

    file_name = skill_file_name(str(folder)) or SKILL_FILE
    path = folder / file_name
    try:
        head, size = _read_head(path)
    except OSError as exc:
        return SkillProblem(folder, "unreadable", f"cannot read {file_name}: {exc.strerror}")
    text = head.decode("utf-8", errors="replace")
    split = split_front_matter(text)
    if split is None:
        if not text.lstrip("\ufeff").startswith("---"):
            return _without_front_matter(text, folder, source, folder_names, file_name)
        if size > HEAD_BYTES:
            message = f"the front matter does not end within the first {HEAD_BYTES // 1024} KiB"
        else:
            message = "the '---' front-matter block is never closed by a '---' line"
        return SkillProblem(folder, "frontmatter", message)
    loader = yaml12_loader()
    front = join_surrogate_pairs(split[0])
    try:
        data = yaml.load(front, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        data = _load_repaired(front, loader)
        if data is None:
            where = getattr(exc, "problem_mark", None)
            line = f" (line {where.line + 2})" if where is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            return SkillProblem(folder, "yaml", f"broken YAML front matter{line}: {problem}")
    if not isinstance(data, dict):
        return SkillProblem(folder, "frontmatter", "the front matter is not a YAML mapping")
    return validate(data, folder, source, folder_names, file_name=file_name)


NO_FRONT_MATTER = (
    "no front matter: listed under its folder's name, described by the first paragraph of "
    "its text [rule frontmatter]"
)


def first_paragraph(text: str) -> str:
    """The first paragraph of Markdown ``text`` on one line: headings, fenced code and HTML
    comments are passed over (the first heading's text when there is no paragraph at all)."""
    heading = ""
    lines: list[str] = []
    fenced = False
    for raw in text.lstrip("\ufeff").splitlines():
        line = raw.strip()
        if line.startswith(("```", "~~~")):
            fenced = not fenced
            if lines:
                break
            continue
        if fenced or line.startswith("<!--"):
            continue
        if not line or re.match(r"#{1,6}(\s|$)", line):
            if lines:
                break
            heading = heading or line.lstrip("#").strip()
            continue
        lines.append(line)
    return " ".join(" ".join(lines).split()) or heading


def _without_front_matter(
    text: str, folder: Path, source: str, folder_names: bool, file_name: str
) -> Skill | SkillProblem:
    """A ``SKILL.md`` with no front matter, read as Claude Code reads it: the folder's name
    is the skill's, the first paragraph of the text its description; loaded with a warning
    (:data:`NO_FRONT_MATTER`, which an Agent Plugins folder turns into a refusal)."""
    description = first_paragraph(text)
    if not description:
        return SkillProblem(
            folder,
            "frontmatter",
            f"{file_name} has no front matter and no text to describe the skill",
        )
    data = {"name": folder.name, "description": description}
    parsed = validate(data, folder, source, folder_names, file_name=file_name)
    if isinstance(parsed, SkillProblem):
        return replace(parsed, message=f"{parsed.message} ({file_name} has no front matter)")
    return replace(parsed, warnings=(NO_FRONT_MATTER, *parsed.warnings))


def validate(
    data: dict[str, Any],
    folder: Path,
    source: str,
    folder_names: bool = False,
    *,
    file_name: str = SKILL_FILE,
) -> Skill | SkillProblem:
    """Check parsed front matter against the spec; a :class:`Skill` or the first problem."""
    name = data.get("name")
    renamed = mismatch = None
    if name is None or (isinstance(name, str) and not name.strip()):
        # Claude Code falls back to the folder's name (skills published that way load there)
        missing = "the 'name' field is missing"
        if name_problem(folder.name, folder.name) is not None:
            message = f"{missing}, and the folder's name {folder.name!r} is not a valid name"
            return SkillProblem(folder, "name-required", message)
        name, renamed = folder.name, f"{missing} [rule name-required]"
    if isinstance(name, int) and not isinstance(name, bool):
        name = str(name)  # ``name: 2048``: YAML reads a number, every client takes the text
    if not isinstance(name, str):
        return SkillProblem(folder, "name-required", "the 'name' field must be a string")
    broken = name_problem(name, folder.name)
    if broken is not None and broken[0] == "name-folder":
        mismatch, broken = f"{broken[1]} [rule {broken[0]}]", None
    if broken is not None:
        if not folder_names or name_problem(folder.name, folder.name) is not None:
            return SkillProblem(folder, broken[0], broken[1], name=name)
        renamed = f"{broken[1]} [rule {broken[0]}]"
        name = folder.name
    description = data.get("description")
    problem = _text_problem(
        folder, name, "description", description, MAX_DESCRIPTION, "required", "is missing"
    )
    warnings: list[str] = []
    if problem is not None and problem.rule != "description-length":
        return problem
    if problem is not None:  # Claude Code and Codex load these; the listing shows 1024
        warnings.append(f"{problem.message} [rule {problem.rule}]")
    # optional fields of the wrong shape: warned about and left out, the skill loads
    license_ = data.get("license")
    if license_ is not None and not isinstance(license_, str):
        warnings.append("'license' must be a string; ignored [rule license-type]")
        license_ = None
    compatibility = data.get("compatibility")
    if compatibility is not None:
        problem = _text_problem(
            folder,
            name,
            "compatibility",
            compatibility,
            MAX_COMPATIBILITY,
            "type",
            "must be a string",
        )
        if problem is not None:
            warnings.append(f"{problem.message}; ignored [rule {problem.rule}]")
            compatibility = None
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        warnings.append(
            "'metadata' must be a mapping of keys to values; ignored [rule metadata-type]"
        )
        metadata = None
    raw_tools = data.get("allowed-tools")
    allowed = _tools_field(raw_tools) if raw_tools is not None else None
    if raw_tools is not None and allowed is None:
        return SkillProblem(
            folder,
            "allowed-tools-type",
            "'allowed-tools' must be a space-separated string or a list of strings",
            name=name,
        )
    known = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
    return Skill(
        name=unicodedata.normalize("NFKC", name),
        description=" ".join(str(description).split()),
        folder=folder,
        source=source,
        license=license_,
        compatibility=compatibility,
        metadata={str(k): v for k, v in (metadata or {}).items()},
        allowed_tools=allowed,
        extra={str(k): v for k, v in data.items() if k not in known},
        renamed=renamed,
        mismatch=mismatch,
        file_name=file_name,
        warnings=tuple(warnings),
    )


def _text_problem(
    folder: Path, name: str, key: str, value: Any, most: int, rule: str, says: str
) -> SkillProblem | None:
    """The problem of a text field (``{key}-{rule}`` when it is not a non-blank string,
    ``{key}-length`` when longer than ``most``), or ``None``."""
    if not isinstance(value, str) or not value.strip():
        field = f"the '{key}' field" if rule == "required" else f"'{key}'"
        return SkillProblem(folder, f"{key}-{rule}", f"{field} {says}", name=name)
    if len(value) > most:
        message = f"{key} is {len(value)} characters long (at most {most})"
        return SkillProblem(folder, f"{key}-length", message, name=name)
    return None
