"""The lifeline: process groups handed to ``watch_group`` die with a SIGKILLed mycode."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from mycode_core.testing.host import host_processes, signal_when_ready, wait_until


def test_watched_groups_and_marked_processes_die_with_their_process_unwatched_ones_live(
    tmp_path: Path,
) -> None:
    script = textwrap.dedent(
        f"""
        import os, subprocess, time
        from mycode_core.api import unwatch_group, watch_group
        kept = subprocess.Popen(["sleep", "3081"], start_new_session=True)
        gone = subprocess.Popen(["sleep", "3082"], start_new_session=True)
        marked = subprocess.Popen(["sleep", "3083"], start_new_session=True,
                                  env={{**os.environ, "MARK": "x1"}})
        watch_group(kept.pid)
        watch_group(gone.pid, marker="MARK=x1")
        unwatch_group(kept.pid)
        open({str(tmp_path / "ready")!r}, "w").close()
        time.sleep(300)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.DEVNULL, text=True)
    try:
        assert signal_when_ready(proc, tmp_path / "ready") == -9
        assert wait_until(lambda: not host_processes("sleep 3082"), 10)
        assert wait_until(lambda: not host_processes("sleep 3083"), 10)
        assert host_processes("sleep 3081"), "an unwatched group was killed"
    finally:
        for pid in host_processes("sleep 308"):
            subprocess.run(["kill", "-9", str(pid)], check=False)
