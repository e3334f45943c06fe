"""``mycode plugins --check`` names the import cost of a plugin over 50 ms (issue 24)."""

from __future__ import annotations

import json
from pathlib import Path

from mycode_core.testing import run_cli, write_plugin_dist, write_user_plugin

HEAVY = """
import time

time.sleep(0.3)  # stands for importing something heavy at import time
"""

LIGHT = "X = 1\n"


def test_a_heavy_import_is_named_with_its_cost(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_plugin_dist(site, "heavyweight", HEAVY)
    write_plugin_dist(site, "featherweight", LIGHT)
    result = run_cli(["plugins", "--check"], tmp_path, tmp_path / "home", pythonpath=[site])
    assert result.rc == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["heavyweight"]["import_ms"] >= 300
    assert "featherweight" in rows
    notes = [line for line in result.stderr.splitlines() if "to import" in line]
    assert len([line for line in notes if "'heavyweight'" in line]) == 1
    assert "over 50 ms" in notes[0]
    assert "Traceback" not in result.stderr


def test_a_heavy_plugin_file_is_named_with_its_cost(tmp_path: Path) -> None:
    home, site = tmp_path / "home", tmp_path / "site"
    write_user_plugin(home, "slow", HEAVY)
    write_user_plugin(home, "quick", LIGHT)
    write_plugin_dist(site, "packaged_heavy", HEAVY)
    result = run_cli(["plugins", "--check"], tmp_path, home, pythonpath=[site])
    assert result.rc == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert rows["slow"]["source"] == "file"
    assert rows["slow"]["import_ms"] >= 300
    assert rows["packaged_heavy"]["import_ms"] >= 300
    assert isinstance(rows["quick"]["import_ms"], float)
    notes = [line for line in result.stderr.splitlines() if "to import" in line]
    for name in ("slow", "packaged_heavy"):
        assert len([line for line in notes if f"'{name}'" in line]) == 1, notes
    assert "Traceback" not in result.stderr
