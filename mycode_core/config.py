"""Layered settings (SPEC §5): defaults < user < project < local < environment < flags."""

from __future__ import annotations

import errno
import functools
import os
import re
import tempfile
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from mycode_core.claude_rules import claude_layers
from mycode_core.config_check import ConfigError, check_layer, error_line
from mycode_core.pricing import ModelEntry
from mycode_core.project_files import ProjectFileRefused, read_project_bytes
from mycode_core.trust import LAYER_FILES, PROJECT_LAYERS, restrict_layers

PermissionMode = Literal["default", "accept-edits", "plan", "bypass"]
ValidationKind = Literal["test", "lint", "typecheck", "build"]
__all__ = ["ConfigError", "Settings", "ensure_home", "home_dir", "load_settings"]


class PermissionRules(BaseModel):
    """Claude Code style rules such as ``run_command(git push:*)`` or ``edit_file(src/**)``."""

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)


class GateSettings(BaseModel):
    """``[completion_gate]``: which policy, how many blocks before giving up."""

    model_config = ConfigDict(extra="allow")
    policy: str = Field(default="standard", min_length=1)  # built-in or a policy plugin's name
    max_blocks: int = Field(default=3, ge=0, le=100)


class PluginSettings(BaseModel):
    """``[plugins]``: failures fatal (exit 2), how long exit waits for slow observers."""

    strict: bool = False
    observer_drain_s: float = Field(default=10.0, ge=0)


class ToolSettings(BaseModel):
    """``[tools]``: ``replace = {NAME = "plugin"}`` picks which plugin's tool holds a name."""

    replace: dict[str, str] = Field(default_factory=dict)


class ContextSettings(BaseModel):
    """``[context]``: when and how the view is compacted (the engine reads its own knobs too)."""

    model_config = ConfigDict(extra="allow")
    compact_threshold: float = Field(default=0.8, gt=0, le=1)  # share of the budget
    compact_target: float = Field(default=0.5, gt=0, le=1)  # well below the threshold
    keep_recent_results: int = Field(default=10, ge=0)  # older results masked to one line
    # off: only reactive handling at the hard limit
    strategy: Literal["mask+summary", "mask", "summary", "off"] = "mask+summary"
    # the context engine's own knobs, named here so they are not taken for typos
    keep_recent: Any = None
    recent_results: Any = None
    summary_share: Any = None
    summarizer: Any = None

    @model_validator(mode="after")
    def _target_below_threshold(self) -> ContextSettings:
        if self.compact_target >= self.compact_threshold:
            raise ValueError(
                f"compact_target ({self.compact_target}) must be below compact_threshold "
                f"({self.compact_threshold}): compacting to the trigger would compact every step"
            )
        return self


def model_table(data: dict[str, Any]) -> dict[str, Any]:
    """A layer with a ``[model]`` table (``name``, ``max_output_tokens``) as flat keys."""
    table = data.get("model")
    if not isinstance(table, dict):
        return data
    known = {"name": "model", "max_output_tokens": "max_output_tokens"}
    flat = {key: value for key, value in data.items() if key != "model"}
    for key, value in table.items():
        flat[known.get(key, f"model.{key}")] = value  # unknown: reported as ``model.KEY``
    return flat


