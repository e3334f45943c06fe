"""A Claude Code plugin's ``bin/``: its executables are bare commands of the session.

Claude Code puts each enabled plugin's ``bin/`` on the Bash tool's ``PATH``, after the
system's folders (a plugin's ``bin/git`` does not shadow git). Here the folders are appended to
``PATH`` in mycode's environment when the session starts (so ``run_command``, in the
sandbox too, subagents' commands and hooks find them) and the plugin's folder becomes readable
for the run (inside the command sandbox too, read-only: an installed plugin lies under the
hidden ``MYCODE_HOME``, and its scripts may read their own files). The old ``PATH`` is put back
at ``SessionEnd``. A folder that may not run code (files changed since install) has none.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from mycode_claude_compat.plugin_folder import PluginFolder
from mycode_claude_compat.settings_env import apply as apply_env


def apply(folders: Iterable[PluginFolder], context: Any, saved: dict[str, str | None]) -> None:
    """Put the folders' ``bin/`` at the end of ``PATH`` (old value kept in ``saved``) and make
    their plugin folders readable for the run (``context.readable_roots``)."""
    with_bin = [folder for folder in folders if folder.bin_dir is not None]
    if not with_bin:
        return
    paths = [str(folder.bin_dir) for folder in with_bin]
    current = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if entry]
    apply_env({"PATH": os.pathsep.join([*(p for p in current if p not in paths), *paths])}, saved)
    roots = getattr(context, "readable_roots", None)
    if isinstance(roots, list):
        roots.extend(folder.root for folder in with_bin if folder.root not in roots)
