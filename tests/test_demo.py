"""`mycode demo`: offline, fixes the bundled example's bug for real, shows the diff."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_demo_fixes_the_bug_and_prints_the_diff(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env["MYCODE_HOME"] = str(tmp_path / "home")
    done = subprocess.run(
        [sys.executable, "-m", "mycode_core", "demo"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    # the tests really ran: failing first, passing after the edit
    assert "FAILED (failures=1)" in done.stderr
    assert "OK" in done.stderr
    assert "completed · verdict pass" in done.stderr
    # the diff of the real change
    assert "-    return (ordered[middle] + ordered[middle + 1]) / 2" in done.stdout
    assert "+    return (ordered[middle - 1] + ordered[middle]) / 2" in done.stdout
    # the temporary project is gone, and nothing was written where the user stood
    assert sorted(p.name for p in tmp_path.iterdir()) == ["home"]
