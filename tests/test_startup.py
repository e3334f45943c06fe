"""Start-up stays light: ``--help``, ``--version`` and ``plugins`` import neither openai nor mcp.

Runs with every installed plugin (no ``MYCODE_LOAD_PLUGINS``), so a plugin importing a heavy
library at module level fails here too.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mycode_core import __version__
from mycode_core.testing import cli_env, run_cli

HEAVY = (
    "openai",
    "mcp",
    "httpx",
    "httpx2",
    "anyio",
    "tiktoken",
    "rich",
    "prompt_toolkit",
    "jsonschema",
    "asyncio",
)
"""Top-level packages that must not be imported by these commands (SPEC says openai and mcp;
the others are their heavy companions; asyncio alone costs ~30 ms, which the first request
paid when the inline-command helper imported it at module level)."""


def _imported_packages(stderr: str) -> set[str]:
    found = set()
    for line in stderr.splitlines():
        match = re.match(r"import time:\s+\d+ \|\s+\d+ \|\s*(\S+)", line)
        if match:
            found.add(match.group(1).split(".")[0])
    return found


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["plugins"], ["plugins", "--all"]])
def test_light_commands_import_no_heavy_library(
    args: list[str], workspace: Path, home: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mycode_core", *args],
        cwd=workspace,
        env=cli_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    imported = _imported_packages(done.stderr)
    assert "click" in imported  # the measurement works
    assert "openai" not in imported and "mcp" not in imported
    heavy = sorted(imported & set(HEAVY))
    assert heavy == [], f"{args} imported {heavy}"


def test_version_and_help(workspace: Path, home: Path) -> None:
    version = run_cli(["--version"], workspace, home)
    assert version.rc == 0 and version.stdout.strip() == f"mycode {__version__}"
    script = run_cli(["--version"], workspace, home, use_script=True)
    assert script.rc == 0 and script.stdout == version.stdout
    helped = run_cli(["--help"], workspace, home)
    assert helped.rc == 0
    for word in (
        "--print",
        "--output-format",
        "--model",
        "--resume",
        "--continue",
        "plugins",
        "sessions",
        "demo",
    ):
        assert word in helped.stdout
