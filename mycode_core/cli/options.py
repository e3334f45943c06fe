"""Click options that the core's commands and plugins' commands share."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click


def plugin_dir_option(
    help_text: str = "A plugin folder, as for a run (repeatable).", dest: str = "plugin_dirs"
) -> Callable[[Any], Any]:
    """``--plugin-dir DIR`` (repeatable, a folder), its values a tuple in ``dest``."""
    return click.option(
        "--plugin-dir", dest, multiple=True, type=click.Path(file_okay=False), help=help_text
    )
