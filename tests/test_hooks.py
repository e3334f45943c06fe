"""One test (at least) per hookspec, each through an inline plugin; and the hooks' documentation.

Every function in :mod:`mycode_core.hookspecs` must have a docstring, a section in README's
plugin guide, and a test here whose name starts with ``test_<hook name>``.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from mycode_core import hookimpl, hookspecs
from mycode_core.cli.run import exit_code_for
from mycode_core.errors import SetupError
from mycode_core.records import (
    CompletionVerdict,
    ContextSection,
    ModelProvider,
    PermissionVerdict,
    StagnationVerdict,
    Tool,
    ToolResult,
)
from mycode_core.testing import (
    TurnsModel,
    make_plugin_manager,
    make_runner,
    run_events,
    tools_plugin,
    write_plugin_dist,
)

ROOT = Path(__file__).resolve().parents[1]
HOOK_NAMES = sorted(
    name
    for name, value in vars(hookspecs).items()
    if inspect.isfunction(value) and hasattr(value, f"{hookspecs.PROJECT}_spec")
)


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def noop_tool(name: str = "noop", calls: list[str] | None = None) -> Tool:
    def handler(arguments: dict[str, Any], context: Any) -> str:
        if calls is not None:
            calls.append(name)
        return f"{name} ran"

    return Tool(name=name, description="Does nothing.", handler=handler)


def tool_turn(*names: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": {}} for name in names]}


# --- documentation ---------------------------------------------------------------------------


def test_the_hook_list_is_complete() -> None:
    assert HOOK_NAMES == sorted(
        [
            "add_hookspecs",
            "build_context",
            "compact_context",
            "completion_verdict",
            "on_event",
            "permission_verdict",
            "register_commands",
            "register_models",
            "register_settings",
            "register_slash_commands",
            "register_tools",
            "stagnation_verdict",
            "summarize_context",
            "view_message",
            # issue 12: lifecycle points
            "session_start",
            "user_prompt_verdict",
            "tool_result_verdict",
            "session_end",
            "notification",
            "plugin_details",
            # issue 18: transforms
            "transform_tool_result",
            "transform_system_prompt",
        ]
    )


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_every_hookspec_has_a_docstring(name: str) -> None:
    doc = inspect.getdoc(getattr(hookspecs, name)) or ""
    assert len(doc.split()) >= 15, f"{name} needs a real docstring"
    opts = getattr(getattr(hookspecs, name), f"{hookspecs.PROJECT}_spec")
    if opts.get("firstresult"):
        assert "first non-" in doc, f"{name} is firstresult: its docstring must say so"


class Asker:
    """A policy that asks the person before every tool call."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    @hookimpl
    def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
        return PermissionVerdict(decision="ask", reason=self.reason)


def _plugin_guide() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^## Plugin guide\s*$(.*?)(?=^## )", text + "\n## end", re.S | re.M)
    assert match, "README.md needs a '## Plugin guide' section"
    return match.group(1)


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_every_hookspec_is_documented_in_the_plugin_guide(name: str) -> None:
    guide = _plugin_guide()
    assert re.search(rf"`{name}(\(|`)", guide), f"README's plugin guide does not document {name}"


@pytest.mark.parametrize("name", HOOK_NAMES)
def test_every_hookspec_has_a_test(name: str) -> None:
    source = Path(__file__).read_text(encoding="utf-8")
    assert re.search(rf"^def test_{name}\w*\(", source, re.M), f"no test_{name}* here"


# --- register_tools --------------------------------------------------------------------------


def test_register_tools_contributes_tools_tagged_with_their_plugin(tmp_path: Path) -> None:
    seen: list[Path] = []

    class Plugin:
        @hookimpl
        def register_tools(self, register: Any, context: Any) -> None:
            seen.append(context.workspace)
            register(noop_tool("hello"))

    runner = make_runner(tmp_path, Plugin(), turns=[tool_turn("hello")])
    events = run_events(runner)
    assert seen == [runner.workspace]
    assert "hello" in events[0].tools
    (result,) = _of(events, "tool_result")
    assert (result.content, result.is_error) == ("hello ran", False)
    tool = runner.context.tools.get("hello")
    assert tool is not None and tool.plugin  # tagged with the registering plugin


def test_register_tools_failures_and_duplicates_are_notices(tmp_path: Path) -> None:
    class Broken:
        @hookimpl
        def register_tools(self, register: Any, context: Any) -> None:
            raise RuntimeError("no tools today")

    runner = make_runner(
        tmp_path,
        Broken(),
        tools_plugin(noop_tool("dup")),
        tools_plugin(noop_tool("dup")),
        tools_plugin(noop_tool("other")),
        turns=[],
    )
    events = run_events(runner)
    notices = " | ".join(n.message for n in _of(events, "notice"))
    assert "no tools today" in notices
    assert "'dup'" in notices and "registered by both" in notices
    (system,) = _of(events, "system")
    assert {"dup", "other"} <= set(system.tools)
    assert events[-1].stop_reason == "completed"


