"""Agent Plugins 1.0.0 folders: the closed ``plugin.json`` and ``mcp.json`` (SPEC §11).

Written from the Agent Plugins Specification 1.0.0 (its §5, §6, §7.2, §8, §9). Problems are
:class:`Problem` items naming the section of that specification; a fatal one rejects the whole
plugin, a warning skips only what it names.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_claude_compat.header_fields import OWNED, field_problem
from mycode_core.api import replace_atomically

PLUGIN_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/plugin.schema.json"
MCP_SCHEMA = "https://agent-plugins.org/schemas/1.0.0/mcp.schema.json"
MANIFEST_FIELDS = (
    "$schema",
    "name",
    "version",
    "description",
    "author",
    "homepage",
    "repository",
    "license",
    "keywords",
    "extensions",
)
# §5.5. \A and \Z, never ^ and $: jsonschema's "pattern" searches, and $ also matches before a
# final newline ("evil\n" passed, and became an installed folder's name and tool names)
NAME_PATTERN = r"\A(?!.*(?:--|\.\.))[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?\Z"

_TEXT = {"type": "string"}
MANIFEST_RULES: dict[str, Any] = {
    "type": "object",
    "properties": {
        "$schema": {"const": PLUGIN_SCHEMA},
        "name": {"type": "string", "minLength": 1, "maxLength": 64, "pattern": NAME_PATTERN},
        "version": _TEXT,
        "description": _TEXT,
        "author": {
            "type": "object",
            "properties": {"name": _TEXT, "email": _TEXT, "url": _TEXT},
            "additionalProperties": False,
        },
        "homepage": _TEXT,
        "repository": _TEXT,
        "license": _TEXT,
        "keywords": {"type": "array", "items": _TEXT},
        "extensions": {"type": "object", "additionalProperties": {"type": "object"}},
    },
    "required": ["$schema", "name"],
    "additionalProperties": False,
}
_STRINGS = {"type": "object", "additionalProperties": _TEXT}
SERVER_RULES: dict[str, Any] = {
    "oneOf": [
        {
            "type": "object",
            "properties": {
                "type": {"const": "stdio"},
                "command": {"type": "string", "minLength": 1},
                "args": {"type": "array", "items": _TEXT},
                "env": {
                    "type": "object",
                    "propertyNames": {"not": {"enum": ["PLUGIN_ROOT", "PLUGIN_DATA"]}},
                    "additionalProperties": _TEXT,
                },
                "cwd": {
                    "type": "string",
                    "pattern": r"\A(?:\./|\$\{PLUGIN_ROOT\}(?:/|\Z)|\$\{PLUGIN_DATA\}(?:/|\Z))",
                },
            },
            "required": ["type", "command"],
            "additionalProperties": False,
        },
        *(
            {
                "type": "object",
                "properties": {
                    "type": {"const": kind},
                    "url": {"type": "string", "minLength": 1},
                    "headers": _STRINGS,
                },
                "required": ["type", "url"],
                "additionalProperties": False,
            }
            for kind in ("streamable-http", "sse")
        ),
    ]
}
SUPPORTED_TRANSPORTS = ("stdio", "streamable-http", "sse")
_PLACEHOLDER = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Problem:
    """One finding: a readable message and the Agent Plugins section it applies."""

    message: str
    section: str

    def as_json(self) -> dict[str, str]:
        """``{"message", "section"}`` for ``mycode plugins validate``."""
        return {"message": self.message, "section": self.section}


@dataclass
class McpResult:
    """What ``mcp.json`` gave: bridge entries by server name, and what was skipped."""

    servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    warnings: list[Problem] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def inside(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or beneath it, both resolved (symlinks followed): the
    filesystem-resolved paths of §4.1 and §7.2.1 (``PLUGIN_DATA`` under a ``MYCODE_HOME``
    reached through a symlink is still itself)."""
    try:
        real = os.path.realpath(path)
        base = os.path.realpath(root)
    except (OSError, ValueError):
        return False
    return real == base or real.startswith(base.rstrip(os.sep) + os.sep)


def _not_json(word: str) -> Any:
    raise ValueError(f"{word} is not a JSON value")


def strict_json(text: str) -> Any:
    """``text`` parsed as JSON, and only JSON: Python's reader also takes ``NaN``,
    ``Infinity`` and ``-Infinity``, which JSON has not (§5.2: the manifest MUST be JSON)."""
    return json.loads(text, parse_constant=_not_json)


