"""The check `mycode run` and the interactive session make before a turn: are tools loaded?"""

from __future__ import annotations

import os
from typing import Any

NO_TOOLS = (
    "no tools are loaded, so the agent could only talk: install the built-in tools "
    "(pip install ./plugins/builtin_tools, or mycode-builtin-tools) and check "
    "MYCODE_DISABLE_PLUGINS; set MYCODE_LOAD_PLUGINS= (empty) to run without tools on purpose"
)


def no_tools_problem(runner: Any) -> str | None:
    """A configuration error when a prepared run has no tools by accident (a core-only install,
    every plugin disabled); ``MYCODE_LOAD_PLUGINS`` set means the set of plugins was chosen."""
    if runner.context.tools.names() or "MYCODE_LOAD_PLUGINS" in os.environ:
        return None
    return NO_TOOLS
