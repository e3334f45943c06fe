"""Language server entries, as Claude Code's ``lspServers`` and ``.lsp.json`` write them.

An entry: ``command`` (required), ``args``, ``extensionToLanguage`` (required: ``{".py":
"python"}``), ``env``, ``cwd``, ``initializationOptions``, ``settings`` (answered to the
server's ``workspace/configuration``), ``startupTimeout`` (milliseconds). ``transport`` must be
``stdio`` (the default); fields mycode does not use (``workspaceFolder``, ``shutdownTimeout``,
``restartOnCrash``, ``maxRestarts``) are accepted and left alone.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DEFAULT_STARTUP_S = 30.0


@dataclass(frozen=True)
class ServerSpec:
    """One language server: how to start it and the files it serves."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    extensions: dict[str, str] = field(default_factory=dict)
    """File suffix (``.py``, lower case) → the LSP language id (``python``)."""
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    initialization_options: Any = None
    settings: Any = None
    startup_timeout: float = DEFAULT_STARTUP_S
    source: str = "config"
    """Where the entry came from: ``config`` or ``plugin:NAME``."""

    def language_of(self, suffix: str) -> str | None:
        """The language id of files with ``suffix``, if this server serves them."""
        return self.extensions.get(suffix.lower())


def parse_spec(name: str, entry: Any, source: str) -> ServerSpec:
    """One entry as a :class:`ServerSpec`; ``ValueError`` says what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError("the entry is not an object")
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise ValueError("no command")
    transport = entry.get("transport", "stdio")
    if transport != "stdio":
        raise ValueError(f"transport {transport!r} is not supported (only stdio)")
    args = entry.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise ValueError("args must be a list of strings")
    mapping = entry.get("extensionToLanguage")
    if not isinstance(mapping, dict) or not mapping:
        raise ValueError('no extensionToLanguage (like {".py": "python"})')
    extensions = {
        (key if key.startswith(".") else f".{key}").lower(): str(value)
        for key, value in mapping.items()
        if isinstance(key, str) and key
    }
    env = entry.get("env") or {}
    if not isinstance(env, dict):
        raise ValueError("env must be an object")
    timeout = entry.get("startupTimeout")
    startup = float(timeout) / 1000 if isinstance(timeout, int | float) and timeout > 0 else None
    cwd = entry.get("cwd")
    return ServerSpec(
        name=name,
        command=command,
        args=tuple(args),
        extensions=extensions,
        env={str(k): str(v) for k, v in env.items()},
        cwd=cwd if isinstance(cwd, str) and cwd else None,
        initialization_options=entry.get("initializationOptions"),
        settings=entry.get("settings"),
        startup_timeout=startup or DEFAULT_STARTUP_S,
        source=source,
    )
