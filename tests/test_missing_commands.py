"""A plugin subcommand whose plugin is gone is a usage error naming the plugin, never a task."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import write_plugin_dist, write_script

GREETER = '''
import click

from mycode_core import hookimpl


@hookimpl
def register_commands(cli):
    @cli.command(name="greet")
    @click.argument("who", required=False)
    def greet(who):
        """Greet someone."""
        click.echo(f"hello {who or 'world'}")
'''

GREETER_WITHOUT_COMMAND = """
from mycode_core import hookimpl


@hookimpl
def build_context(context):
    return None
"""


@pytest.fixture
def sites(tmp_path: Path) -> dict[str, Path]:
    """PYTHONPATH folders: greeter installed, greeter broken, greeter v2 without ``greet``."""
    installed = tmp_path / "installed"
    write_plugin_dist(installed, "greeter", GREETER)
    broken = tmp_path / "broken"
    write_plugin_dist(broken, "greeter", 'raise RuntimeError("greeter is broken")\n')
    upgraded = tmp_path / "upgraded"
    write_plugin_dist(upgraded, "greeter", GREETER_WITHOUT_COMMAND, version="2.0.0")
    return {"installed": installed, "broken": broken, "upgraded": upgraded, "none": tmp_path}


@pytest.fixture
def run(cli: Any, sites: dict[str, Path], plugin_site: Path) -> Any:
    """``mycode ARGS`` with one of ``sites`` on PYTHONPATH."""

    def go(args: list[str], site: str = "installed", **env: str | None) -> Any:
        merged: dict[str, str | None] = {"MYCODE_LOAD_PLUGINS": None}
        merged.update(env)
        return cli(args, env=merged, pythonpath=[sites[site], plugin_site])

    return go


def _sessions(home: Path, run: Any) -> list[Any]:
    listed = run(["sessions", "--all", "--json"])
    return list(json.loads(listed.stdout))


def test_a_command_of_a_missing_plugin_is_a_usage_error(
    run: Any, home: Path, tmp_path: Path
) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "an agent ran"}])
    works = run(["greet", "you"])
    assert works.rc == 0 and works.stdout.strip() == "hello you", works.stderr

    cases = {
        "disabled": ({"MYCODE_DISABLE_PLUGINS": "greeter"}, "installed", "MYCODE_DISABLE_PLUGINS"),
        "not selected": ({"MYCODE_LOAD_PLUGINS": "coretools"}, "installed", "MYCODE_LOAD_PLUGINS"),
        "uninstalled": ({}, "none", "pip install mycode-test-greeter"),
        "broken": ({}, "broken", "failed to load"),
    }
    for label, (env, site, hint) in cases.items():
        for args in (
            ["greet"],
            ["greet", "you", "--model", model],
            ["-p", "greet", "--model", model, "--output-format", "stream-json"],
            ["--model", model, "greet"],
        ):
            result = run(args, site, **env)
            assert result.rc == 2, (label, args, result.stdout, result.stderr)
            assert result.events == [] and "an agent ran" not in result.stdout
            line = next(line for line in result.stderr.splitlines() if "greet" in line)
            assert "'greeter'" in line and hint in line, (label, line)
            assert "Traceback" not in result.stderr
    assert _sessions(home, run) == []


def test_prompts_that_are_not_a_known_command_still_run(run: Any, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "an agent ran"}])
    run(["--help"])  # records greeter's command in the cache
    disabled = {"MYCODE_DISABLE_PLUGINS": "greeter"}
    for args in (
        ["-p", "greet the user", "--model", model],  # one quoted prompt with spaces
        ["-p", "hello", "--model", model],  # a word no plugin registered
        ["-p", "/tmp is full", "--model", model],  # an existing folder: a path, not a command
        ["-p", "/tmp", "--model", model],
    ):
        result = run(args, **disabled)
        assert result.rc == 0 and "an agent ran" in result.stdout, (args, result.stderr)


def test_a_loaded_plugin_that_dropped_the_command_is_forgotten(run: Any, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "an agent ran"}])
    assert run(["greet"]).rc == 0
    upgraded = run(["-p", "greet", "--model", model], "upgraded")
    assert upgraded.rc == 0 and "an agent ran" in upgraded.stdout, upgraded.stderr
    # and the memory is gone: back on the old install but disabled, it is a prompt again
    again = run(["-p", "greet", "--model", model], "none")
    assert again.rc == 0 and "an agent ran" in again.stdout, again.stderr
