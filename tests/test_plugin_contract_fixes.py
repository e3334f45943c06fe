"""Issue 18, item 7: ``--completion-policy off`` silences every completion policy, and the
testing kit's ``mycode_run`` dispatches slash commands as the CLI does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core import ContextSection, hookimpl
from mycode_core.config import GateSettings
from mycode_core.records import CompletionVerdict, SlashCommand, SlashResult
from mycode_core.testing import (
    installed_plugin,
    system_prompt_for,
    write_plugin_dist,
    write_script,
    write_user_plugin,
)


class AlwaysFail:
    """A team policy that refuses every answer and counts how often it was asked."""

    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
        self.calls += 1
        return CompletionVerdict(verdict="fail", feedback="Never done.", source="always_fail")


def _write(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": "x"}}]}


def test_policy_off_calls_no_completion_verdict(mycode_run: Any) -> None:
    policy = AlwaysFail()
    turns = [_write("app.py"), {"content": "Done."}]
    events = mycode_run(
        turns, policy, installed_plugin("builtin_tools"), completion_gate=GateSettings(policy="off")
    )
    assert policy.calls == 0
    assert events[-1].type == "result" and events[-1].stop_reason == "completed"
    assert not [e for e in events if e.type == "guidance"]


def test_control_the_policy_is_asked_when_the_gate_is_on(mycode_run: Any) -> None:
    policy = AlwaysFail()
    turns = [_write("app.py"), *[{"content": "Done."}] * 5]
    events = mycode_run(turns, policy, installed_plugin("builtin_tools"))
    assert policy.calls >= 1
    assert events[-1].stop_reason == "gate_exhausted"


ALWAYS_FAIL_DIST = """
import json
from pathlib import Path
import os

from mycode_core import hookimpl
from mycode_core.records import CompletionVerdict


@hookimpl
def completion_verdict(final_text, observations, context):
    Path(os.environ["CALLED_MARKER"]).write_text("called")
    return CompletionVerdict(verdict="fail", feedback="Never done.", source="always_fail")
"""


def test_completion_policy_off_on_the_command_line(
    cli: Any, tmp_path: Path, plugin_site: Path
) -> None:
    site = tmp_path / "site"
    write_plugin_dist(site, "alwaysfail", ALWAYS_FAIL_DIST)
    marker = tmp_path / "called"
    model = write_script(tmp_path / "s.json", [{"content": "Done."}] * 5)
    env = {"MYCODE_LOAD_PLUGINS": "coretools,alwaysfail", "CALLED_MARKER": str(marker)}
    args = ["-p", "finish", "--model", model, "--output-format", "stream-json"]
    off = cli([*args, "--completion-policy", "off"], env=env, pythonpath=[site, plugin_site])
    assert off.rc == 0, off.stderr
    assert off.result is not None and off.result["stop_reason"] == "completed"
    assert not marker.exists()
    on = cli(args, env=env, pythonpath=[site, plugin_site])
    assert on.rc == 1 and marker.exists()  # control: the plugin is asked and blocks


class Greeter:
    """Slash commands: ``/greet NAME`` returns a prompt, ``/version`` only output."""

    @hookimpl
    def register_slash_commands(self, register: Any, context: Any) -> None:
        register(SlashCommand(name="greet", run=lambda args, ctx: f"Say hello to {args}."))
        register(SlashCommand(name="version", run=lambda args, ctx: SlashResult(output="v9")))


def test_mycode_run_dispatches_a_slash_command_returning_a_prompt(mycode_run: Any) -> None:
    events = mycode_run([{"content": "Hello, Ada!"}], Greeter(), prompt="/greet Ada")
    users = [e.content for e in events if e.type == "user"]
    assert users == ["Say hello to Ada."]
    assert events[-1].type == "result" and events[-1].stop_reason == "completed"


def test_mycode_run_slash_command_with_output_only_runs_no_turn(mycode_run: Any) -> None:
    events = mycode_run([{"content": "never asked"}], Greeter(), prompt="/version")
    assert [(e.type, e.message, e.source) for e in events] == [("notice", "v9", "/version")]


def test_mycode_run_sends_an_unknown_slash_prompt_to_the_model(mycode_run: Any) -> None:
    events = mycode_run([{"content": "ok"}], Greeter(), prompt="/nosuch thing")
    assert [e.content for e in events if e.type == "user"] == ["/nosuch thing"]


@pytest.mark.parametrize("error", [RuntimeError("no luck"), SystemExit(3)], ids=["error", "exit"])
def test_a_raising_slash_command_is_one_message_naming_its_plugin(
    mycode_run: Any, error: BaseException
) -> None:
    def boom(args: str, ctx: Any) -> Any:
        raise error

    class Boom:
        @hookimpl
        def register_slash_commands(self, register: Any, context: Any) -> None:
            register(SlashCommand(name="boom", run=boom))

    events = mycode_run([{"content": "never asked"}], Boom(), prompt="/boom now")
    ((kind, message),) = [(e.type, e.message) for e in events]
    assert kind == "notice" and message.startswith("/boom (plugin ")
    assert f"failed: {type(error).__name__}" in message


EVERYTHING = """
import json
from pathlib import Path

import click
from pydantic import BaseModel

from mycode_core import ContextSection, hookimpl, tool
from mycode_core.records import SlashCommand

HERE = Path(__file__).parent


class Options(BaseModel):
    level: int = 1


@tool(read_only=True)
def every_tool(text: str) -> str:
    \"\"\"Echo.\"\"\"
    return text


@hookimpl
def register_tools(register):
    register(every_tool)


@hookimpl
def register_settings(register):
    register("everything", Options)


@hookimpl
def build_context(context):
    return [ContextSection(title="Everything rules", text="be good")]


