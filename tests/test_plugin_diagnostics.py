"""Diagnosing plugins through real ``mycode`` subprocesses: ``plugins --check``, ``tools``,
strict mode, and broken plugins costing one line each while the rest go on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import write_plugin_dist, write_script

KIT = '''
"""A plugin contributing one of everything."""
import click

from mycode_core import SlashCommand, hookimpl, tool
from mycode_core.records import ModelProvider


@tool(read_only=True)
def shout(text: str, times: int = 1) -> str:
    """Repeat text loudly."""
    return " ".join([text.upper()] * times)


@hookimpl
def register_tools(register, context):
    register(shout)


@hookimpl
def register_models(register):
    register(ModelProvider(prefix="kitmodel", factory=lambda model_id, settings: None))


@hookimpl
def stagnation_verdict(observations, context):
    return None


@hookimpl
def register_commands(cli):
    @cli.command(name="kit-hello")
    def hello():
        """Say hello from kit."""
        click.echo("hello from kit")


@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="kit", run=lambda args, context: "do kit things"))
'''

BROKEN = 'import json\n\nraise ImportError("kaboom from the broken plugin")\n'

WRONGSIG = """
from mycode_core import hookimpl


@hookimpl
def build_context(context, colour):
    return None
"""

FORGOT = """
from mycode_core import hookimpl


def build_context(context):
    return ["never seen"]


def register_tols(register, context):
    pass


@hookimpl
def on_event(event, context):
    return None
"""

BADNAME = """
from mycode_core import hookimpl
from mycode_core.records import Tool


@hookimpl
def register_tools(register, context):
    register(Tool(name="bad schema", description="x", handler=lambda a, c: "x"))
"""

BADSCHEMA = """
from mycode_core import hookimpl
from mycode_core.records import Tool

@hookimpl
def register_tools(register, context):
    register(Tool(name="typo_schema", description="x", handler=lambda a, c: "x",
                  input_schema={"type": "object", "properties": {"n": {"type": "strnig"}}}))
"""

DUPTOOL = """
from mycode_core import hookimpl, tool


@tool
def shout(text: str) -> str:
    \"\"\"A second shout.\"\"\"
    return text


@tool
def fine_tool(n: int) -> int:
    \"\"\"Still registered.\"\"\"
    return n


@hookimpl
def register_tools(register, context):
    register(shout)
    register(fine_tool)
"""

RAISER = """
from mycode_core import hookimpl, tool


@tool
def explode() -> str:
    \"\"\"Always raises.\"\"\"
    raise RuntimeError("the handler blew up")


@hookimpl
def register_tools(register, context):
    register(explode)


@hookimpl
def build_context(context):
    raise RuntimeError("context exploded")
"""

FAILCMD = """
from mycode_core import hookimpl


@hookimpl
def register_commands(cli):
    @cli.command(name="fail-cmd")
    def fail():
        \"\"\"Always raises.\"\"\"
        raise ValueError("the command handler blew up")
"""

ALL_BAD = "broken,wrongsig,forgot,badname,badschema,duptool,raiser"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A PYTHONPATH folder with the plugins above (``kit`` is version 2.0.1)."""
    folder = tmp_path_factory.mktemp("diag-site")
    write_plugin_dist(folder, "kit", KIT, version="2.0.1")
    for name, source in (
        ("broken", BROKEN),
        ("wrongsig", WRONGSIG),
        ("forgot", FORGOT),
        ("badname", BADNAME),
        ("badschema", BADSCHEMA),
        ("duptool", DUPTOOL),
        ("raiser", RAISER),
        ("failcmd", FAILCMD),
    ):
        write_plugin_dist(folder, name, source)
    return folder


@pytest.fixture
def run(cli: Any, site: Path, plugin_site: Path) -> Any:
    """``mycode ARGS`` with ``site`` on PYTHONPATH and ``MYCODE_LOAD_PLUGINS=load``."""

    def go(args: list[str], load: str, **env: str | None) -> Any:
        merged: dict[str, str | None] = {"MYCODE_LOAD_PLUGINS": load}
        merged.update(env)
        return cli(args, env=merged, pythonpath=[site, plugin_site])

    return go


def _rows(stdout: str) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in json.loads(stdout)}


def _lines_naming(stderr: str, name: str) -> list[str]:
    return [line for line in stderr.splitlines() if repr(name) in line]