class Settings(BaseModel):
    """The merged settings of a run. ``layers`` keeps each layer's raw data for provenance."""

    model_config = ConfigDict(extra="allow")
    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    max_steps: int = Field(default=50, ge=1, le=100_000)
    max_tokens: int | None = Field(default=None, ge=1)
    max_budget_usd: float | None = Field(default=None, ge=0)
    models: dict[str, ModelEntry] = Field(default_factory=dict)  # prices (USD/Mtok), images
    permission_mode: PermissionMode = "default"
    append_system_prompt: str | None = None
    context_window: int = Field(default=128_000, ge=1024)
    max_output_tokens: int | None = Field(default=None, ge=1)  # sent as max_tokens
    context: ContextSettings = Field(default_factory=ContextSettings)
    stream: bool = True
    images: bool = False  # send images to any model, not only those known to take them
    request_timeout: float = Field(default=600.0, gt=0)
    max_retries: int = Field(default=4, ge=0, le=100)
    retry_base_delay: float = Field(default=1.0, ge=0)
    retry_max_delay: float = Field(default=30.0, ge=0)
    max_tool_calls_per_reply: int = Field(default=16, ge=1, le=1000)
    max_parallel_tools: int = Field(default=4, ge=1, le=64)
    tool_timeout: float = Field(default=300.0, gt=0)  # a hung tool call then gets an error
    observer_warn_ms: float = Field(default=500.0, ge=0)  # a slower observer gets one notice
    near_limit_steps: int = Field(default=3, ge=0)
    permissions: PermissionRules = Field(default_factory=PermissionRules)
    completion_gate: GateSettings = Field(default_factory=GateSettings)
    plugins: PluginSettings = Field(default_factory=PluginSettings)
    tools: ToolSettings = Field(default_factory=ToolSettings)
    validation_commands: dict[ValidationKind, list[str]] = Field(default_factory=dict)
    mcp_servers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    mcp_config_files: list[str] = Field(default_factory=list)
    # folders outside the workspace that project files may link into (user config only)
    readable_dirs: list[str] = Field(default_factory=list)
    sandbox: bool | str | dict[str, Any] = "auto"  # "auto" / "on" / "off" or a [sandbox] table

    @field_validator("base_url")
    @classmethod
    def _base_url_is_a_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            parts = urlsplit(value.strip())
            parts.port  # noqa: B018 - raises on a port that is not a number
        except ValueError:
            parts = None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(
                f"{value!r} is not a URL: expected http(s)://host[:port]/path, e.g. "
                "http://localhost:11434/v1 or https://api.openai.com/v1"
            )
        return value.strip()

    @field_validator("validation_commands")
    @classmethod
    def _patterns_compile(cls, value: dict[str, list[str]]) -> dict[str, list[str]]:
        for kind, patterns in value.items():
            for pattern in patterns:
                try:
                    re.compile(pattern)
                except re.error as exc:
                    raise ValueError(
                        f"[validation_commands] {kind}: {pattern!r} is not a valid regular "
                        f"expression ({exc})"
                    ) from None
        return value

    _layers: list[tuple[str, dict[str, Any]]] = PrivateAttr(default_factory=list)
    _notices: list[str] = PrivateAttr(default_factory=list)

    @property
    def notices(self) -> list[str]:
        """Warnings about the configuration (unknown keys) for the run to show as notices."""
        return self._notices

    @property
    def layers(self) -> list[tuple[str, dict[str, Any]]]:
        """``[(layer_name, raw_dict), ...]`` from lowest to highest precedence."""
        return self._layers

    def section(self, name: str) -> Any:
        """A plugin's ``[name]`` table merged across layers: the validated model of a table
        registered with ``register_settings`` (also answering ``.get``/``[key]``), else a dict."""
        value = getattr(self, name, None)  # an unknown table too: pydantic keeps extras
        if isinstance(value, BaseModel):
            return value.model_dump()
        raw = dict(value) if isinstance(value, dict) else {}
        model = self._tables.get(name)
        return raw if model is None else _readable(model).model_validate(raw)

    def user_section(self, name: str) -> dict[str, Any]:
        """``[name]`` from the user's layers only: what an untrusted workspace may not choose."""
        tables = [data.get(name) for layer, data in self._layers if layer not in PROJECT_LAYERS]
        return functools.reduce(_merge, [t for t in tables if isinstance(t, dict)], {})

    def use_tables(self, tables: dict[str, type[BaseModel]]) -> None:
        """Remember the plugins' ``register_settings`` models (for :meth:`section`)."""
        self._tables = dict(tables)

    _tables: dict[str, type[BaseModel]] = PrivateAttr(default_factory=dict)


class _TableAccess:
    """``.get`` / ``[key]`` / ``in`` on a settings model, as plugins read plain tables."""

    def get(self, key: str, default: Any = None) -> Any:
        """The field ``key``, or ``default``."""
        return getattr(self, key, default)

    def __getitem__(self, key: str) -> Any:
        try:
            return getattr(self, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and hasattr(self, key)


@functools.cache
def _readable(model: type[BaseModel]) -> type[BaseModel]:
    """``model`` with :class:`_TableAccess` mixed in (cached; ``isinstance`` still holds)."""
    return type(model.__name__, (model, _TableAccess), {})


def home_dir() -> Path:
    """``MYCODE_HOME`` (default ``~/.mycode``)."""
    raw = os.environ.get("MYCODE_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".mycode"


def ensure_home(home: Path) -> Path:
    """Make sure ``home`` is a writable folder, created ``0700`` (it holds transcripts, memory
    and trust records); a probe write finds a full disk. Else raise a one-line ConfigError."""
    try:
        if home.exists() and not home.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(home))
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=home, prefix=".probe-") as fh:
            fh.write(b"x" * 4096)
            fh.flush()
    except OSError as exc:
        raise unusable_home(home, exc) from None
    return home