@hookimpl
def on_event(event, context):
    pass


@hookimpl
def register_slash_commands(register, context):
    register(SlashCommand(name="every", run=lambda args, ctx: None))


@hookimpl
def register_commands(cli):
    @cli.command(name="everycmd")
    def everycmd():
        \"\"\"Everything.\"\"\"


@hookimpl(optionalhook=True)
def register_skills(register, context):
    register(HERE / "skills" / "greeting")


@hookimpl(optionalhook=True)
def register_agent_profiles(register, context):
    register(HERE / "agents" / "reviewer.md")


@hookimpl
def completion_verdict(final_text, observations, context):
    return None
"""


def test_contributes_lists_every_kind(cli: Any, home: Path) -> None:
    write_user_plugin(home, "everything", EVERYTHING)
    env = {"MYCODE_LOAD_PLUGINS": "coretools,everything,skills,subagents"}
    check = cli(["plugins", "--check"], env=env)
    assert check.rc == 0, check.stdout + check.stderr
    rows = {row["name"]: row for row in json.loads(check.stdout)}
    assert rows["everything"]["source"] == "file"
    assert rows["everything"]["contributes"] == {
        "tools": ["every_tool"],
        "models": [],
        "policies": ["completion_verdict"],
        "commands": ["everycmd"],
        "slash_commands": ["every"],
        "skills": ["greeting"],
        "agent_profiles": ["reviewer"],
        "context_sections": ["Everything rules"],
        "observers": ["on_event"],
        "settings": ["everything"],
    }
    assert set(rows["coretools"]["contributes"]) == set(rows["everything"]["contributes"])


BAD_TOOL_NAME = """from mycode_core import hookimpl, tool


@tool(name="bad name!")
def shout(text: str) -> str:
    \"\"\"Shout.\"\"\"
    return text


@hookimpl
def register_tools(register):
    register(shout)
"""


def test_a_bad_tool_name_points_at_the_plugin_file_and_line(cli: Any, tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_plugin_dist(site, "badname", BAD_TOOL_NAME, module="mycode_badname")
    listing = cli(["plugins"], env={"MYCODE_LOAD_PLUGINS": "coretools,badname"}, pythonpath=[site])
    (row,) = [row for row in json.loads(listing.stdout) if row["name"] == "badname"]
    assert row["loaded"] is False and row["error_type"] == "ToolDefinitionError"
    assert f"(at {site / 'mycode_badname.py'}:4)" in row["error"]
    assert "tool name 'bad name!' is invalid" in row["error"]
    assert "pydantic" not in row["error"] and "Traceback" not in listing.stderr
    as_json = cli(
        ["plugins", "--json"], env={"MYCODE_LOAD_PLUGINS": "coretools,badname"}, pythonpath=[site]
    )  # the default output, accepted as `tools --json` is
    assert as_json.rc == 0 and json.loads(as_json.stdout) == json.loads(listing.stdout)


def test_a_tool_built_by_hand_with_a_bad_name_points_at_the_plugin(cli: Any, home: Path) -> None:
    source = (
        "from mycode_core import hookimpl\n"
        "from mycode_core.records import Tool\n"
        "\n"
        'BAD = Tool(name="no spaces allowed", description="x", handler=print)\n'
    )
    path = write_user_plugin(home, "handmade", source)
    listing = cli(["plugins"], env={"MYCODE_LOAD_PLUGINS": "coretools,handmade"})
    (row,) = [row for row in json.loads(listing.stdout) if row["name"] == "handmade"]
    assert f"(at {path}:4)" in row["error"], row["error"]


class Rules:
    """Two plain ``build_context`` contributions: a list and a bare string."""

    @hookimpl
    def build_context(self, context: Any) -> Any:
        return [ContextSection(title="House rules", text="Use tabs.")]


class MoreRules:
    @hookimpl
    def build_context(self, context: Any) -> Any:
        return ["Say please."]


class Reorder:
    """A ``wrapper=True`` build_context: records what it sees, returns it reversed (flat)."""

    def __init__(self) -> None:
        self.seen: list[Any] = []

    @hookimpl(wrapper=True)
    def build_context(self, context: Any) -> Any:
        sections = yield
        self.seen = list(sections)
        return [ContextSection(title="Wrapped", text="wrapper was here"), *sections]


def test_a_build_context_wrapper_sees_and_returns_a_flat_list(tmp_path: Path) -> None:
    wrapper = Reorder()
    prompt = system_prompt_for(tmp_path, Rules(), MoreRules(), wrapper)
    assert wrapper.seen and not [item for item in wrapper.seen if isinstance(item, list)]
    assert any(getattr(item, "title", "") == "House rules" for item in wrapper.seen)
    assert "Say please." in wrapper.seen
    assert "wrapper was here" in prompt and "Use tabs." in prompt and "Say please." in prompt
    assert "You are mycode" in prompt  # the built-in base instructions survive the wrapper


class Broken:
    @hookimpl
    def build_context(self, context: Any) -> Any:
        raise RuntimeError("context broke")


def test_a_failing_build_context_is_blamed_not_the_wrapper_around_it(tmp_path: Path) -> None:
    from mycode_core.runtime.setup import system_prompt
    from mycode_core.testing import make_context, make_plugin_manager

    wrapper = Reorder()
    pm = make_plugin_manager(Rules(), Broken(), wrapper)
    notices: list[str] = []
    prompt = system_prompt(pm, make_context(tmp_path), notices.append)
    broken = next(pm.get_name(p) for p in pm.get_plugins() if isinstance(p, Broken))
    assert len(notices) == 1 and repr(broken) in notices[0] and "context broke" in notices[0]
    assert "wrapper was here" in prompt and "Use tabs." in prompt and "You are mycode" in prompt
