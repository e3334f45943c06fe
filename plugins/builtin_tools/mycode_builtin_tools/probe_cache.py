"""The bubblewrap probe's answer, remembered under ``MYCODE_HOME`` (issue 24).

Whether ``bwrap`` can build the sandbox here is learnt by running it once (``bwrap ... true``):
some 40 ms, on the way to every run's first model request. The answer holds as long as the
program, the user, the host (a container has its own name), the boot, the kernel and its
namespace switches, and this process's confinement (seccomp) stay as they were, so it is kept
in ``$MYCODE_HOME/cache/sandbox-probe.json`` under a key made of exactly those: a change to any
of them probes again. An unreadable or foreign cache file is probed over, never trusted.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

CACHE_FILE = "sandbox-probe.json"
SWITCHES = (
    "/proc/sys/kernel/random/boot_id",
    "/proc/sys/kernel/unprivileged_userns_clone",
    "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    "/proc/sys/user/max_user_namespaces",
    "/proc/sys/user/max_mnt_namespaces",
    "/proc/sys/user/max_pid_namespaces",
    "/proc/sys/user/max_net_namespaces",
)
"""Files whose content decides whether namespaces can be created (``-`` when absent)."""


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(4096).strip()
    except OSError:
        return "-"


def _confinement() -> str:
    """The ``Seccomp`` and ``NoNewPrivs`` lines of this process's status."""
    lines = _read("/proc/self/status").splitlines()
    return ",".join(line for line in lines if line.startswith(("Seccomp:", "NoNewPrivs:")))


def probe_key(path: str) -> str:
    """What the probe's answer for the program at ``path`` depends on, as one string."""
    try:
        info = os.stat(path)
        program = f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"
    except OSError:
        program = "-"
    system = os.uname()
    parts = [path, program, str(os.getuid()), system.nodename, system.release, system.version]
    return "|".join([*parts, _confinement(), *(_read(name) for name in SWITCHES)])


def cached_probe(path: str, probe: Callable[[str], bool]) -> bool:
    """``probe(path)``, or its remembered answer when nothing it depends on has changed."""
    from mycode_core.api import replace_atomically
    from mycode_core.config import home_dir

    file = home_dir() / "cache" / CACHE_FILE
    key = probe_key(path)
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = None
    if isinstance(data, dict) and data.get("key") == key and isinstance(data.get("works"), bool):
        return bool(data["works"])
    works = probe(path)
    try:
        data = json.dumps({"key": key, "works": works}).encode()
        replace_atomically(file, data, create_parents=True, follow_folder_links=True)
    except OSError:
        pass  # only a cache: the next run probes again
    return works