# --- register_models -------------------------------------------------------------------------


def test_register_models_selects_a_provider_by_prefix(tmp_path: Path) -> None:
    made: list[tuple[str, Any]] = []
    model = TurnsModel([{"content": "from my provider"}])

    class Provider:
        @hookimpl
        def register_models(self, register: Any) -> None:
            def factory(model_id: str, settings: Any) -> Any:
                made.append((model_id, settings))
                return model

            register(ModelProvider(prefix="mine", factory=factory))

    runner = make_runner(tmp_path, Provider(), model="mine:big-model")
    events = run_events(runner)
    assert events[-1].final_text == "from my provider"
    assert made[0][0] == "mine:big-model" and made[0][1] is runner.settings
    assert len(model.calls) == 1


def test_register_models_unknown_model_without_endpoint_is_a_setup_error(tmp_path: Path) -> None:
    runner = make_runner(tmp_path, model="some-model")
    with pytest.raises(SetupError) as caught:
        runner.prepare()
    runner.close()
    assert "API key" in str(caught.value) or "base-url" in str(caught.value)


# --- register_commands -----------------------------------------------------------------------


def test_register_commands_adds_a_subcommand() -> None:
    class Commands:
        @hookimpl
        def register_commands(self, cli: click.Group) -> None:
            @cli.command(name="greet")
            @click.argument("who")
            def greet(who: str) -> None:
                """Say hello."""
                click.echo(f"hello {who}")

    group = click.Group("mycode")
    make_plugin_manager(Commands()).hook.register_commands(cli=group)
    result = CliRunner().invoke(group, ["greet", "world"])
    assert result.exit_code == 0 and result.stdout == "hello world\n"


def test_register_commands_through_the_real_cli(
    cli: Any, tmp_path: Path, plugin_site: Path
) -> None:
    site = tmp_path / "cmdsite"
    write_plugin_dist(
        site,
        "greeter",
        '''
import click
from mycode_core import hookimpl


@hookimpl
def register_commands(cli):
    @cli.command(name="greet")
    @click.argument("who")
    def greet(who):
        """Say hello from a plugin."""
        click.echo(f"hello {who} from a plugin")
''',
    )
    env = {"MYCODE_LOAD_PLUGINS": "greeter"}
    run = cli(["greet", "you"], env=env, pythonpath=[site])
    assert (run.rc, run.stdout) == (0, "hello you from a plugin\n"), run.stderr
    helped = cli(["--help"], env=env, pythonpath=[site])
    assert helped.rc == 0 and "greet" in helped.stdout


# --- build_context ---------------------------------------------------------------------------


def test_build_context_sections_enter_the_system_prompt_by_priority(tmp_path: Path) -> None:
    class Context:
        @hookimpl
        def build_context(self, context: Any) -> list[Any]:
            return [
                ContextSection(title="Team rules", text="Always write tests.", priority=5),
                ContextSection(title="Late", text="Said last.", priority=99),
            ]

    class Failing:
        @hookimpl
        def build_context(self, context: Any) -> None:
            raise RuntimeError("context broke")

    runner = make_runner(tmp_path, Context(), Failing(), turns=[{"content": "ok"}])
    events = run_events(runner)
    system = runner.turns_model.calls[0]["messages"][0]
    assert system["role"] == "system"
    text = system["content"]
    assert "# Team rules\n\nAlways write tests." in text
    assert text.index("You are mycode") < text.index("Team rules") < text.index("# Environment")
    assert text.rstrip().endswith("Said last.")
    assert any("context broke" in n.message for n in _of(events, "notice"))
    assert events[-1].stop_reason == "completed"


# --- permission_verdict ----------------------------------------------------------------------


def test_permission_verdict_deny_returns_an_error_result(tmp_path: Path) -> None:
    calls: list[str] = []

    class Policy:
        @hookimpl
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            if call.name == "danger":
                return PermissionVerdict(
                    decision="deny", reason="too risky", rule="danger(*)", layer="project"
                )
            return None

    runner = make_runner(
        tmp_path,
        Policy(),
        tools_plugin(noop_tool("danger", calls), noop_tool("safe", calls)),
        turns=[tool_turn("danger", "safe")],
    )
    events = run_events(runner)
    results = {r.name: r for r in _of(events, "tool_result")}
    assert results["danger"].is_error and "too risky" in results["danger"].content
    assert "danger(*)" in results["danger"].content and "project" in results["danger"].content
    assert not results["safe"].is_error
    assert calls == ["safe"]
    permissions = {p.name: p for p in _of(events, "permission")}
    assert (
        permissions["danger"].decision,
        permissions["danger"].rule,
        permissions["danger"].layer,
    ) == ("deny", "danger(*)", "project")
    assert permissions["safe"].decision == "allow"


