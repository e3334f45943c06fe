"""Is the workspace trusted (SPEC §8)? One function, so the core's answer replaces the shim.

Until ``mycode_core.trust`` exists, a workspace counts as trusted when the run was started with
``--trust`` (setting ``trust = true`` in the command-line layer) or when it is listed in
``$MYCODE_HOME/trusted.json`` (``{"workspaces": [PATH, ...]}``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def is_trusted(workspace: Path, home: Path, settings: Any = None) -> bool:
    """Whether project-level hooks and plugin folders of ``workspace`` may run."""
    try:
        from mycode_core import trust as core_trust  # type: ignore[attr-defined]
    except ImportError:
        core_trust = None
    check = getattr(core_trust, "is_trusted", None)
    if check is not None:
        try:
            return bool(check(workspace, home))
        except TypeError:
            return bool(check(workspace=workspace, home=home, settings=settings))
    for name, data in getattr(settings, "layers", None) or []:
        if name in ("cli", "env") and data.get("trust") is True:
            return True
    try:
        data = json.loads((home / "trusted.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    listed = data.get("workspaces", []) if isinstance(data, dict) else []
    target = workspace.resolve()
    for item in listed if isinstance(listed, list) else []:
        try:
            if Path(str(item)).expanduser().resolve() == target:
                return True
        except OSError:
            continue
    return False