def test_plugins_lists_distribution_and_version(run: Any) -> None:
    result = run(["plugins"], "kit,coretools")
    assert result.rc == 0, result.stderr
    kit = _rows(result.stdout)["kit"]
    assert kit["distribution"] == "mycode-test-kit" and kit["version"] == "2.0.1"
    assert "register_tools" in kit["hooks"]
    everything = _rows(run(["plugins", "--all"], "kit").stdout)
    assert everything["mycode_core.builtins.models"]["distribution"] == "mycode-core"


def test_check_of_healthy_plugins_lists_contributions_and_exits_0(run: Any) -> None:
    result = run(["plugins", "--check"], "kit,coretools")
    assert result.rc == 0, result.stderr
    rows = _rows(result.stdout)
    kit = rows["kit"]
    assert kit["loaded"] is True and kit["problems"] == []
    assert kit["contributes"] == {
        "tools": ["shout"],
        "models": ["kitmodel"],
        "policies": ["stagnation_verdict"],
        "commands": ["kit-hello"],
        "slash_commands": ["kit"],
        "skills": [],
        "agent_profiles": [],
        "context_sections": [],
        "observers": [],
        "settings": [],
    }
    assert rows["coretools"]["contributes"]["tools"][:2] == ["echo", "write_note"]
    assert "mycode_core.builtins.models" not in rows
    with_builtins = _rows(run(["plugins", "--check", "--all"], "kit").stdout)
    assert with_builtins["mycode_core.builtins.models"]["contributes"]["models"]
    hooked = _rows(run(["plugins", "--check", "--hook", "register_models"], "kit,coretools").stdout)
    assert "kit" in hooked and "coretools" not in hooked
    unknown = run(["plugins", "--check", "--hook", "no_such_hook"], "kit")
    assert unknown.rc == 2 and "no_such_hook" in unknown.stderr


def test_check_explains_every_broken_plugin_and_exits_1(run: Any) -> None:
    result = run(["plugins", "--check"], f"kit,{ALL_BAD}")
    assert result.rc == 1
    rows = _rows(result.stdout)

    (broken,) = rows["broken"]["problems"]
    assert rows["broken"]["loaded"] is False
    assert rows["broken"]["distribution"] == "mycode-test-broken"
    assert broken["error_type"] == "ImportError"
    assert "kaboom from the broken plugin" in broken["message"]
    assert "Traceback (most recent call last)" in broken["traceback"]
    assert "mycode_test_broken.py" in broken["traceback"]

    (wrong,) = rows["wrongsig"]["problems"]
    assert rows["wrongsig"]["loaded"] is False
    assert wrong["error_type"] == "PluginValidationError"
    # pluggy's whole validation message, every line of it
    assert "hookimpl definition: build_context(context, colour)" in wrong["detail"]
    assert "{'colour'} are declared in the hookimpl" in wrong["detail"]
    assert "the hookspec is build_context(context)" in wrong["message"]

    forgot = [p["message"] for p in rows["forgot"]["problems"]]
    assert rows["forgot"]["loaded"] is True
    assert any("build_context()" in m and "forgot @hookimpl?" in m for m in forgot), forgot
    assert any("register_tols()" in m and "register_tools" in m for m in forgot), forgot
    assert not any("on_event" in m for m in forgot)

    (badname,) = rows["badname"]["problems"]
    assert "bad schema" in badname["message"] and "^[a-zA-Z0-9_-]{1,64}$" in badname["message"]
    assert "Traceback" in badname["traceback"]
    (badschema,) = rows["badschema"]["problems"]
    assert "typo_schema" in badschema["message"] and "schema" in badschema["message"]

    (dup,) = rows["duptool"]["problems"]
    assert "'kit'" in dup["message"] and "'duptool'" in dup["message"]
    assert rows["duptool"]["contributes"]["tools"] == ["fine_tool"]

    assert rows["raiser"]["contributes"]["tools"] == ["explode"]
    assert rows["kit"]["problems"] == [] and rows["kit"]["contributes"]["tools"] == ["shout"]

    # stderr: one line per problem, never a traceback
    assert "Traceback" not in result.stderr
    for name in ("broken", "wrongsig", "forgot", "badname", "badschema", "duptool"):
        assert _lines_naming(result.stderr, name), (name, result.stderr)