def test_permission_verdict_ask_is_denied_without_a_person(tmp_path: Path) -> None:
    calls: list[str] = []
    runner = make_runner(
        tmp_path,
        Asker("needs a human"),
        tools_plugin(noop_tool("act", calls)),
        turns=[tool_turn("act")],
    )
    (result,) = _of(run_events(runner), "tool_result")
    assert result.is_error and "non-interactive" in result.content
    assert calls == []


def test_permission_verdict_first_result_wins(tmp_path: Path) -> None:
    class Allow:
        @hookimpl(tryfirst=True)
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            return PermissionVerdict(decision="allow", reason="first")

    class Deny:
        @hookimpl
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            return PermissionVerdict(decision="deny", reason="second")

    runner = make_runner(
        tmp_path, Deny(), Allow(), tools_plugin(noop_tool("act")), turns=[tool_turn("act")]
    )
    (result,) = _of(run_events(runner), "tool_result")
    assert not result.is_error


# --- stagnation_verdict ----------------------------------------------------------------------


def test_stagnation_verdict_guide_then_stop(tmp_path: Path) -> None:
    counts: list[int] = []

    class Judge:
        @hookimpl
        def stagnation_verdict(self, observations: list[Any], context: Any) -> Any:
            counts.append(len(observations))
            if len(observations) == 2:
                return StagnationVerdict(action="guide", pattern="mine", message="try else")
            if len(observations) == 3:
                return StagnationVerdict(action="stop", pattern="mine", message="give up")
            return StagnationVerdict(action="continue")

    runner = make_runner(
        tmp_path, Judge(), tools_plugin(noop_tool()), turns=[tool_turn("noop")] * 5
    )
    events = run_events(runner)
    assert counts == [1, 2, 3]  # after every batch, with every observation so far
    guidance = _of(events, "guidance")
    assert [(g.source, g.pattern, g.message) for g in guidance] == [
        ("stagnation", "mine", "try else"),
        ("stagnation", "mine", "give up"),
    ]
    result = events[-1]
    assert result.stop_reason == "stagnation" and exit_code_for(result.stop_reason) == 1
    assert "try else" in runner.turns_model.calls[2]["messages"][-1]["content"]


# --- completion_verdict ----------------------------------------------------------------------


def test_completion_verdict_fail_sends_feedback_then_pass(tmp_path: Path) -> None:
    verdicts = iter(
        [
            CompletionVerdict(verdict="fail", feedback="run the tests first", source="my_gate"),
            CompletionVerdict(verdict="pass"),
        ]
    )
    seen: list[str] = []

    class Gate:
        @hookimpl
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            seen.append(final_text)
            return next(verdicts)

    runner = make_runner(tmp_path, Gate(), turns=[{"content": "done!"}, {"content": "really done"}])
    events = run_events(runner)
    assert seen == ["done!", "really done"]
    (guidance,) = _of(events, "guidance")
    assert (guidance.source, guidance.message) == ("my_gate", "run the tests first")
    assert "run the tests first" in runner.turns_model.calls[1]["messages"][-1]["content"]
    result = events[-1]
    assert (result.stop_reason, result.verdict, result.final_text) == (
        "completed",
        "pass",
        "really done",
    )


def test_completion_verdict_unverified_completes_and_fail_is_bounded(tmp_path: Path) -> None:
    class Unsure:
        @hookimpl
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            return CompletionVerdict(verdict="unverified", feedback="No tests to run here.")

    events = run_events(make_runner(tmp_path / "a", Unsure(), turns=[]))
    assert (events[-1].stop_reason, events[-1].verdict) == ("completed", "unverified")
    assert [n.message for n in _of(events, "notice")] == ["No tests to run here."]  # said why

    class Never:
        @hookimpl
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            return CompletionVerdict(verdict="fail", feedback="no")

    runner = make_runner(tmp_path / "b", Never(), turns=[], completion_gate={"max_blocks": 2})
    events = run_events(runner)
    assert len(_of(events, "guidance")) == 2
    assert (events[-1].stop_reason, events[-1].verdict) == ("gate_exhausted", "fail")
    assert exit_code_for("gate_exhausted") == 1
    assert len(runner.turns_model.calls) == 3


def test_completion_verdict_wrapper_can_veto(tmp_path: Path) -> None:
    class Lenient:
        @hookimpl
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            return CompletionVerdict(verdict="pass")

    class Veto:
        @hookimpl(wrapper=True)
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            inner = yield
            if "verified" not in final_text:
                return CompletionVerdict(
                    verdict="fail", feedback="say how you verified it", source="veto"
                )
            return inner

    runner = make_runner(
        tmp_path, Lenient(), Veto(), turns=[{"content": "done"}, {"content": "done and verified"}]
    )
    events = run_events(runner)
    assert [(g.source, g.message) for g in _of(events, "guidance")] == [
        ("veto", "say how you verified it")
    ]
    assert (events[-1].stop_reason, events[-1].verdict) == ("completed", "pass")


