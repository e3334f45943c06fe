"""Optional OS sandbox for ``run_command`` (bubblewrap): the workspace writable, the rest of the
file system read-only, a private ``/tmp``, and no network unless allowed.

Opt in with ``sandbox = true`` in config.toml; ``[builtin_tools] sandbox_network = true``
keeps the network. Without ``bwrap`` on the machine commands run unsandboxed and a notice
says so once per run.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any


@functools.lru_cache(maxsize=1)
def bwrap_path() -> str | None:
    """Path of a working ``bwrap``, or ``None`` (missing, or cannot create namespaces here)."""
    path = shutil.which("bwrap")
    if path is None:
        return None
    try:
        probe = subprocess.run(
            [path, "--ro-bind", "/", "/", "--dev", "/dev", "--", "true"],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return path if probe.returncode == 0 else None


def requested(settings: Any) -> bool:
    """Whether the settings ask for the sandbox (``sandbox = true``)."""
    return bool(getattr(settings, "sandbox", False))


def network_allowed(settings: Any) -> bool:
    """``[builtin_tools] sandbox_network = true`` keeps the network inside the sandbox."""
    section = settings.section("builtin_tools") if hasattr(settings, "section") else {}
    return bool(section.get("sandbox_network", False))


def active(settings: Any) -> bool:
    """True when commands of this run will be sandboxed."""
    return requested(settings) and bwrap_path() is not None


def wrap(
    argv: list[str], *, workspace: Path, writable: list[Path], cwd: Path, network: bool
) -> list[str]:
    """``argv`` wrapped in bubblewrap with the workspace and ``writable`` folders writable."""
    bwrap = bwrap_path()
    assert bwrap is not None
    cmd = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in [workspace, *writable]:
        cmd += ["--bind", str(folder), str(folder)]
    if not network:
        cmd.append("--unshare-net")
    cmd += ["--die-with-parent", "--chdir", str(cwd), "--", *argv]
    return cmd