def test_tools_lists_what_a_run_offers_with_the_plugin_of_each(run: Any) -> None:
    result = run(["tools", "--json"], "kit,coretools,duptool,badname")
    assert result.rc == 0, result.stderr
    rows = json.loads(result.stdout)
    by_name = {row["name"]: row for row in rows}
    assert set(rows[0]) - {"shadowed"} == {
        "name",
        "plugin",
        "description",
        "read_only",
        "parameters",
    }
    assert by_name["shout"]["plugin"] == "kit" and by_name["shout"]["read_only"] is True
    assert by_name["shout"]["shadowed"] == ["duptool"]  # SPEC §7: the winner names the loser
    assert "shadowed" not in by_name["echo"]
    assert by_name["shout"]["description"] == "Repeat text loudly."
    assert by_name["shout"]["parameters"]["required"] == ["text"]
    assert by_name["fine_tool"]["plugin"] == "duptool"
    assert by_name["echo"]["plugin"] == "coretools"
    assert "bad schema" not in by_name
    assert len(_lines_naming(result.stderr, "badname")) == 1
    assert len(_lines_naming(result.stderr, "duptool")) == 1
    assert "Traceback" not in result.stderr

    table = run(["tools"], "kit,coretools")
    assert table.rc == 0
    shout_line = next(line for line in table.stdout.splitlines() if line.startswith("shout"))
    assert shout_line.split() == ["shout", "kit", "yes", "text,", "times?"]
    assert table.stdout.splitlines()[0].split() == ["NAME", "PLUGIN", "READ-ONLY", "PARAMETERS"]


def test_broken_plugins_cost_one_line_each_and_the_run_goes_on(run: Any, tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [
            {"tool_calls": [{"name": "explode", "arguments": {}}]},
            {"tool_calls": [{"name": "shout", "arguments": {"text": "still works"}}]},
        ],
    )
    for prompt in ("go", "go on then"):
        result = run(
            ["-p", prompt, "--model", model, "--output-format", "stream-json"],
            f"kit,coretools,{ALL_BAD}",
        )
        assert result.rc == 0, result.stderr
        assert "Traceback" not in result.stderr
        for name in ("broken", "wrongsig", "badname", "badschema", "duptool", "raiser"):
            lines = _lines_naming(result.stderr, name) + [
                event["message"]
                for event in result.of_type("notice")
                if repr(name) in event["message"]
            ]
            assert lines, (name, result.stderr)
            assert all("\n" not in line for line in lines)
        system = result.events[0]
        errors = {error["plugin"]: error for error in system["plugin_errors"]}
        assert set(errors) == {"broken", "wrongsig"}
        assert errors["broken"]["error_type"] == "ImportError"
        assert "{'colour'}" in errors["wrongsig"]["detail"]
        assert "traceback" not in errors["broken"]
        explode, shout = result.of_type("tool_result")
        assert explode["is_error"] is True and "the handler blew up" in explode["content"]
        assert shout["is_error"] is False and shout["content"] == "STILL WORKS"
        assert result.result is not None and result.result["stop_reason"] == "completed"


def test_strict_mode_exits_2_with_the_full_reason_on_one_line(run: Any, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "hi"}])
    for args in (["-p", "hello there", "--model", model], ["plugins"], ["tools"]):
        result = run(args, "kit,wrongsig", MYCODE_STRICT_PLUGINS="1")
        assert result.rc == 2, (args, result.stderr)
        assert result.events == [] and "Traceback" not in result.stderr
        (line,) = [line for line in result.stderr.splitlines() if "wrongsig" in line]
        assert "{'colour'} are declared in the hookimpl" in line, line
        assert "build_context(context)" in line and "MYCODE_STRICT_PLUGINS" in line
    for args in (["-p", "hello there", "--model", model], ["tools"]):
        bad_tool = run(args, "kit,badname", MYCODE_STRICT_PLUGINS="1")
        assert bad_tool.rc == 2, (args, bad_tool.stderr)
        assert bad_tool.events == [] and "Traceback" not in bad_tool.stderr
        (line,) = [line for line in bad_tool.stderr.splitlines() if "badname" in line]
        assert "bad schema" in line and "MYCODE_STRICT_PLUGINS" in line
    # --check still reports everything in strict mode
    checked = run(["plugins", "--check"], "kit,wrongsig", MYCODE_STRICT_PLUGINS="1")
    assert checked.rc == 1 and _rows(checked.stdout)["kit"]["loaded"] is True


def test_a_plugin_command_that_raises_is_one_line_and_the_log_has_the_traceback(
    run: Any, home: Path
) -> None:
    result = run(["fail-cmd"], "failcmd,kit")
    assert result.rc == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert "'fail-cmd'" in line and "'failcmd'" in line
    assert "ValueError: the command handler blew up" in line
    log = (home / "logs" / "plugin-errors.log").read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in log and "the command handler blew up" in log
    assert run(["kit-hello"], "failcmd,kit").stdout.strip() == "hello from kit"
