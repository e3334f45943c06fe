"""Looking at the host from a test: live processes, waiting for a condition, a headless browser."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def process_alive(pid: int) -> bool:
    """True if process ``pid`` exists and is not a zombie (read from ``/proc``)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False
    return state != "Z"


def wait_until(condition: Callable[[], object], seconds: float = 10.0, poll: float = 0.05) -> bool:
    """Poll ``condition`` until it is true (True) or ``seconds`` pass (its last value, as bool)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(poll)
    return bool(condition())


def host_processes(needle: str) -> list[int]:
    """Live processes on the host whose command line contains ``needle`` (read from ``/proc``)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if needle.encode() in cmdline and process_alive(int(entry)):
            found.append(int(entry))
    return found


def signal_when_ready(
    proc: subprocess.Popen[str], ready: Path, sig: int = signal.SIGKILL, seconds: float = 120.0
) -> int:
    """Once the file ``ready`` exists, send ``sig`` to ``proc``; its exit code once it ended.

    Raises ``AssertionError`` (after killing ``proc``) if ``ready`` never appears."""
    if not wait_until(lambda: ready.exists() or proc.poll() is not None, seconds):
        proc.kill()
    assert ready.exists(), f"{ready} never appeared (exit code {proc.wait(seconds)})"
    proc.send_signal(sig)
    return proc.wait(seconds)


def find_chromium() -> str | None:
    """The path of an installed Chromium/Chrome, or None."""
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    return None


def headless_chromium(
    binary: str, args: Sequence[str], profile: Path, timeout: float = 180.0
) -> subprocess.CompletedProcess[str]:
    """Run ``binary --headless ... ARGS`` with its own ``profile`` folder and no network chatter.

    Raises ``subprocess.TimeoutExpired`` after ``timeout`` seconds.
    """
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
    flags += ["--disable-background-networking", "--disable-component-update", "--disable-sync"]
    return subprocess.run(
        [binary, *flags, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
