"""MCP tool arguments that look like paths outside the workspace (issue 23).

An MCP server acts on whatever path it is given (``mcp-server-git`` ``git_checkout`` with the
``repo_path`` of another repository), so a call whose path-like argument resolves outside the
workspace asks, unless the server's entry says ``trust_paths = true`` in a config the user
owns (``$MYCODE_HOME`` files, ``--mcp-config``, the local scope of a trusted workspace).
"""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path
from typing import Any

from mycode_core.records import CallApproval

_PATH_NAMES = re.compile(
    r"^(path|paths|file|files|filename|filepath|dir|dirs|directory|folder|cwd|root|repo|"
    r"repository|target|source|destination|dest|src|dst|workdir|working_dir|location)$"
    r"|(_path|_paths|_file|_dir|_directory|_root|path)$",
    re.IGNORECASE,
)
MAX_VALUES = 200


def _looks_like_path(value: str) -> bool:
    return value.startswith(("/", "~", "../")) or value in ("..", "~") or "/../" in value


def _candidates(arguments: Any, key: str = "", depth: int = 0) -> list[tuple[str, str]]:
    """(argument name, string value) pairs worth checking, nested values included."""
    out: list[tuple[str, str]] = []
    if depth > 4:
        return out
    if isinstance(arguments, dict):
        for name, value in arguments.items():
            out += _candidates(value, str(name), depth + 1)
    elif isinstance(arguments, list):
        for value in arguments[:MAX_VALUES]:
            out += _candidates(value, key, depth + 1)
    elif isinstance(arguments, str) and arguments.strip() and "\n" not in arguments:
        text = arguments.strip()
        if (path := file_uri_path(text)) is not None:
            out.append((key, path))
        elif (_PATH_NAMES.search(key) and not re.match(r"^[a-z]+://", text)) or (
            _looks_like_path(text)
        ):
            out.append((key, text))
    return out[:MAX_VALUES]


def file_uri_path(text: str) -> str | None:
    """The path a ``file:`` URI names (``file:///etc/passwd``, ``FILE://localhost/etc``: a
    scheme is read whatever its case, as servers' URL parsers read it), else ``None``."""
    stripped = text.strip()
    if not re.match(r"^file:", stripped, re.IGNORECASE):
        return None
    parsed = urllib.parse.urlparse(stripped)
    return urllib.parse.unquote(parsed.path) or "/"


def _outside(value: str, root: Path) -> Path | None:
    expanded = os.path.expanduser(value) if value.startswith("~") else value
    candidate = Path(expanded)
    if not candidate.is_absolute():
        candidate = root / candidate
    try:
        resolved = Path(os.path.realpath(candidate))
    except (OSError, ValueError):
        return candidate
    if resolved == root or root in resolved.parents:
        return None
    return resolved


def outside_paths(arguments: dict[str, Any], workspace: Path) -> list[tuple[str, Path]]:
    """Path-like arguments (by name or by shape) that resolve outside ``workspace``."""
    root = Path(os.path.realpath(workspace))
    found = []
    for name, value in _candidates(arguments):
        where = _outside(value, root)
        if where is not None:
            found.append((name or "argument", where))
    return found


def approval_for(server: str, trust_paths: bool) -> Any:
    """The ``Tool.approval_for`` of a tool of ``server``: asks for outside paths unless the
    server is trusted for them."""

    def judge(arguments: dict[str, Any], context: Any) -> CallApproval | None:
        if trust_paths:
            return None
        found = outside_paths(arguments, Path(context.workspace))
        if not found:
            return None
        name, where = found[0]
        return CallApproval(
            reason=(
                f"argument {name!r} is {str(where)!r}, outside the workspace; the MCP server "
                f"{server!r} would act there. To allow it, set trust_paths = true in the "
                f"server's entry in $MYCODE_HOME/mcp.json or [mcp_servers.{server}] of "
                "$MYCODE_HOME/config.toml"
            ),
            subject=str(where),
        )

    return judge


def trusts_paths(spec: Any) -> bool:
    """Whether a server entry the user owns says ``trust_paths = true`` (a project's own
    ``.mcp.json`` or config cannot trust itself)."""
    raw = getattr(spec, "raw", None) or {}
    return bool(getattr(spec, "trusted", False)) and raw.get("trust_paths") is True
