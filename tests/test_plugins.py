"""Plugin loading: real entry points on PYTHONPATH, selection, blocking, broken plugins."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pluggy
import pytest

from mycode_core import hookimpl
from mycode_core.plugins import DEFAULT_PLUGINS, get_plugin_manager
from mycode_core.testing import make_context, write_plugin_dist, write_script

GOOD = """
from mycode_core import hookimpl
from mycode_core.records import ContextSection


@hookimpl
def build_context(context):
    return [ContextSection(title="Good", text="good plugin was here")]
"""

BROKEN = 'raise ImportError("kaboom from the broken plugin")\n'

# Records that it was imported (into the file named by $BOMB_MARKER), then crashes.
BOMB = """
import os
from pathlib import Path

Path(os.environ["BOMB_MARKER"]).write_text("imported")
raise RuntimeError("the bomb went off")
"""

MISSPELT = """
from mycode_core import hookimpl


@hookimpl
def register_tool(register, context):
    pass
"""


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A PYTHONPATH folder with the plugins ``good`` (v1.2.3), ``broken``, ``bomb``, ``typo``."""
    folder = tmp_path / "site"
    write_plugin_dist(folder, "good", GOOD, version="1.2.3")
    write_plugin_dist(folder, "broken", BROKEN)
    write_plugin_dist(folder, "bomb", BOMB)
    write_plugin_dist(folder, "typo", MISSPELT)
    return folder


@pytest.fixture
def run(cli, site: Path, plugin_site: Path, tmp_path: Path) -> Any:
    """``cli`` with ``site`` on PYTHONPATH; ``env`` replaces the plugin selection."""

    def go(args: list[str], **env: str | None) -> Any:
        merged: dict[str, str | None] = {
            "MYCODE_LOAD_PLUGINS": None,
            "BOMB_MARKER": str(tmp_path / "bomb-marker"),
        }
        merged.update(env)
        return cli(args, env=merged, pythonpath=[site, plugin_site])

    return go


def _names(stdout: str) -> list[str]:
    """The plugins listed as loaded (failed ones are listed with ``loaded: false``)."""
    return [row["name"] for row in json.loads(stdout) if row.get("loaded", True)]


def _lines_naming(stderr: str, name: str) -> list[str]:
    return [line for line in stderr.splitlines() if repr(name) in line or f" {name} " in line]


def test_a_broken_plugin_costs_one_line_and_the_rest_work(run: Any, tmp_path: Path) -> None:
    listing = run(["plugins"], MYCODE_LOAD_PLUGINS="good,broken,coretools")
    assert listing.rc == 0
    assert _names(listing.stdout) == ["coretools", "good"]
    failed = json.loads(listing.stdout)[-1]  # a plugin that failed to load is listed (issue 18)
    assert failed["loaded"] is False and failed["distribution"] == "mycode-test-broken"
    assert failed["error_type"] == "ImportError" and "kaboom" in failed["error"]
    assert len(_lines_naming(listing.stderr, "broken")) == 1
    assert "kaboom" in listing.stderr and "Traceback" not in listing.stderr

    model = write_script(
        tmp_path / "s.json",
        [{"tool_calls": [{"name": "echo", "arguments": {"text": "still works"}}]}],
    )
    for prompt in ("hello", "hello there"):  # a one-word prompt is checked against commands too
        agent = run(
            ["-p", prompt, "--model", model, "--output-format", "stream-json"],
            MYCODE_LOAD_PLUGINS="good,broken,coretools",
        )
        assert agent.rc == 0, agent.stderr
        assert len(_lines_naming(agent.stderr, "broken")) == 1, agent.stderr
        assert agent.events[0]["plugins"] == ["coretools", "good"]
        assert agent.of_type("tool_result")[0]["content"] == "still works"


def test_strict_mode_makes_a_broken_plugin_fatal(run: Any, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "hi"}])
    for args in (
        ["-p", "hello there", "--model", model],
        ["-p", "hello", "--model", model],
        ["plugins"],
    ):
        result = run(args, MYCODE_LOAD_PLUGINS="good,broken", MYCODE_STRICT_PLUGINS="1")
        assert result.rc == 2, (args, result.stderr)
        assert "broken" in result.stderr and "Traceback" not in result.stderr
        assert result.events == []


ECHO_AGAIN = """
from mycode_core import hookimpl, tool


@tool
def echo(text: str) -> str:
    '''Echo, a second time.'''
    return text


@hookimpl
def register_tools(register):
    register(echo)
"""


def test_strict_in_config_makes_load_and_tool_problems_fatal_too(
    run: Any, tmp_path: Path, home: Path, site: Path
) -> None:
    """SPEC §7: ``[plugins] strict = true`` is the config form of ``MYCODE_STRICT_PLUGINS``:
    a plugin that fails to load, or a tool name two plugins register, exits 2 before the run."""
    write_plugin_dist(site, "echoagain", ECHO_AGAIN)
    model = write_script(tmp_path / "s.json", [{"content": "hi"}])
    args = ["-p", "hello there", "--model", model, "--output-format", "stream-json"]
    for plugins, culprit in (("coretools,broken", "broken"), ("coretools,echoagain", "'echo'")):
        assert run(args, MYCODE_LOAD_PLUGINS=plugins).rc == 0
        (home / "config.toml").write_text("[plugins]\nstrict = true\n", "utf-8")
        result = run(args, MYCODE_LOAD_PLUGINS=plugins)
        (home / "config.toml").write_text("", "utf-8")
        assert result.rc == 2, (plugins, result.stderr)
        assert result.events == []
        last = result.stderr.strip().splitlines()[-1]
        assert culprit in last and "strict" in last and "Traceback" not in result.stderr


