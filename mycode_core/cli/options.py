"""Click options that the core's commands and plugins' commands share."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click


def plugin_dir_option(
    help_text: str = "A plugin folder, as for a run (repeatable).", dest: str = "plugin_dirs"
) -> Callable[[Any], Any]:
    """``--plugin-dir DIR`` (repeatable, a folder), its values a tuple in ``dest``."""
    return click.option(
        "--plugin-dir", dest, multiple=True, type=click.Path(file_okay=False), help=help_text
    )


def mcp_config_option(help_text: str) -> Callable[[Any], Any]:
    """``--mcp-config FILE|JSON`` (repeatable), its values a tuple in ``mcp_config``; read them
    with :func:`mcp_config_values`."""
    return click.option(
        "--mcp-config", "mcp_config", multiple=True, metavar="FILE|JSON", help=help_text
    )


def mcp_config_values(values: Iterable[str]) -> list[str]:
    """``--mcp-config`` values as the MCP bridge reads them: inline JSON (a value starting with
    ``{``, as Claude Code accepts) unchanged, a file as its absolute path; raises
    ``ValueError`` naming a file that does not exist."""
    out = []
    for value in values:
        if value.lstrip().startswith("{"):
            out.append(value)
            continue
        path = Path(value).expanduser()
        if not path.is_file():
            raise ValueError(
                f"--mcp-config {value}: no such file (give a file, or the servers as inline "
                """JSON: '{"mcpServers": {...}}')"""
            )
        out.append(str(path.resolve()))
    return out