def _where(error: Any) -> str:
    parts = [str(p) for p in error.absolute_path]
    return ".".join(parts) if parts else "plugin.json"


CACHE_VERSION = 2
"""Of the cache file below: raised whenever a rule changes, so no result of the old rules is
reused (version 1 accepted a name ending in a newline)."""


class SchemaCache:
    """Results of schema checks by the checked JSON's digest, kept in
    ``$MYCODE_HOME/cache/folder-plugins.json``: importing jsonschema costs more than a whole
    start-up, so it happens only for a document not seen before."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self.entries: dict[str, Any] = {}
        self.changed = False

    def bind(self, home: Path) -> None:
        """Use the cache file of ``home`` (read once)."""
        path = home / "cache" / "folder-plugins.json"
        if self.path == path:
            return
        self.path, self.entries, self.changed = path, {}, False
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if isinstance(data, dict) and data.get("version") == CACHE_VERSION:
                self.entries = dict(data.get("entries") or {})
        except (OSError, ValueError):
            pass

    def get(self, kind: str, doc: Any, compute: Any) -> Any:
        """The cached result of ``compute(doc)`` (computed and stored on a miss)."""
        import hashlib

        text = json.dumps(doc, sort_keys=True, separators=(",", ":"))
        key = kind + ":" + hashlib.sha256(text.encode()).hexdigest()
        if key not in self.entries:
            self.entries[key] = compute(doc)
            self.changed = True
        return self.entries[key]

    def save(self) -> None:
        """Write the cache back if it changed (best effort)."""
        if not self.changed or self.path is None:
            return
        try:
            data = json.dumps({"version": CACHE_VERSION, "entries": self.entries}).encode()
            replace_atomically(self.path, data, create_parents=True, follow_folder_links=True)
            self.changed = False
        except OSError:
            pass


CACHE = SchemaCache()


def check_manifest(data: Any) -> tuple[list[Problem], list[Problem]]:
    """``(fatal, warnings)`` of a parsed ``plugin.json`` (§5.2, §5.3, §5.5, §8.1)."""
    fatal, warnings = CACHE.get("manifest", data, _check_manifest_json)
    return [Problem(**p) for p in fatal], [Problem(**p) for p in warnings]


def _check_manifest_json(data: Any) -> list[list[dict[str, str]]]:
    fatal, warnings = _check_manifest(data)
    return [[p.as_json() for p in fatal], [p.as_json() for p in warnings]]


def _check_manifest(data: Any) -> tuple[list[Problem], list[Problem]]:
    from jsonschema import Draft202012Validator

    if not isinstance(data, dict):
        return [Problem("plugin.json must hold a JSON object", "5.2")], []
    warnings: list[Problem] = []
    kept = dict(data)
    for key in sorted(k for k in data if k not in MANIFEST_FIELDS):
        warnings.append(Problem(f"unknown top-level field {key!r} in plugin.json; ignored", "5.2"))
        kept.pop(key)
    if "extensions" in kept and not isinstance(kept["extensions"], dict):
        warnings.append(Problem("'extensions' is not an object; ignored", "8.1"))
        kept.pop("extensions")
    fatal: list[Problem] = []
    for error in sorted(Draft202012Validator(MANIFEST_RULES).iter_errors(kept), key=str):
        where = _where(error)
        if where == "name" or (error.validator == "required" and "'name'" in error.message):
            section = "5.5" if where == "name" else "5.3"
            shown = kept.get("name")
            message = (
                f"invalid plugin name {shown!r}: 1-64 characters a-z, 0-9, '-' and '.', "
                "starting and ending alphanumeric, no '--' or '..'"
                if where == "name"
                else "plugin.json has no 'name'"
            )
        elif where == "$schema" or "'$schema'" in error.message:
            section, message = "5.2", f"'$schema' must be {PLUGIN_SCHEMA}"
        else:
            section, message = "5.4", f"{where}: {error.message}"
        if all(seen.message != message for seen in fatal):  # "" breaks two rules of one field
            fatal.append(Problem(message, section))
    return fatal, warnings


def read_manifest(root: Path) -> tuple[dict[str, Any] | None, list[Problem], list[Problem]]:
    """Read and check ``ROOT/plugin.json``: ``(manifest or None when fatal, fatal, warnings)``.

    A ``$schema`` other than the one of Agent Plugins 1.0.0 rejects the folder (§5.2: the
    client selects its rules by ``$schema``)."""
    path = root / "plugin.json"
    if not inside(path, root):
        return None, [Problem("plugin.json resolves outside the plugin root", "4.1")], []
    try:
        data = strict_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        return None, [Problem(f"cannot read plugin.json: {exc}", "5.2")], []
    except ValueError as exc:
        return None, [Problem(f"plugin.json is not valid JSON: {exc}", "5.2")], []
    if isinstance(data, dict) and data.get("$schema") != PLUGIN_SCHEMA:
        found = data.get("$schema")
        said = "it has no $schema" if found is None else f"$schema is {found!r}"
        message = (
            f"plugin.json names no recognised Agent Plugins schema ({said}; expected "
            f"{PLUGIN_SCHEMA}; a Claude Code or Codex manifest belongs in .claude-plugin/ or "
            ".codex-plugin/)"
        )
        return None, [Problem(message, "5.2")], []
    fatal, warnings = check_manifest(data)
    return (None if fatal else data), fatal, warnings


def skill_folders(root: Path) -> tuple[Path | None, list[Problem]]:
    """The ``skills/`` location (§6.1), or ``None`` when missing or invalid (§6.2)."""
    path = root / "skills"
    if not os.path.lexists(path):
        return None, []
    if not inside(path, root):
        return None, [Problem("skills/ resolves outside the plugin root; skills skipped", "4.1")]
    if not path.is_dir():
        return None, [Problem("skills is not a folder; skills skipped", "6.2")]
    return path, []


def _expand(value: str, root: Path, data: Path) -> str:
    """The one expansion of §9.2: ``${PLUGIN_ROOT}`` and ``${PLUGIN_DATA}``, non-recursive."""
    table = {"${PLUGIN_ROOT}": str(root), "${PLUGIN_DATA}": str(data)}
    return re.sub(r"\$\{PLUGIN_(?:ROOT|DATA)\}", lambda m: table[m.group(0)], value)


def _check_url(url: str) -> str | None:
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError as exc:
        return f"invalid url: {exc}"
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return "url must be an absolute http or https URL"
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        return "url must not contain user information"
    if parts.fragment or url.endswith("#"):
        return "url must not contain a fragment"
    if parts.scheme == "http" and not _loopback(host):
        return "a non-loopback url must use https"
    return None


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _stdio(
    name: str, entry: dict[str, Any], root: Path, data: Path
) -> tuple[dict[str, Any] | None, str | None]:
    command = entry["command"]
    # one token, not a shell string: a space is fine in the name of a file the plugin ships
    # ("./bin/my server"), never between a program and its arguments ("npx foo")
    spaced = any(ch.isspace() for ch in command)
    if command.startswith("${") or (
        spaced and not (command.startswith("./") and os.path.isfile(root / command[2:]))
    ):
        return None, (
            f"'command' {command!r} must be one executable token (args go in 'args'; a "
            "plugin-relative path with spaces must name a file of the plugin)"
        )
    if command.startswith("./"):
        target = root / command[2:]
        if not inside(target, root):
            return None, f"'command' {command!r} resolves outside the plugin root"
        command = str(Path(os.path.realpath(target)))
    elif "/" in command or "\\" in command:
        return None, f"'command' {command!r} must be a bare name or start with './'"
    cwd_raw = entry.get("cwd")
    cwd = root
    if isinstance(cwd_raw, str):
        expanded = _expand(cwd_raw, root, data)
        base = data if cwd_raw.startswith("${PLUGIN_DATA}") else root
        cwd = Path(os.path.realpath(root / expanded if cwd_raw.startswith("./") else expanded))
        if not inside(cwd, base):
            return None, f"'cwd' {cwd_raw!r} resolves outside {base}"
    env = {k: _expand(v, root, data) for k, v in (entry.get("env") or {}).items()}
    env["PLUGIN_ROOT"] = str(root)
    env["PLUGIN_DATA"] = str(data)
    return {
        "type": "stdio",
        "command": command,
        "args": [_expand(a, root, data) for a in entry.get("args") or []],
        "env": env,
        "cwd": str(cwd),
        "literal": True,
    }, None


def _remote(
    name: str, entry: dict[str, Any], warnings: list[Problem]
) -> tuple[dict[str, Any] | None, str | None]:
    problem = _check_url(entry["url"])
    if problem:
        return None, problem
    headers = dict(entry.get("headers") or {})
    seen: set[str] = set()
    for key, value in headers.items():
        if problem := field_problem(key, value):
            return None, problem
        if key.lower() in seen:
            return None, f"header {key!r} is given twice (names are case-insensitive)"
        seen.add(key.lower())
        if _PLACEHOLDER.search(value):
            warnings.append(
                Problem(
                    f"server {name!r}: header {key!r} holds {value!r}, which is sent "
                    "literally (no placeholder expansion in headers)",
                    "7.2.1",
                )
            )
    for key in [k for k in headers if k.lower() in OWNED]:
        del headers[key]
        warnings.append(
            Problem(
                f"server {name!r}: header {key!r} dropped: the client sets it itself (its own "
                "headers take precedence)",
                "7.2.1",
            )
        )
    kind = "http" if entry["type"] == "streamable-http" else "sse"
    return {"type": kind, "url": entry["url"], "headers": headers, "literal": True}, None


def read_mcp(root: Path, plugin: str, data: Path) -> McpResult:
    """``ROOT/mcp.json`` as bridge entries named ``<plugin>_<server>`` (§7.2, §9)."""
    result = McpResult()
    path = root / "mcp.json"
    if not os.path.lexists(path):
        return result

    def disable(message: str, section: str) -> McpResult:
        result.warnings.append(Problem(f"{message}; MCP servers of the plugin skipped", section))
        result.skipped.append(("mcp.json", message))
        return result

    if not inside(path, root):
        return disable("mcp.json resolves outside the plugin root", "4.1")
    if not path.is_file():
        return disable("mcp.json is not a regular file", "6.2")
    try:
        doc = strict_json(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return disable(f"mcp.json is not valid JSON: {exc}", "7.2.2")
    if not isinstance(doc, dict):
        return disable("mcp.json must hold a JSON object", "7.2.1")
    if doc.get("$schema") != MCP_SCHEMA:
        return disable(f"mcp.json '$schema' must be {MCP_SCHEMA}", "7.2.2")
    extra = sorted(k for k in doc if k not in ("$schema", "mcpServers"))
    if extra:
        return disable(f"mcp.json has unknown top-level fields {extra}", "7.2.1")
    servers = doc.get("mcpServers")
    if not isinstance(servers, dict):
        return disable("mcp.json needs an 'mcpServers' object", "7.2.1")
    for name, entry in servers.items():
        problem: str | None = CACHE.get("server", entry, _server_problem)
        bridge: dict[str, Any] | None = None
        if problem is None and entry["type"] == "stdio":
            bridge, problem = _stdio(name, entry, root, data)
        elif problem is None:
            bridge, problem = _remote(name, entry, result.warnings)
        if problem is not None or bridge is None:
            result.warnings.append(Problem(f"server {name!r} skipped: {problem}", "7.2.2"))
            result.skipped.append((f"mcp server {name}", str(problem)))
            continue
        result.servers[f"{plugin}_{name}"] = bridge
    return result


def _server_problem(entry: Any) -> str | None:
    """Why an ``mcpServers`` entry breaks the closed schema of §7.2.1, or ``None``."""
    from jsonschema import Draft202012Validator

    kind = entry.get("type") if isinstance(entry, dict) else None
    if isinstance(kind, str) and kind not in SUPPORTED_TRANSPORTS:
        return f"transport {kind!r} is not supported"
    if not Draft202012Validator(SERVER_RULES).is_valid(entry):
        return _explain(entry)
    return None


def _explain(entry: Any) -> str:
    if not isinstance(entry, dict):
        return "the entry must be an object"
    if "type" not in entry:
        return "the entry has no 'type'"
    known = {
        "stdio": {"type", "command", "args", "env", "cwd"},
        "streamable-http": {"type", "url", "headers"},
        "sse": {"type", "url", "headers"},
    }[entry["type"]]
    unknown = sorted(set(entry) - known)
    if unknown:
        return f"fields {unknown} do not belong to a {entry['type']!r} server"
    env = entry.get("env")
    if isinstance(env, dict) and {"PLUGIN_ROOT", "PLUGIN_DATA"} & set(env):
        return "'env' must not set PLUGIN_ROOT or PLUGIN_DATA (the client sets them)"
    cwd = entry.get("cwd")
    if isinstance(cwd, str) and not re.match(r"(?:\./|\$\{PLUGIN_(?:ROOT|DATA)\}(?:/|\Z))", cwd):
        return (
            f"'cwd' {entry.get('cwd')!r} must start with './', '${{PLUGIN_ROOT}}' "
            "or '${PLUGIN_DATA}'"
        )
    return f"the entry does not match the {entry['type']!r} server schema"
