"""Layered settings (SPEC §5): defaults < user < project < local < environment < flags."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

PermissionMode = Literal["default", "accept-edits", "plan", "bypass"]
LAYER_NAMES = ("default", "user", "project", "local", "env", "cli")


class ConfigError(Exception):
    """A configuration problem; the message names what to fix (exit code 2)."""


class PermissionRules(BaseModel):
    """Claude Code style rules such as ``run_command(git push:*)`` or ``edit_file(src/**)``."""

    allow: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)


class GateSettings(BaseModel):
    """``[completion_gate]``: which policy, how many blocks before giving up."""

    model_config = ConfigDict(extra="allow")
    policy: str = "standard"
    """``strict``, ``standard``, ``lenient``, ``off`` (built in), or the name a team policy
    plugin answers to; an unclaimed name falls back to ``standard`` with a warning."""
    max_blocks: int = 3


class StagnationSettings(BaseModel):
    """``[stagnation]``: thresholds of the default stagnation policy."""

    model_config = ConfigDict(extra="allow")
    enabled: bool = True
    repeat_threshold: int = 3
    hard_after_guidance: int = 3
    window: int = 12


class Settings(BaseModel):
    """The merged settings of a run. ``layers`` keeps each layer's raw data for provenance."""

    model_config = ConfigDict(extra="allow")

    model: str | None = None
    base_url: str | None = None
    api_key: str | None = None
    max_steps: int = 50
    max_tokens: int | None = None
    permission_mode: PermissionMode = "default"
    context_window: int = 128_000
    max_output_tokens: int | None = None
    stream: bool = True
    images: bool = False
    """Send images from tool results (MCP screenshots...) to the model: only for models that
    take image input."""
    request_timeout: float = 600.0
    max_retries: int = 4
    retry_base_delay: float = 1.0
    retry_max_delay: float = 30.0
    max_tool_calls_per_reply: int = 16
    max_parallel_tools: int = 4
    tool_timeout: float = 300.0
    """Seconds before a hung tool call is answered with an error (a tool may set its own)."""
    observer_warn_ms: float = 500.0
    """An ``on_event`` observer slower than this for one event gets one notice."""
    near_limit_steps: int = 3
    permissions: PermissionRules = Field(default_factory=PermissionRules)
    completion_gate: GateSettings = Field(default_factory=GateSettings)
    stagnation: StagnationSettings = Field(default_factory=StagnationSettings)
    validation_commands: dict[str, list[str]] = Field(default_factory=dict)
    mcp_servers: dict[str, Any] = Field(default_factory=dict)
    mcp_config_files: list[str] = Field(default_factory=list)
    sandbox: bool = False

    _layers: list[tuple[str, dict[str, Any]]] = PrivateAttr(default_factory=list)

    @property
    def layers(self) -> list[tuple[str, dict[str, Any]]]:
        """``[(layer_name, raw_dict), ...]`` from lowest to highest precedence."""
        return self._layers

    def section(self, name: str) -> dict[str, Any]:
        """A plugin's own config table (``[name]``), merged across layers; ``{}`` if absent."""
        value = getattr(self, name, None)
        if isinstance(value, BaseModel):
            return value.model_dump()
        if value is None and self.model_extra:
            value = self.model_extra.get(name)
        return dict(value) if isinstance(value, dict) else {}


def home_dir() -> Path:
    """``MYCODE_HOME`` (default ``~/.mycode``)."""
    raw = os.environ.get("MYCODE_HOME")
    return Path(raw).expanduser() if raw else Path.home() / ".mycode"


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config file {path}: {exc}") from exc


def _env_layer() -> dict[str, Any]:
    env = os.environ
    data: dict[str, Any] = {}
    pairs = {
        "model": ("MYCODE_MODEL",),
        "base_url": ("MYCODE_BASE_URL", "OPENAI_BASE_URL"),
        "api_key": ("MYCODE_API_KEY", "OPENAI_API_KEY"),
        "max_steps": ("MYCODE_MAX_STEPS",),
        "max_tokens": ("MYCODE_MAX_TOKENS",),
        "permission_mode": ("MYCODE_PERMISSION_MODE",),
    }
    for key, names in pairs.items():
        for name in names:
            if env.get(name):
                data[key] = env[name]
                break
    return data


def _merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in top.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        elif key == "permissions" and isinstance(value, dict):
            out[key] = dict(value)
        else:
            out[key] = value
    return out


def _merge_permissions(layers: list[tuple[str, dict[str, Any]]]) -> dict[str, list[str]]:
    merged: dict[str, list[str]] = {"allow": [], "deny": [], "ask": []}
    for _name, data in layers:
        rules = data.get("permissions") or {}
        for kind in merged:
            merged[kind].extend(str(rule) for rule in rules.get(kind, []) or [])
    return merged


def config_paths(workspace: Path, home: Path) -> list[tuple[str, Path]]:
    """The config files read, lowest precedence first."""
    return [
        ("user", home / "config.toml"),
        ("project", workspace / ".mycode" / "config.toml"),
        ("local", workspace / ".mycode" / "config.local.toml"),
    ]


def load_settings(
    workspace: Path, home: Path | None = None, cli: dict[str, Any] | None = None
) -> Settings:
    """Read every layer and merge them; raises :class:`ConfigError` with a readable message."""
    home = home or home_dir()
    layers: list[tuple[str, dict[str, Any]]] = [("default", {})]
    for name, path in config_paths(workspace, home):
        layers.append((name, _read_toml(path)))
    layers.append(("env", _env_layer()))
    layers.append(("cli", {k: v for k, v in (cli or {}).items() if v is not None}))
    merged: dict[str, Any] = {}
    for _name, data in layers:
        merged = _merge(merged, data)
    merged["permissions"] = _merge_permissions(layers)
    try:
        settings = Settings.model_validate(merged)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise ConfigError(f"invalid setting {where!r}: {first.get('msg')}") from None
    settings._layers = layers
    return settings