def test_completion_verdict_crash_counts_as_unverified(tmp_path: Path) -> None:
    class Crash:
        @hookimpl
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            raise RuntimeError("gate crashed")

    events = run_events(make_runner(tmp_path, Crash(), turns=[]))
    assert (events[-1].stop_reason, events[-1].verdict) == ("completed", "unverified")
    assert any("gate crashed" in n.message for n in _of(events, "notice"))


# --- compact_context -------------------------------------------------------------------------


def test_compact_context_replaces_the_view(tmp_path: Path) -> None:
    budgets: list[int] = []

    class Compactor:
        @hookimpl
        def compact_context(self, messages: list[Any], budget: int, context: Any) -> Any:
            budgets.append(budget)
            return [messages[0], {"role": "user", "content": "SUMMARY OF EVERYTHING"}]

    runner = make_runner(
        tmp_path,
        Compactor(),
        tools_plugin(noop_tool()),
        turns=[tool_turn("noop"), {"error": {"kind": "context_length"}}, {"content": "ok"}],
    )
    events = run_events(runner)
    assert len(_of(events, "compaction")) == 1
    assert budgets and all(isinstance(b, int) and b > 0 for b in budgets)
    last = runner.turns_model.calls[-1]["messages"]
    assert [m["role"] for m in last] == ["system", "user"]
    assert last[1]["content"] == "SUMMARY OF EVERYTHING"
    assert len(runner.history) == 4  # task, call, result, final answer: history untouched
    assert events[-1].stop_reason == "completed"


# --- on_event --------------------------------------------------------------------------------


def test_on_event_observes_every_event_in_order(tmp_path: Path) -> None:
    seen: list[Any] = []

    class Observer:
        @hookimpl
        def on_event(self, event: Any, context: Any) -> None:
            seen.append(event)

    class Noisy:
        @hookimpl
        def on_event(self, event: Any) -> None:
            raise RuntimeError("observer broke")

    runner = make_runner(
        tmp_path, Observer(), Noisy(), tools_plugin(noop_tool()), turns=[tool_turn("noop")]
    )
    events = run_events(runner)  # closes the runner: observers have caught up
    observed = [e.type for e in seen if e.type != "notice"]
    assert observed[0] == "system" and observed[-1] == "result"
    assert observed == [e.type for e in events if e.type != "notice"]
    # the failure is reported once (observers run on their own threads, so the notice may
    # come after the run's last event; the other observers still see it)
    notices = [n for n in _of(seen, "notice") if "observer broke" in n.message]
    assert len(notices) == 1
    assert events[-1].stop_reason == "completed"


# --- issue 12: lifecycle points --------------------------------------------------------------


def test_session_start_lines_are_pinned_in_the_system_prompt(tmp_path: Path) -> None:
    sources: list[str] = []

    class Start:
        @hookimpl
        def session_start(self, source: str, context: Any) -> list[str]:
            sources.append(source)
            return ["Answer in haiku."]

    runner = make_runner(tmp_path, Start(), turns=[{"content": "ok"}])
    events = run_events(runner)
    system = runner.turns_model.calls[0]["messages"][0]["content"]
    assert system.rstrip().endswith("Answer in haiku.")
    assert sources == ["startup"]
    assert events[-1].stop_reason == "completed"


def test_user_prompt_verdict_adds_context_and_blocks(tmp_path: Path) -> None:
    from mycode_core.records import PromptVerdict

    class Judge:
        @hookimpl
        def user_prompt_verdict(self, prompt: str, context: Any) -> Any:
            if "secret" in prompt:
                return PromptVerdict(block=True, reason="no secrets", source="judge")
            return PromptVerdict(context=["The repo uses tabs."])

    runner = make_runner(tmp_path / "a", Judge(), turns=[{"content": "ok"}])
    run_events(runner)
    user = runner.turns_model.calls[0]["messages"][1]["content"]
    assert user.startswith("do the task") and "The repo uses tabs." in user

    runner = make_runner(tmp_path / "b", Judge(), turns=[{"content": "ok"}])
    events = run_events(runner, "print the secret")
    assert runner.turns_model.calls == []  # the model never saw it
    assert any("no secrets" in n.message for n in _of(events, "notice"))
    assert events[-1].stop_reason == "interrupted" and "no secrets" in (events[-1].error or "")


