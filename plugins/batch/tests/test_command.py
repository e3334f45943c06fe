"""``mycode batch`` is a plugin command: listed in help, cheap to import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mycode_core.testing import cli_env, run_cli


def test_help_lists_batch_and_the_plugin_is_registered(tmp_path: Path) -> None:
    home = tmp_path / "home"
    helped = run_cli(["--help"], cwd=tmp_path, home=home)
    assert helped.rc == 0 and "batch" in helped.stdout
    again = run_cli(["--help"], cwd=tmp_path, home=home)  # served from the command cache
    assert "batch" in again.stdout
    plugins = run_cli(["plugins"], cwd=tmp_path, home=home)
    rows = {row["name"]: row for row in json.loads(plugins.stdout)}
    assert "register_commands" in rows["batch"]["hooks"]
    usage = run_cli(["batch", "--help"], cwd=tmp_path, home=home)
    assert usage.rc == 0
    for option in ("--out", "--workers", "--executor", "--ray-address", "--resume"):
        assert option in usage.stdout


def test_building_the_command_imports_neither_ray_nor_openai(tmp_path: Path) -> None:
    code = (
        "import sys, click, mycode_batch; g = click.Group(); mycode_batch.register_commands(cli=g);"
        "print(sorted(m for m in ('ray', 'openai', 'psutil') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=cli_env(tmp_path),
        check=True,
    )
    assert out.stdout.strip() == "[]"
