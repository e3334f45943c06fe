"""Where MCP servers are configured, and how one server's entry is read.

Sources, lowest precedence first (a later source replaces a server of the same name):

* ``user``    — ``$MYCODE_HOME/mcp.json`` and ``[mcp_servers.NAME]`` in ``$MYCODE_HOME/config.toml``
* ``project`` — ``<workspace>/.mcp.json`` and ``[mcp_servers.NAME]`` in ``.mycode/config.toml``
  (untrusted until approved, see :mod:`mycode_mcp_bridge.trust`)
* ``local``   — ``$MYCODE_HOME/mcp-local.json`` (per workspace) and ``.mycode/config.local.toml``
* ``cli``     — files given with ``--mcp-config`` (a path, or inline JSON)

Every JSON file has Claude Code's shape: ``{"mcpServers": {NAME: {...}}}``.
Imports nothing heavy: this module runs at plugin start-up.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from mycode_core.project_files import ProjectFileRefused, read_config_text

Scope = Literal["user", "project", "local", "cli"]
SCOPES: tuple[Scope, ...] = ("user", "project", "local", "cli")
TRUSTED_SCOPES: frozenset[str] = frozenset({"user", "local", "cli"})

DEFAULT_STARTUP_TIMEOUT = 30.0
"""Seconds a server may take to start, as Claude Code allows (``MCP_TIMEOUT``'s default): a
server run with ``npx -y PACKAGE`` downloads it first, which takes over 10 s the first time."""
DEFAULT_CALL_TIMEOUT = 60.0
DEFAULT_MAX_CALL_TIME = 600.0
"""Seconds one call may run in all while the server keeps reporting progress."""
DEFAULT_MAX_OUTPUT_CHARS = 100_000
MIN_REDACTED = 4
"""Expanded values shorter than this are not hidden in messages (they would mangle them)."""
HTTP_TYPES = {"http", "streamable-http", "streamable_http", "streamableHttp"}

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ConfigProblem(ValueError):
    """A server entry or config file that cannot be used; the message says what to fix."""


@dataclass
class ServerSpec:
    """One configured MCP server, with ``${VAR}`` already expanded."""

    name: str
    scope: Scope
    source: str
    transport: Literal["stdio", "http", "sse"]
    command: str = ""
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    headers_helper: str | None = None
    """Claude Code's ``headersHelper``: a command printing more headers (:mod:`.headers_helper`)."""
    startup_timeout: float | None = None
    call_timeout: float | None = None
    max_call_time: float | None = None
    enabled_tools: list[str] | None = None
    """Codex's allow-list of the server's tool names (``None``: every tool)."""
    disabled_tools: list[str] = field(default_factory=list)
    """Codex's deny-list of the server's tool names, applied after ``enabled_tools``."""
    raw: dict[str, Any] = field(default_factory=dict)
    missing_vars: list[str] = field(default_factory=list)
    expanded_vars: dict[str, str] = field(default_factory=dict)
    """``${VAR}`` taken from the environment → its value (what :meth:`redact` hides)."""

    @property
    def trusted(self) -> bool:
        """Whether this server may start without the user's approval."""
        return self.scope in TRUSTED_SCOPES

    def allows(self, tool: str) -> bool:
        """Whether the server's tool named ``tool`` (its own name, not ``mcp__...``) may be
        offered and called: in ``enabled_tools`` when that is set, and not in
        ``disabled_tools`` (Codex's rule)."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools

    def unknown_tools(self, offered: list[str]) -> list[str]:
        """Names in ``enabled_tools``/``disabled_tools`` that the server does not offer."""
        named = [*(self.enabled_tools or []), *self.disabled_tools]
        return sorted(set(named) - set(offered))

    def fingerprint(self) -> str:
        """A hash of the raw entry: an approval is void once the entry changes."""
        blob = json.dumps(self.raw, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def describe(self) -> str:
        """A one-line description (command line or URL) as configured: ``${VAR}`` unexpanded,
        so secrets passed through variables are never displayed or logged."""
        raw = self.raw
        if self.transport == "stdio":
            command = str(raw.get("command", self.command))
            args = raw.get("args", self.args)
            args = args if isinstance(args, list) else self.args
            return " ".join([command, *(_text(a) for a in args)]).strip()
        return f"{self.transport} {raw.get('url', self.url)}"

    def passes(self) -> list[str]:
        """What the entry hands the server besides its command line, as written (``${VAR}``
        unexpanded): ``env`` entries, and for HTTP the ``headers``. A project server asking for
        ``"env": {"KEY": "${OPENAI_API_KEY}"}`` must say so before anyone approves it."""
        shown: list[str] = []
        for key in ("env", "headers"):
            table = self.raw.get(key)
            if isinstance(table, dict):
                shown += [f"{key} {name}={value}" for name, value in table.items()]
        if self.headers_helper:
            shown.append(f"headersHelper {self.headers_helper}")
        return shown

    def redact(self, text: str) -> str:
        """``text`` with every value a ``${VAR}`` of this entry expanded to written back as
        ``${VAR}``: an error that quotes the expanded URL (``HTTPStatusError ... for url
        '...?key=SECRET'``) or a server's stderr must not show the secret, nor hand it to the
        model in a tool result."""
        values = sorted(self.expanded_vars.items(), key=lambda item: -len(item[1]))
        for name, value in values:
            if len(value) >= MIN_REDACTED:
                text = text.replace(value, f"${{{name}}}")
        return text


def expand(
    value: str,
    missing: list[str],
    environ: dict[str, str] | None = None,
    used: dict[str, str] | None = None,
) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; unknown variables become ``""`` and are noted.

    :param used: collects the variables taken from the environment, with their values."""
    env = os.environ if environ is None else environ

    def repl(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            if used is not None:
                used[name] = env[name]
            return env[name]
        if default is not None:
            return default
        if name not in missing:
            missing.append(name)
        return ""

    return _VAR.sub(repl, value)


def _literal(value: str, missing: list[str]) -> str:  # noqa: ARG001 - same shape as expand
    """No expansion at all."""
    return value


def _str_map(value: Any, what: str, name: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigProblem(f"server {name!r}: {what!r} must be an object of strings")
    return {str(k): _text(v) for k, v in value.items() if v is not None}


def _text(value: Any) -> str:
    """A JSON value as the text a server gets: as JSON writes it (``true``, not ``True``)."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _timeout(entry: dict[str, Any], keys: tuple[str, ...], name: str) -> float | None:
    for key in keys:
        if key in entry and entry[key] is not None:
            try:
                value = float(entry[key])
            except (TypeError, ValueError):
                raise ConfigProblem(
                    f"server {name!r}: {key!r} must be a number of seconds"
                ) from None
            if value <= 0:
                raise ConfigProblem(f"server {name!r}: {key!r} must be positive")
            return value
    return None


def _names(entry: dict[str, Any], key: str, name: str) -> list[str] | None:
    """A list of tool names (``enabled_tools``/``disabled_tools``), ``None`` when absent."""
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigProblem(f"server {name!r}: {key!r} must be a list of tool names")
    return list(value)


def parse_server(
    name: str, entry: Any, scope: Scope, source: str, project_dir: Path | None = None
) -> ServerSpec:
    """Read one ``mcpServers`` entry; raises :class:`ConfigProblem` naming what is wrong.
    ``${CLAUDE_PROJECT_DIR}`` is ``project_dir`` (the workspace), as Claude Code expands it."""
    if not isinstance(entry, dict):
        raise ConfigProblem(f"server {name!r} in {source}: entry must be an object")
    if not name.strip():
        raise ConfigProblem(f"{source}: a server has an empty name")
    kind = str(entry.get("type") or entry.get("transport") or "").strip()
    if not kind:
        kind = "http" if entry.get("url") and not entry.get("command") else "stdio"
    spec = ServerSpec(
        name=name,
        scope=scope,
        source=source,
        transport="stdio",
        startup_timeout=_timeout(entry, ("startup_timeout", "startupTimeout"), name),
        call_timeout=_timeout(entry, ("timeout", "call_timeout", "toolTimeout"), name),
        max_call_time=_timeout(entry, ("max_call_time",), name),
        enabled_tools=_names(entry, "enabled_tools", name),
        disabled_tools=_names(entry, "disabled_tools", name) or [],
        raw=entry,
    )
    missing = spec.missing_vars

    environ = dict(os.environ)
    if project_dir is not None:
        environ["CLAUDE_PROJECT_DIR"] = str(project_dir)

    def expand_here(value: str, missing: list[str]) -> str:
        return expand(value, missing, environ, used=spec.expanded_vars)

    # a folder plugin's entry is already expanded and must stay literal (SPEC §11)
    subst = _literal if entry.get("literal") is True else expand_here
    if kind == "stdio":
        command = entry.get("command")
        if not isinstance(command, str) or not command.strip():
            got = "" if command is None else f" (got {command!r})"
            raise ConfigProblem(
                f"server {name!r} in {source}: 'command' (a program to run) is required for "
                f"stdio{got}"
            )
        args = entry.get("args") or []
        if not isinstance(args, list):
            raise ConfigProblem(f"server {name!r} in {source}: 'args' must be a list of strings")
        env = _str_map(entry.get("env"), "env", name)
        cwd = entry.get("cwd")
        spec.command = subst(command, missing)
        spec.args = [subst(_text(a), missing) for a in args]
        spec.env = {k: subst(v, missing) for k, v in env.items()}
        spec.cwd = subst(str(cwd), missing) if cwd else None
        return spec
    if kind in HTTP_TYPES or kind == "sse":
        url = entry.get("url")
        if not isinstance(url, str) or not url.strip():
            raise ConfigProblem(f"server {name!r} in {source}: 'url' is required for {kind}")
        headers = _str_map(entry.get("headers"), "headers", name)
        spec.transport = "sse" if kind == "sse" else "http"
        spec.url = subst(url, missing)
        spec.headers = {k: subst(v, missing) for k, v in headers.items()}
        helper = entry.get("headersHelper")
        if helper is not None and (not isinstance(helper, str) or not helper.strip()):
            raise ConfigProblem(f"server {name!r} in {source}: 'headersHelper' must be a command")
        spec.headers_helper = helper
        return spec
    raise ConfigProblem(
        f"server {name!r} in {source}: unknown type {kind!r} (use 'stdio', 'http' or 'sse')"
    )


def servers_of(data: Any, source: str) -> dict[str, Any]:
    """The ``mcpServers`` table of a parsed JSON document."""
    if not isinstance(data, dict):
        raise ConfigProblem(f"{source}: expected a JSON object with 'mcpServers'")
    if "mcpServers" not in data and "mcp_servers" not in data and "servers" in data:
        raise ConfigProblem(
            f"{source}: no 'mcpServers' object; its 'servers' (VS Code's shape) is not read — "
            "rename it to 'mcpServers'"
        )
    table = data.get("mcpServers", data.get("mcp_servers", {}))
    if not isinstance(table, dict):
        raise ConfigProblem(f"{source}: 'mcpServers' must be an object")
    return table


def read_json(path: Path, workspace: Path | None = None) -> dict[str, Any]:
    """A JSON config file, ``{}`` if it does not exist; :class:`ConfigProblem` if unreadable.

    :param workspace: for a project file: never read through a symlink leading out of it."""
    try:
        text = read_config_text(path, workspace)
    except FileNotFoundError:
        return {}
    except ProjectFileRefused as exc:
        raise ConfigProblem(str(exc)) from None
    except OSError as exc:
        raise ConfigProblem(f"cannot read {path}: {exc.strerror or exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigProblem(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ConfigProblem(f"{path}: expected a JSON object")
    return data


def user_file(home: Path) -> Path:
    """``$MYCODE_HOME/mcp.json`` (scope ``user``)."""
    return home / "mcp.json"


def project_file(workspace: Path) -> Path:
    """``<workspace>/.mcp.json`` (scope ``project``)."""
    return workspace / ".mcp.json"


def local_file(home: Path) -> Path:
    """``$MYCODE_HOME/mcp-local.json``: ``{"projects": {WORKSPACE: {"mcpServers": ...}}}``."""
    return home / "mcp-local.json"


def workspace_key(workspace: Path) -> str:
    """How a workspace is named in per-workspace files (its resolved absolute path)."""
    return str(Path(workspace).resolve())


def local_servers(home: Path, workspace: Path) -> dict[str, Any]:
    """The ``local`` scope's servers for one workspace."""
    path = local_file(home)
    data = read_json(path)
    project = (data.get("projects") or {}).get(workspace_key(workspace)) or {}
    return servers_of(project, str(path)) if project else {}


def _layer_servers(settings: Any) -> list[tuple[Scope, str, dict[str, Any]]]:
    """``[mcp_servers.NAME]`` tables from config.toml, with the scope of their layer."""
    out: list[tuple[Scope, str, dict[str, Any]]] = []
    layers = list(getattr(settings, "layers", None) or [])
    if not layers:
        table = getattr(settings, "mcp_servers", None) or {}
        if table:
            out.append(("local", "settings [mcp_servers]", dict(table)))
        return out
    scope_of: dict[str, Scope] = {
        "default": "user",
        "user": "user",
        "project": "project",
        "local": "local",
        "env": "local",
        "cli": "cli",
    }
    if not workspace_trusted(settings):
        scope_of["local"] = "project"  # .mycode/config.local.toml is the project's file too
    for layer, data in layers:
        table = (data or {}).get("mcp_servers") or {}
        if isinstance(table, dict) and table:
            scope = scope_of.get(layer, "project")
            out.append((scope, f"{layer} config.toml [mcp_servers]", dict(table)))
    return out


def workspace_trusted(settings: Any) -> bool:
    """Whether the user trusts this workspace (SPEC §8; see :mod:`mycode_core.trust`)."""
    from mycode_core.trust import state

    try:
        return state(settings)["trusted"]
    except Exception:  # noqa: BLE001 - odd settings objects count as untrusted
        return False


def _cli_sources(
    settings: Any, problems: list[str], fatal: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Tables from ``--mcp-config`` values (paths or inline JSON). What is wrong with a value
    named on the command line goes to ``fatal`` (the run cannot be what the user asked for),
    with one of other sources (the user's ``mcp_config_files``, plugin folders) to
    ``problems``."""
    out: list[tuple[str, dict[str, Any]]] = []
    flags = _flag_values(settings)
    for item in _named_files(settings, problems):
        try:
            out.append(_cli_source(str(item).strip()))
        except ConfigProblem as exc:
            (fatal if item in flags else problems).append(str(exc))
    return out


def _cli_source(text: str) -> tuple[str, dict[str, Any]]:
    """``(source, mcpServers table)`` of one ``--mcp-config`` value; the file (or inline
    JSON) must hold an ``mcpServers`` object."""
    if text.startswith("{"):
        source, shown = "--mcp-config (inline)", "--mcp-config: inline JSON"
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigProblem(f"{shown} is not valid JSON: {exc.msg}") from None
    else:
        path = Path(text).expanduser()
        source, shown = str(path), f"--mcp-config {path}"
        if not path.is_file():
            raise ConfigProblem(f"{shown}: file not found")
        try:
            data = read_json(path)
        except ConfigProblem as exc:
            raise ConfigProblem(f"--mcp-config {exc}") from None
    if isinstance(data, dict) and not {"mcpServers", "mcp_servers", "servers"} & set(data):
        raise ConfigProblem(f"""{shown}: no 'mcpServers' object (expected {{"mcpServers": ...}})""")
    return source, servers_of(data, shown)


def _flag_values(settings: Any) -> list[str]:
    """The ``--mcp-config`` values of the command line (its config layer)."""
    layers = dict(getattr(settings, "layers", None) or [])
    return [str(item) for item in (layers.get("cli") or {}).get("mcp_config_files") or []]


def _named_files(settings: Any, problems: list[str]) -> list[str]:
    """``mcp_config_files`` of the run (``--mcp-config``, the user's config, plugin folders).

    Their servers are trusted, so an untrusted workspace's own config may not name any (SPEC
    §8): its value is dropped, the user's own layer's value is kept, and one problem names it.
    """
    files = [str(item) for item in getattr(settings, "mcp_config_files", None) or []]
    layers = list(getattr(settings, "layers", None) or [])
    if not layers or workspace_trusted(settings):
        return files
    from mycode_core.trust import PROJECT_LAYERS

    named = {name: data.get("mcp_config_files") or [] for name, data in layers}
    projects = [name for name in PROJECT_LAYERS if named.get(name)]
    if not projects:
        return files
    problems.extend(
        f"untrusted workspace: ignored mcp_config_files of the {name} config "
        f"({_SHOWN.get(name, name)}) — it would start MCP servers unasked; trust it with "
        "`mycode trust` (or --trust for one run)"
        for name in projects
    )
    listed = {str(item) for value in named.values() for item in value}
    own = next((v for n, v in reversed(named.items()) if v and n not in PROJECT_LAYERS), [])
    added = [item for item in files if item not in listed]  # plugin folders' files, at run time
    return [*map(str, own), *added]


_SHOWN = {"project": ".mycode/config.toml", "local": ".mycode/config.local.toml"}


@dataclass
class LoadedConfig:
    """Every server that applies to a workspace, and the problems met reading them."""

    servers: dict[str, ServerSpec] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    fatal: list[str] = field(default_factory=list)
    """What is wrong with an ``--mcp-config`` value of the command line (exit 2)."""
    shadowed: list[tuple[str, str]] = field(default_factory=list)


def load_servers(workspace: Path, home: Path, settings: Any) -> LoadedConfig:
    """Read every source; later scopes replace earlier ones by name. Never raises."""
    loaded = LoadedConfig()
    raw_sources: list[tuple[Scope, str, dict[str, Any]]] = []

    def guarded(fn: Any) -> None:
        try:
            fn()
        except ConfigProblem as exc:
            loaded.problems.append(str(exc))

    layer_tables = []
    try:
        layer_tables = _layer_servers(settings)
    except Exception as exc:  # noqa: BLE001 - odd settings objects must not break the run
        loaded.problems.append(f"cannot read [mcp_servers]: {exc}")

    def add_file(scope: Scope, path: Path) -> None:
        inside = workspace if scope == "project" else None
        table = servers_of(read_json(path, inside), str(path))
        if table:
            raw_sources.append((scope, str(path), table))

    for scope in SCOPES:
        if scope == "user":
            guarded(lambda: add_file("user", user_file(home)))
        elif scope == "project":
            guarded(lambda: add_file("project", project_file(workspace)))
        elif scope == "local":

            def add_local() -> None:
                table = local_servers(home, workspace)
                if table:
                    raw_sources.append(("local", f"{local_file(home)} (this workspace)", table))

            guarded(add_local)
        raw_sources.extend(item for item in layer_tables if item[0] == scope)
        if scope == "cli":
            for source, table in _cli_sources(settings, loaded.problems, loaded.fatal):
                raw_sources.append(("cli", source, table))

    for scope, source, table in raw_sources:
        for name, entry in table.items():
            name = str(name)
            if isinstance(entry, dict) and entry.get("disabled") is True:
                loaded.servers.pop(name, None)  # `{"disabled": true}` alone needs no command
                continue
            try:
                spec = parse_server(name, entry, scope, source, workspace)
            except ConfigProblem as exc:
                loaded.problems.append(str(exc))
                continue
            previous = loaded.servers.get(name)
            if previous is not None:
                loaded.shadowed.append((name, previous.source))
            loaded.servers[name] = spec
    return loaded