def test_tool_result_verdict_feedback_reaches_the_model(tmp_path: Path) -> None:
    seen: list[tuple[str, bool]] = []

    class Review:
        @hookimpl
        def tool_result_verdict(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            seen.append((call.name, result.is_error))
            return ["Remember to run the linter."]

    runner = make_runner(
        tmp_path, Review(), tools_plugin(noop_tool("hello")), turns=[tool_turn("hello")]
    )
    events = run_events(runner)
    (tool_msg,) = [m for m in runner.turns_model.calls[1]["messages"] if m["role"] == "tool"]
    assert tool_msg["content"].startswith("hello ran")
    assert "Remember to run the linter." in tool_msg["content"]
    (result,) = _of(events, "tool_result")
    assert result.content == "hello ran"  # the event keeps the tool's own output
    assert seen == [("hello", False)]


def test_transform_tool_result_chains_in_plugin_order_and_keeps_the_original(
    tmp_path: Path,
) -> None:
    seen: list[str] = []

    class Redact:
        @hookimpl(tryfirst=True)
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            seen.append(f"redact:{result.text()}")
            text = result.text().replace("ran", "[x]")
            return ToolResult(content=text, is_error=result.is_error, call_id=call.id)

    class Shout:
        @hookimpl
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            seen.append(f"shout:{result.text()}")
            return ToolResult(content=result.text().upper(), is_error=result.is_error)

    class Pass:
        @hookimpl(trylast=True)
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            seen.append(f"pass:{result.text()}")

    runner = make_runner(
        tmp_path,
        Pass(),
        Shout(),
        Redact(),
        tools_plugin(noop_tool("hello")),
        turns=[tool_turn("hello", "nosuch")],
    )
    events = run_events(runner)
    chain = [step for step in seen if "unknown" not in step.lower()]
    assert chain == ["redact:hello ran", "shout:hello [x]", "pass:HELLO [X]"]
    hello, unknown = sorted(_of(events, "tool_result"), key=lambda r: r.name)
    assert hello.content == "HELLO [X]" and hello.original == {
        "content": "hello ran",
        "is_error": False,
    }
    assert unknown.is_error and unknown.original is not None  # failures are transformed too
    tools = [m for m in runner.turns_model.calls[1]["messages"] if m["role"] == "tool"]
    assert "HELLO [X]" in [m["content"] for m in tools]


def test_transform_tool_result_bad_answers_are_skipped_and_named(tmp_path: Path) -> None:
    class Other:
        @hookimpl(tryfirst=True)
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            return ToolResult(content="stolen", call_id="someone-else")

    class Wrong:
        @hookimpl
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            return {"content": "a dict"}

    class Raises:
        @hookimpl(trylast=True)
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            raise SystemExit(1)

    class Coro:
        @hookimpl
        def transform_tool_result(self, call: Any, tool: Any, result: Any, context: Any) -> Any:
            async def later() -> Any:
                return ToolResult(content="awaited?")

            return later()

    plugins = [Other(), Wrong(), Raises(), Coro()]
    runner = make_runner(
        tmp_path, *plugins, tools_plugin(noop_tool("hello")), turns=[tool_turn("hello", "hello")]
    )
    events = run_events(runner)
    assert [r.content for r in _of(events, "tool_result")] == ["hello ran", "hello ran"]
    notices = [n for n in _of(events, "notice") if n.hook == "transform_tool_result"]
    assert sorted(n.plugin for n in notices) == sorted(runner.pm.get_name(p) for p in plugins)
    assert any("someone-else" in n.message for n in notices)
    assert events[-1].stop_reason == "completed"


def test_transform_system_prompt_chains_and_none_passes(tmp_path: Path) -> None:
    class Persona:
        @hookimpl
        def transform_system_prompt(self, prompt: str, context: Any) -> Any:
            return "You are Ada, the team's reviewer.\n\n" + prompt

    class Passes:
        @hookimpl(tryfirst=True)
        def transform_system_prompt(self, prompt: str, context: Any) -> Any:
            return None

    class Broken:
        @hookimpl(tryfirst=True)
        def transform_system_prompt(self, prompt: str, context: Any) -> Any:
            return 42

    runner = make_runner(tmp_path, Persona(), Passes(), Broken(), turns=[{"content": "ok"}])
    events = run_events(runner)
    system = runner.turns_model.calls[0]["messages"][0]
    assert system["role"] == "system"
    assert system["content"].startswith("You are Ada, the team's reviewer.")
    (notice,) = [n for n in _of(events, "notice") if n.hook == "transform_system_prompt"]
    assert "int" in notice.message


def test_session_end_is_called_once_on_close(tmp_path: Path) -> None:
    reasons: list[str] = []

    class End:
        @hookimpl
        def session_end(self, reason: str, context: Any) -> None:
            reasons.append(reason)

    runner = make_runner(tmp_path, End(), turns=[{"content": "ok"}])
    run_events(runner, close=False)
    runner.close()
    runner.close()
    assert reasons == ["exit"]


def test_notification_before_a_permission_question(tmp_path: Path) -> None:
    order: list[str] = []

    class Notified:
        @hookimpl
        def notification(self, message: str, kind: str, context: Any) -> None:
            order.append(f"notify:{kind}:{'hello' in message}")

    def ask(question: str, options: list[str]) -> str:
        order.append("asked")
        return options[0]

    runner = make_runner(
        tmp_path,
        Asker("check it"),
        Notified(),
        tools_plugin(noop_tool("hello")),
        turns=[tool_turn("hello")],
        session_id="ask-session",
        ask=ask,
    )
    events = run_events(runner)
    assert order == ["notify:permission_prompt:True", "asked"]
    (result,) = _of(events, "tool_result")
    assert not result.is_error


def test_plugin_details_extend_the_plugins_listing(tmp_path: Path) -> None:
    pm = make_plugin_manager()

    class Details:
        @hookimpl
        def plugin_details(self, settings: Any, workspace: Path, home: Path) -> Any:
            return {"mine": {"folders": [str(workspace)]}}

    pm.register(Details(), name="mine")
    from mycode_core.cli.commands import _add_plugin_details

    rows = [{"name": "mine", "hooks": []}, {"name": "other", "hooks": []}]
    _add_plugin_details(pm, rows, (), str(tmp_path))
    assert rows[0]["folders"] == [str(tmp_path.resolve())]
    assert "folders" not in rows[1]


def test_permission_verdict_updated_arguments_are_checked_against_the_schema(
    tmp_path: Path,
) -> None:
    ran: list[dict[str, Any]] = []

    def handler(arguments: dict[str, Any], context: Any) -> str:
        ran.append(arguments)
        return "echoed " + arguments["text"]

    echo = Tool(
        name="echo",
        description="Echo text.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
        handler=handler,
    )

    class Rewrite:
        @hookimpl
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            new = {"text": 42} if call.arguments["text"] == "bad" else {"text": "rewritten"}
            return PermissionVerdict(decision="allow", rule="rw", updated_arguments=new)

    turns = [
        {"tool_calls": [{"name": "echo", "arguments": {"text": "good"}}]},
        {"tool_calls": [{"name": "echo", "arguments": {"text": "bad"}}]},
    ]
    runner = make_runner(tmp_path, Rewrite(), tools_plugin(echo), turns=turns)
    events = run_events(runner)
    first, second = _of(events, "tool_result")
    assert first.content == "echoed rewritten" and not first.is_error
    assert second.is_error and "invalid" in second.content and "rw" in second.content
    assert ran == [{"text": "rewritten"}]


# --- add_hookspecs ---------------------------------------------------------------------------


def test_add_hookspecs_lets_a_plugin_define_hooks_others_implement(tmp_path: Path) -> None:
    class Specs:
        @hookspecs.hookspec
        def register_widgets(self, register: Any) -> None:
            """Contribute widgets (a hook one plugin adds for others)."""

    widgets: list[str] = []

    class Owner:
        @hookimpl
        def add_hookspecs(self, pluginmanager: Any) -> None:
            pluginmanager.add_hookspecs(Specs)

        @hookimpl
        def build_context(self, context: Any) -> list[str]:
            context.hook.register_widgets(register=widgets.append)
            return []

    class Contributor:  # registered before its hook exists: still accepted and called
        @hookimpl
        def register_widgets(self, register: Any) -> None:
            register("gear")

    class Optional:
        @hookimpl(optionalhook=True)
        def register_gadgets(self, register: Any) -> None:
            raise AssertionError("never called: nobody defines register_gadgets")

    runner = make_runner(tmp_path, Contributor(), Owner(), Optional(), turns=[])
    events = run_events(runner)
    assert widgets == ["gear"]
    assert events[-1].stop_reason == "completed"


def test_add_hookspecs_is_checked_after_every_plugin_is_registered(tmp_path: Path) -> None:
    import pluggy

    class Misspelt:
        @hookimpl
        def regster_tools(self, register: Any) -> None:
            """Misspelt hook name."""

    with pytest.raises(pluggy.PluginValidationError, match="regster_tools.*misspelt"):
        make_plugin_manager(Misspelt(), tools_plugin(noop_tool()))


# --- register_slash_commands -----------------------------------------------------------------


def test_register_slash_commands_collects_commands_with_their_plugin(tmp_path: Path) -> None:
    from mycode_core.cli.slash import collect_slash_commands
    from mycode_core.records import RunContext, SlashCommand, SlashResult

    class Commands:
        @hookimpl
        def register_slash_commands(self, register: Any) -> None:
            register(SlashCommand(name="hello", description="Greet.", run=lambda a, c: f"hi {a}"))
            register(SlashCommand(name="show", run=lambda a, c: SlashResult(output="shown")))

    class Again:
        @hookimpl
        def register_slash_commands(self, register: Any) -> None:
            register(SlashCommand(name="hello", run=lambda a, c: None))

    pm = make_plugin_manager(Commands(), Again())
    context = RunContext(workspace=tmp_path, home=tmp_path, settings=None, session_id="s")
    notices: list[str] = []
    commands = collect_slash_commands(pm, context, notices.append)
    assert set(commands) == {"hello", "show"}
    assert any("/hello" in n and "registered it first" in n for n in notices)
    assert commands["hello"].run("you", context) in ("hi you", None)


def test_slash_commands_are_collected_again_only_for_a_name_nobody_had(tmp_path: Path) -> None:
    """A command added during the session (a skill written since) runs on the first try:
    an unknown name collects the commands again, once; a known one never does, and a
    collection's notices are said once."""
    from types import SimpleNamespace

    from mycode_core.cli.slash import dispatch
    from mycode_core.records import RunContext, SlashCommand

    names = ["hello"]
    calls: list[int] = []

    class Growing:
        @hookimpl
        def register_slash_commands(self, register: Any) -> None:
            calls.append(1)
            for name in [*names, "clash"]:
                register(SlashCommand(name=name, run=lambda a, c, n=name: f"{n} {a}"))

    class Twice:
        @hookimpl
        def register_slash_commands(self, register: Any) -> None:
            register(SlashCommand(name="clash", run=lambda a, c: None))

    context = RunContext(workspace=tmp_path, home=tmp_path, settings=None, session_id="s")
    runner = SimpleNamespace(pm=make_plugin_manager(Growing(), Twice()), context=context)
    notices: list[str] = []
    assert dispatch(runner, "/hello you", notices.append).prompt == "hello you"  # type: ignore[union-attr]
    assert dispatch(runner, "/hello again", notices.append) is not None
    assert len(calls) == 1  # cached: a known name costs nothing
    names.append("late")
    assert dispatch(runner, "/late one", notices.append).prompt == "late one"  # type: ignore[union-attr]
    assert len(calls) == 2
    assert dispatch(runner, "/nobody", notices.append) is None
    assert len(calls) == 3  # once per unknown name, not in a loop
    assert len([n for n in notices if "/clash" in n]) == 1


@pytest.mark.parametrize("alias_first", [True, False])
def test_an_alias_yields_to_every_other_command_and_the_built_ins(
    tmp_path: Path, alias_first: bool
) -> None:
    """``SlashCommand(alias_of=...)``: kept only when no plugin's command and no built-in of
    the session has its name — whichever plugin registers first — and dropped silently;
    ``/help`` lists a kept alias on the line of the command it stands for."""
    from mycode_core.cli.slash import collect_slash_commands, help_entries
    from mycode_core.records import RunContext, SlashCommand

    def run(args: str, context: Any) -> str:
        return f"skill {args}"

    class Aliases:
        @hookimpl(tryfirst=alias_first, trylast=not alias_first)
        def register_slash_commands(self, register: Any) -> None:
            for name in ("deploy", "review", "help", "mode", "quit"):
                register(SlashCommand(name=f"skill:{name}", description=f"{name} it", run=run))
                register(
                    SlashCommand(
                        name=name, description=f"{name} it", run=run, alias_of=f"skill:{name}"
                    )
                )

    class Commands:
        @hookimpl
        def register_slash_commands(self, register: Any) -> None:
            register(SlashCommand(name="review", description="Review.", run=lambda a, c: "own"))
            register(
                SlashCommand(
                    name="ship", description="Ship it.", argument_hint="[env]", run=lambda a, c: ""
                )
            )

    pm = make_plugin_manager(Aliases(), Commands())
    context = RunContext(workspace=tmp_path, home=tmp_path, settings=None, session_id="s")
    notices: list[str] = []
    commands = collect_slash_commands(pm, context, notices.append)
    assert notices == []
    assert commands["deploy"].run("now", context) == "skill now"  # kept: nobody else has it
    assert commands["review"].run("", context) == "own"  # the other plugin's command wins
    assert not {"help", "mode", "quit"} & set(commands)  # the session's own commands win
    assert {"skill:help", "skill:mode", "skill:review"} <= set(commands)
    entries = help_entries(commands)
    assert entries["deploy"] == "deploy it (also /skill:deploy)" and "skill:deploy" not in entries
    assert entries["review"] == "Review." and entries["skill:review"] == "review it"
    assert entries["ship"] == "[env]  Ship it."  # the argument hint, then the description


# --- every hook through pluggy ---------------------------------------------------------------


def test_on_event_wrappers_specname_and_fewer_parameters_work(tmp_path: Path) -> None:
    seen: list[str] = []

    class Wrapping:
        @hookimpl(wrapper=True)
        def on_event(self, event: Any) -> Any:
            seen.append(f"before:{event.type}")
            return (yield)

        @hookimpl(specname="on_event")
        def watch(self, event: Any) -> None:
            seen.append(f"watch:{event.type}")

    runner = make_runner(tmp_path, Wrapping(), turns=[])
    run_events(runner)
    assert "before:result" in seen and "watch:result" in seen
    assert seen.index("before:result") < seen.index("watch:result")


def test_on_event_subscribers_only_get_their_types_and_slow_ones_do_not_slow_the_run(
    tmp_path: Path,
) -> None:
    import threading

    from mycode_core import subscribe

    got: list[str] = []
    release = threading.Event()

    class Picky:
        @hookimpl
        @subscribe("result", "tool_call")
        def on_event(self, event: Any) -> None:
            got.append(event.type)

    class Stuck:
        @hookimpl
        def on_event(self, event: Any) -> None:
            release.wait(60)  # blocks its own worker only

    runner = make_runner(
        tmp_path,
        Picky(),
        Stuck(),
        tools_plugin(noop_tool()),
        turns=[tool_turn("noop")],
        observer_warn_ms=1,
    )
    events = list(runner.run("go"))  # finishes although Stuck never returns on its own
    assert events[-1].type == "result"
    release.set()
    runner.close()
    assert got == ["tool_call", "result"]


def test_register_tools_wrapper_and_fewer_parameters(tmp_path: Path) -> None:
    order: list[str] = []

    class Wrapper:
        @hookimpl(wrapper=True)
        def register_tools(self) -> Any:
            order.append("wrapper")
            return (yield)

    class Few:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            order.append("few")
            register(noop_tool("few"))

    runner = make_runner(tmp_path, Wrapper(), Few(), turns=[])
    events = run_events(runner)
    (system,) = _of(events, "system")
    assert "few" in system.tools and order[:2] == ["wrapper", "few"]


# --- view_message / summarize_context (issue 9) ------------------------------------------------


def test_view_message_shapes_the_view_but_never_history(tmp_path: Path) -> None:
    class Shaper:
        @hookimpl
        def view_message(self, message: dict[str, Any], budget: int, context: Any) -> Any:
            if message.get("role") == "tool":
                return {**message, "content": f"SHORT (budget {budget})"}
            return None

    runner = make_runner(
        tmp_path, Shaper(), tools_plugin(noop_tool()), turns=[tool_turn("noop"), {"content": "ok"}]
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "completed"
    second = runner.turns_model.calls[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["content"].startswith("SHORT (budget ")
    assert [m["content"] for m in runner.history.messages() if m["role"] == "tool"] == ["noop ran"]


def test_summarize_context_replaces_the_summariser(tmp_path: Path) -> None:
    import mycode_context_engine.plugin as engine

    seen: list[tuple[int, str | None, str | None]] = []

    class Summariser:
        @hookimpl
        def summarize_context(
            self, messages: Any, previous_summary: Any, instructions: Any, budget: int, context: Any
        ) -> str:
            seen.append((len(messages), previous_summary, instructions))
            return "MY SUMMARY: the user wants the task done."

    runner = make_runner(tmp_path, engine, Summariser(), turns=[{"content": "ok"}])
    for i in range(6):
        runner.history.append({"role": "user", "content": f"question {i} " + "x " * 200})
        runner.history.append({"role": "assistant", "content": f"answer {i}"})
    runner.request_compaction("keep the numbers")
    events = run_events(runner)
    (compaction,) = _of(events, "compaction")
    assert compaction.reason == "manual" and "MY SUMMARY" in (compaction.summary or "")
    assert seen and seen[0][1] is None and seen[0][2] == "keep the numbers"
    first = runner.turns_model.calls[0]["messages"]
    assert "MY SUMMARY" in first[1]["content"] and len(runner.turns_model.calls) == 1
    assert len(first) < 14  # the older turns were replaced


def test_context_report_lists_what_the_view_holds(tmp_path: Path) -> None:
    """``/context`` (interactive) asks the runner what the model view holds."""
    runner = make_runner(tmp_path, turns=[{"content": "ok"}])
    runner.history.append({"role": "user", "content": "question " + "x " * 50})
    report = runner.context_report()
    assert report.startswith("view ~") and " tokens: " in report


def test_register_settings_declares_a_checked_config_table(tmp_path: Path) -> None:
    from pydantic import BaseModel, Field

    from mycode_core.config import ConfigError, load_settings
    from mycode_core.config_check import settings_tables

    class Table(BaseModel):
        depth: int = Field(default=1, ge=1)

    class Plugin:
        @hookimpl
        def register_settings(self, register: Any) -> None:
            register("deep", Table)

    pm = make_plugin_manager(Plugin())
    tables = settings_tables(pm)
    assert tables == {"deep": Table}
    (tmp_path / ".mycode").mkdir()
    (tmp_path / ".mycode" / "config.toml").write_text("[deep]\ndepth = 0\n")
    with pytest.raises(ConfigError, match=r"config.toml: deep.depth: Input should be greater"):
        load_settings(tmp_path, tmp_path / "home", tables=tables)