def test_load_plugins_selects_and_empty_loads_none(run: Any) -> None:
    assert _names(run(["plugins"], MYCODE_LOAD_PLUGINS="good").stdout) == ["good"]
    assert _names(run(["plugins"], MYCODE_LOAD_PLUGINS=" good , coretools ").stdout) == [
        "coretools",
        "good",
    ]
    empty = run(["plugins"], MYCODE_LOAD_PLUGINS="")
    assert empty.rc == 0 and json.loads(empty.stdout) == [] and empty.stderr == ""
    everything = run(["plugins", "--all"], MYCODE_LOAD_PLUGINS="")
    assert sorted(_names(everything.stdout)) == sorted(DEFAULT_PLUGINS)


def test_a_disabled_plugin_is_never_imported(run: Any, tmp_path: Path) -> None:
    marker = tmp_path / "bomb-marker"
    blocked = run(["plugins"], MYCODE_LOAD_PLUGINS="good,bomb", MYCODE_DISABLE_PLUGINS="bomb")
    assert blocked.rc == 0 and _names(blocked.stdout) == ["good"]
    assert "bomb" not in blocked.stderr
    assert not marker.exists()
    # control: without the block the plugin is imported (and reported as broken)
    loaded = run(["plugins"], MYCODE_LOAD_PLUGINS="good,bomb")
    assert marker.read_text() == "imported"
    assert len(_lines_naming(loaded.stderr, "bomb")) == 1 and _names(loaded.stdout) == ["good"]


def test_not_selected_means_not_imported(run: Any, tmp_path: Path) -> None:
    run(["plugins"], MYCODE_LOAD_PLUGINS="good")
    assert not (tmp_path / "bomb-marker").exists()


def test_a_misspelt_hook_is_reported_and_the_plugin_dropped(run: Any) -> None:
    result = run(["plugins"], MYCODE_LOAD_PLUGINS="good,typo")
    assert result.rc == 0 and _names(result.stdout) == ["good"]
    (line,) = _lines_naming(result.stderr, "typo")
    assert "register_tool" in line
    strict = run(["plugins"], MYCODE_LOAD_PLUGINS="good,typo", MYCODE_STRICT_PLUGINS="1")
    assert strict.rc == 2 and "register_tool" in strict.stderr


def test_check_pending_catches_a_misspelt_inline_plugin() -> None:
    class Typo:
        @hookimpl
        def stagnation_verdicts(self, observations: Any, context: Any) -> None:
            return None

    with pytest.raises(pluggy.PluginValidationError) as caught:
        get_plugin_manager(extra_plugins=[Typo()], load_entry_points=False)
    assert "stagnation_verdicts" in str(caught.value)


def test_plugins_command_json(run: Any) -> None:
    rows = json.loads(run(["plugins"], MYCODE_LOAD_PLUGINS="good,coretools").stdout)
    good = next(row for row in rows if row["name"] == "good")
    assert good["version"] == "1.2.3" and good["hooks"] == ["build_context"]
    assert good["builtin"] is False
    hooked = json.loads(
        run(["plugins", "--hook", "register_tools"], MYCODE_LOAD_PLUGINS="good,coretools").stdout
    )
    assert [row["name"] for row in hooked] == ["coretools"]
    context_rows = json.loads(
        run(["plugins", "--hook", "build_context"], MYCODE_LOAD_PLUGINS="good,coretools").stdout
    )
    names = [row["name"] for row in context_rows]
    assert "good" in names and "mycode_core.builtins.context" in names
    assert all("build_context" in row["hooks"] for row in context_rows)
    everything = json.loads(run(["plugins", "--all"], MYCODE_LOAD_PLUGINS="good").stdout)
    builtins = [row for row in everything if row["builtin"]]
    assert sorted(row["name"] for row in builtins) == sorted(DEFAULT_PLUGINS)
    unknown = run(["plugins", "--hook", "no_such_hook"], MYCODE_LOAD_PLUGINS="good")
    assert unknown.rc == 2 and "no_such_hook" in unknown.stderr


def test_default_plugins_load_first_and_extras_after(tmp_path: Path) -> None:
    class Extra:
        @hookimpl
        def build_context(self, context: Any) -> None:
            return None

    extra = Extra()
    pm = get_plugin_manager(extra_plugins=[extra], load_entry_points=False)
    names = [name for name, _ in pm.list_name_plugin()]
    assert names[: len(DEFAULT_PLUGINS)] == list(DEFAULT_PLUGINS)
    assert pm.is_registered(extra)
    # a fresh manager each time: the extra plugin does not leak into the next one
    assert not get_plugin_manager(load_entry_points=False).is_registered(extra)
    assert make_context(tmp_path).tools.names() == []