def unusable_home(home: Path, exc: OSError) -> ConfigError:
    """The one-line error for a write under ``home`` that failed with ``exc``."""
    code = exc.errno or 0
    return ConfigError(
        f"MYCODE_HOME {home} is not usable ({exc.filename or home}: {exc.strerror or exc}, "
        f"errno {code} {errno.errorcode.get(code, '?')}); free space or point MYCODE_HOME "
        "at a writable folder"
    )


def _read_toml(path: Path, workspace: Path | None, refused: list[str]) -> dict[str, Any]:
    """One config file as a table; a project file leading out of the workspace: ``{}``, noted."""
    try:
        if workspace is not None:
            return tomllib.loads(read_project_bytes(workspace, path).decode("utf-8"))
        return tomllib.loads(path.read_bytes().decode("utf-8")) if path.is_file() else {}
    except ProjectFileRefused as exc:
        refused.append(str(exc))
        return {}
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read this config file: {exc}") from None


# the core's settings read from the environment: the first variable set of each
ENV_VARIABLES = {
    "model": ("MYCODE_MODEL",),
    "base_url": ("MYCODE_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("MYCODE_API_KEY", "OPENAI_API_KEY"),
    "max_steps": ("MYCODE_MAX_STEPS",),
    "max_tokens": ("MYCODE_MAX_TOKENS",),
    "permission_mode": ("MYCODE_PERMISSION_MODE",),
}


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def load_settings(
    workspace: Path,
    home: Path | None = None,
    cli: dict[str, Any] | None = None,
    *,
    tables: Mapping[str, type[BaseModel]] | None = None,
    plugin_names: Iterable[str] = (),
) -> Settings:
    """Read, check and merge every layer; a bad value raises a one-line :class:`ConfigError`.
    With ``tables`` (``register_settings`` models), unknown keys get warnings in ``notices``;
    ``plugin_names`` (installed plugins) are not unknown tables."""
    home = home or home_dir()
    sources = {layer: workspace / file for layer, file in LAYER_FILES.items()}
    sources["user"] = home / "config.toml"
    layers: list[tuple[str, dict[str, Any]]] = [("default", {})]
    notices: list[str] = []  # first the files refused, then (with ``tables``) unknown keys
    for name in ("user", "project", "local"):
        data = _read_toml(sources[name], None if name == "user" else workspace, notices)
        layers.append((name, model_table(data)))
    layers += claude_layers(workspace, notices)  # Claude Code's permission rules
    variables: dict[str, str] = {}  # setting -> the environment variable it is read from
    for key, options in ENV_VARIABLES.items():
        if (variable := next((n for n in options if os.environ.get(n)), None)) is not None:
            variables[key] = variable
    layers.append(("env", {key: os.environ[variable] for key, variable in variables.items()}))
    layers.append(("cli", {k: v for k, v in (cli or {}).items() if v is not None}))
    names, known = list(plugin_names), tables or {}
    for name, data in layers[1:]:
        if name == "env":
            for key, value in data.items():  # each variable on its own, to name it
                source = f"environment variable {variables[key]}"
                check_layer(source, {key: value}, Settings, known, names)
        elif name == "cli":  # the flags: errors name the flag's setting, unknown keys are ours
            check_layer("command line", data, Settings, {}, [*data, *names])
        elif tables is None:
            check_layer(str(sources[name]), data, Settings, {}, names)
        else:  # warnings only with the plugins' tables known
            notices += check_layer(str(sources[name]), data, Settings, tables, names)
    # checked as written (a broken file is an error even where ignored), then restricted
    layers = restrict_layers(workspace, home, layers)  # SPEC §8: untrusted projects only tighten
    merged: dict[str, Any] = functools.reduce(_merge, [data for _name, data in layers], {})
    permissions: dict[str, list[str]] = {"allow": [], "deny": [], "ask": []}
    for _name, data in layers:  # rules add up: a higher layer never drops a lower one's
        rules = data.get("permissions") or {}
        for kind, kept in permissions.items():
            kept.extend(str(rule) for rule in rules.get(kind, []) or [])
    merged["permissions"] = permissions
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(error_line("settings", exc.errors()[0])) from None
    settings._layers = layers
    settings._notices = notices
    settings.use_tables(dict(known))
    return settings
