"""SPEC §7 "Failure semantics" (issue 18 item 1): a plugin's failure never loosens a decision."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from mycode_core import hookimpl
from mycode_core.records import CompletionVerdict, PermissionVerdict
from mycode_core.testing import installed_plugin, make_runner, run_events, write_user_plugin
from mycode_core.testing.cli import run_cli, write_plugin_dist, write_script

EDIT = {"tool_calls": [{"name": "write_file", "arguments": {"path": "app.py", "content": "x=1\n"}}]}


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def _failure_notices(events: list[Any]) -> list[Any]:
    return [event for event in _of(events, "notice") if event.hook is not None]


class RaisingGate:
    @hookimpl(tryfirst=True)
    def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
        raise RuntimeError("policy file missing")


def _gated_runner(tmp_path: Path, *plugins: object) -> Any:
    (tmp_path / "workspace").mkdir(parents=True)
    (tmp_path / "workspace" / "test_app.py").write_text("def test_x():\n    pass\n", "utf-8")
    return make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        installed_plugin("completion_gate"),
        *plugins,
        turns=[EDIT, {"content": "done"}, {"content": "done"}, {"content": "done"}],
        completion_gate={"max_blocks": 1},
    )


def test_a_raising_completion_verdict_leaves_the_builtin_gate_blocking(tmp_path: Path) -> None:
    plain = run_events(_gated_runner(tmp_path / "plain"))
    assert plain[-1].stop_reason == "gate_exhausted"
    broken = RaisingGate()
    runner = _gated_runner(tmp_path / "broken", broken)
    events = run_events(runner)
    assert (events[-1].stop_reason, events[-1].verdict) == ("gate_exhausted", "fail")
    (notice,) = _failure_notices(events)  # skipped for the rest of the run: one notice
    assert (notice.plugin, notice.hook) == (runner.pm.get_name(broken), "completion_verdict")
    assert "RuntimeError: policy file missing" in notice.message


@pytest.mark.parametrize(
    "error",
    [ValueError("bad rule"), SystemExit(3), KeyboardInterrupt()],
    ids=["ValueError", "SystemExit", "KeyboardInterrupt"],
)
def test_a_raising_permission_verdict_denies_that_call_and_the_run_goes_on(
    tmp_path: Path, error: BaseException
) -> None:
    seen: list[str] = []

    class Broken:
        @hookimpl(tryfirst=True)
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            seen.append(call.id)
            raise error

    calls = [{"name": "glob", "arguments": {"pattern": "*"}, "id": f"c{n}"} for n in range(3)]
    broken = Broken()
    runner = make_runner(
        tmp_path, installed_plugin("builtin_tools"), broken, turns=[{"tool_calls": calls}]
    )
    events = run_events(runner)
    results = sorted(_of(events, "tool_result"), key=lambda r: r.id)
    assert [r.id for r in results] == ["c0", "c1", "c2"]  # exactly one result per call
    name = runner.pm.get_name(broken)
    # asked again for every call, and every call it fails on is denied: a policy that denies
    # `prod/` writes and crashes once must not leave the later calls to the others
    assert all(r.is_error and name in r.content for r in results)
    assert sorted(seen) == ["c0", "c1", "c2"]
    notices = _failure_notices(events)
    assert [(n.plugin, n.hook) for n in notices] == [(name, "permission_verdict")] * 3
    assert type(error).__name__ in notices[0].message and "the call is denied" in notices[0].message
    assert events[-1].stop_reason == "completed"


def test_a_permission_verdict_that_failed_once_still_decides_the_next_calls(
    tmp_path: Path,
) -> None:
    """A plugin that denies writes under ``prod/`` and crashes on an unrelated call keeps
    protecting ``prod/`` afterwards (it was skipped for the rest of the run before)."""

    class Guarding:
        @hookimpl(tryfirst=True)
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            if call.arguments.get("pattern") == "boom":
                raise RuntimeError("cannot parse the pattern")
            if str(call.arguments.get("path", "")).startswith("prod/"):
                return PermissionVerdict(decision="deny", reason="prod is read-only")
            return None

    write = {"name": "write_file", "arguments": {"path": "prod/app.py", "content": "x\n"}}
    turns = [
        {"tool_calls": [{"name": "glob", "arguments": {"pattern": "boom"}, "id": "a"}]},
        {"tool_calls": [{**write, "id": "b"}]},
    ]
    plugin = Guarding()
    runner = make_runner(
        tmp_path, installed_plugin("builtin_tools"), plugin, turns=turns, permission_mode="bypass"
    )
    events = run_events(runner)
    results = {r.id: r for r in _of(events, "tool_result")}
    assert results["a"].is_error and runner.pm.get_name(plugin) in results["a"].content
    assert results["b"].is_error and "prod is read-only" in results["b"].content
    assert not (tmp_path / "workspace" / "prod" / "app.py").exists()


def test_a_keyboard_interrupt_raised_in_a_plugin_thread_is_its_failure(tmp_path: Path) -> None:
    class Threaded:
        @hookimpl(tryfirst=True)
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            assert threading.current_thread() is not threading.main_thread()
            raise KeyboardInterrupt

    runner = make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        Threaded(),
        turns=[{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}, "id": "a"}]}],
    )
    events = run_events(runner)
    assert _of(events, "tool_result")[0].is_error
    assert events[-1].stop_reason == "completed"


async def _later() -> Any:
    return PermissionVerdict(decision="allow")


def _wrong_answers(answer: Any) -> Any:
    """A plugin answering both verdicts with ``answer()``: a value of the wrong type."""

    class Wrong:
        @hookimpl(tryfirst=True)
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            return answer()

        @hookimpl(tryfirst=True)
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            return answer()

    return Wrong()


def _calling_twice(tmp_path: Path, call: dict[str, Any], *plugins: Any, **settings: Any) -> Any:
    """A runner with the built-in tools, a failing gate and ``plugins``, whose model makes
    ``call`` twice (ids ``a`` and ``b``)."""
    return make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        FailingGate(),
        *plugins,
        turns=[{"tool_calls": [{**call, "id": "a"}]}, {"tool_calls": [{**call, "id": "b"}]}],
        completion_gate={"max_blocks": 1},
        **settings,
    )


class FailingGate:
    """A gate that always fails the answer."""

    @hookimpl
    def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
        return CompletionVerdict(verdict="fail", feedback="not yet")


@pytest.mark.parametrize(
    "answer", [lambda: {"decision": "allow"}, _later, lambda: "allow"], ids=["dict", "coro", "str"]
)
def test_a_wrong_answer_type_is_a_failure_too(tmp_path: Path, answer: Any) -> None:
    wrong = _wrong_answers(answer)
    runner = make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        FailingGate(),
        wrong,
        turns=[{"tool_calls": [{"name": "glob", "arguments": {"pattern": "*"}, "id": "a"}]}],
        completion_gate={"max_blocks": 1},
    )
    events = run_events(runner)
    assert _of(events, "tool_result")[0].is_error  # never allowed by a wrong answer
    assert events[-1].stop_reason == "gate_exhausted"  # the other gate still decided
    hooks = sorted(n.hook for n in _failure_notices(events))
    assert hooks == ["completion_verdict", "permission_verdict"]
    assert all(n.plugin == runner.pm.get_name(wrong) for n in _failure_notices(events))


def test_wrappers_keep_working_once_a_plugin_is_skipped(tmp_path: Path) -> None:
    class Veto:
        @hookimpl(wrapper=True)
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            yield
            return CompletionVerdict(verdict="fail", feedback="vetoed", source="veto")

    runner = make_runner(
        tmp_path, RaisingGate(), Veto(), turns=[], completion_gate={"max_blocks": 1}
    )
    events = run_events(runner)
    assert events[-1].stop_reason == "gate_exhausted"
    assert [g.source for g in _of(events, "guidance")] == ["veto"]
    assert len(_failure_notices(events)) == 1


def test_asyncio_is_untouched_by_a_discarded_coroutine() -> None:
    assert asyncio.iscoroutinefunction(_later)


BROKEN_PLUGIN = """
from mycode_core import hookimpl

@hookimpl(tryfirst=True)
def completion_verdict(final_text, observations, context):
    raise RuntimeError("team policy crashed")
"""


@pytest.mark.parametrize("strict", ["", "env", "config"])
def test_the_cli_names_the_plugin_on_stderr_and_strict_exits_2(tmp_path: Path, strict: str) -> None:
    site = tmp_path / "site"
    write_plugin_dist(site, "teampolicy", BROKEN_PLUGIN)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    if strict == "config":
        (home / "config.toml").write_text("[plugins]\nstrict = true\n", "utf-8")
    script = write_script(tmp_path / "s.json", [{"content": "done"}])
    env = {"MYCODE_STRICT_PLUGINS": "1" if strict == "env" else None}
    args = ["-p", "hi", "--model", script]
    text = run_cli(args, cwd=workspace, home=home, env=env, pythonpath=[site])
    assert "plugin 'teampolicy' failed in completion_verdict" in text.stderr
    assert "RuntimeError: team policy crashed" in text.stderr
    assert "Traceback" not in text.stderr
    assert text.rc == (2 if strict else 0)
    if not strict:
        streamed = run_cli(
            [*args, "--output-format", "stream-json"],
            cwd=workspace,
            home=home,
            env=env,
            pythonpath=[site],
        )
        notices = [e for e in streamed.events if e["type"] == "notice" and e.get("hook")]
        assert [(n["plugin"], n["hook"]) for n in notices] == [("teampolicy", "completion_verdict")]
        assert json.dumps(notices[0])


def _raising_everywhere(error: BaseException) -> object:
    """A plugin implementing every hookspec of the core, each raising ``error``."""
    import inspect

    from mycode_core import hookspecs

    namespace: dict[str, Any] = {}
    for name, spec in vars(hookspecs).items():
        if not hasattr(spec, "mycode_spec") or name == "add_hookspecs":
            continue
        params = list(inspect.signature(spec).parameters)

        def impl(*args: Any, **kwargs: Any) -> Any:
            raise error

        impl.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params]
        )
        namespace[name] = hookimpl(impl)
    return type("Everywhere", (), {k: staticmethod(v) for k, v in namespace.items()})()


@pytest.mark.parametrize("error", [RuntimeError("boom"), SystemExit(2)], ids=["Runtime", "Exit"])
def test_a_plugin_raising_in_every_hook_at_once_loosens_nothing(
    tmp_path: Path, error: BaseException
) -> None:
    (tmp_path / "workspace").mkdir(parents=True)
    (tmp_path / "workspace" / "test_app.py").write_text("def test_x():\n    pass\n", "utf-8")
    runner = make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        installed_plugin("completion_gate"),
        _raising_everywhere(error),
        turns=[EDIT, {"content": "done"}, {"content": "done"}],
        completion_gate={"max_blocks": 1},
    )
    events = run_events(runner)
    calls = {e.id for e in _of(events, "tool_call")}
    assert calls and calls == {e.id for e in _of(events, "tool_result")}
    assert events[-1].type == "result"
    assert events[-1].stop_reason in ("gate_exhausted", "completed")
    if events[-1].stop_reason == "completed":  # the edit was refused: nothing to verify
        assert all(e.is_error for e in _of(events, "tool_result"))
    named = {(n.plugin, n.hook) for n in _failure_notices(events)}
    assert ("completion_verdict" in {h for _, h in named}) or events[-1].stop_reason != "completed"


def test_every_failing_hook_notice_names_plugin_and_hook(tmp_path: Path) -> None:
    class Lifecycle:
        @hookimpl
        def build_context(self, context: Any) -> Any:
            raise ValueError("no sections today")

        @hookimpl
        def session_start(self, source: str, context: Any) -> Any:
            raise SystemExit(4)

    plugin = Lifecycle()
    runner = make_runner(tmp_path, plugin, turns=[{"content": "ok"}])
    events = run_events(runner)
    named = {(n.plugin, n.hook) for n in _failure_notices(events)}
    name = runner.pm.get_name(plugin)
    assert {(name, "build_context"), (name, "session_start")} <= named
    assert events[-1].stop_reason == "completed"


class PassThrough:
    """An innocent wrapper that reads the inner verdict (as claude_compat and skills do)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl(wrapper=True)
    def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
        verdict = yield
        self.seen.append(verdict.decision)  # chokes on a dict
        return verdict

    @hookimpl(wrapper=True)
    def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
        verdict = yield
        self.seen.append(verdict.verdict)
        return verdict


@pytest.mark.parametrize("answer", [lambda: {"decision": "allow"}, _later], ids=["dict", "coro"])
def test_a_wrong_answer_is_blamed_on_its_plugin_not_on_the_wrapper_around_it(
    tmp_path: Path, answer: Any
) -> None:
    wrong, wrapper = _wrong_answers(answer), PassThrough()
    glob = {"name": "glob", "arguments": {"pattern": "*"}}
    runner = _calling_twice(tmp_path, glob, wrong, wrapper)
    with _no_warning():
        events = run_events(runner)
    first, second = _of(events, "tool_result")
    assert first.is_error and second.is_error  # each call it answers wrongly is denied
    assert events[-1].stop_reason == "gate_exhausted"
    notices = _failure_notices(events)
    assert {n.plugin for n in notices} == {runner.pm.get_name(wrong)}
    hooks = ["completion_verdict", "permission_verdict", "permission_verdict"]
    assert sorted(n.hook for n in notices) == hooks
    assert "fail" in wrapper.seen  # the wrapper was never skipped (nor blamed, above)


def _no_warning() -> Any:
    import warnings

    class Strict:
        def __enter__(self) -> None:
            self.catcher = warnings.catch_warnings()
            self.catcher.__enter__()
            warnings.simplefilter("error", RuntimeWarning)  # "coroutine ... never awaited"

        def __exit__(self, *exc: Any) -> None:
            import gc

            gc.collect()
            self.catcher.__exit__(*exc)

    return Strict()


def test_a_wrapper_dropping_the_inner_verdict_fails_closed(tmp_path: Path) -> None:
    class Dropper:
        @hookimpl(wrapper=True)
        def permission_verdict(self, call: Any, tool: Any, context: Any) -> Any:
            yield
            return None

        @hookimpl(wrapper=True)
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            yield
            return None

    dropper = Dropper()
    (tmp_path / "workspace" / "secrets").mkdir(parents=True)
    (tmp_path / "workspace" / "secrets" / "k.txt").write_text("KEY", "utf-8")
    read = {"name": "read_file", "arguments": {"path": "secrets/k.txt"}}
    runner = _calling_twice(
        tmp_path,
        read,
        dropper,
        permissions={"deny": ["read_file(secrets/**)"]},
    )
    events = run_events(runner)
    assert all(result.is_error for result in _of(events, "tool_result"))  # the rule holds
    assert "KEY" not in str([result.content for result in _of(events, "tool_result")])
    assert events[-1].stop_reason == "gate_exhausted"  # the gate's fail was not dropped
    notices = _failure_notices(events)
    assert {n.plugin for n in notices} == {runner.pm.get_name(dropper)}
    assert all("returned None where the inner plugins gave a verdict" in n.message for n in notices)


def test_a_wrapper_answering_with_a_dict_is_named(tmp_path: Path) -> None:
    class BadWrapper:
        @hookimpl(wrapper=True)
        def completion_verdict(self, final_text: str, observations: Any, context: Any) -> Any:
            yield
            return {"verdict": "pass"}

    bad = BadWrapper()
    runner = make_runner(tmp_path, FailingGate(), bad, turns=[], completion_gate={"max_blocks": 2})
    events = run_events(runner)
    assert events[-1].stop_reason == "gate_exhausted"
    (notice,) = _failure_notices(events)  # named once, then skipped
    assert notice.plugin == runner.pm.get_name(bad) and "returned dict" in notice.message


def test_a_plugin_file_raising_in_every_hook_names_itself_everywhere(tmp_path: Path) -> None:
    import inspect

    from mycode_core import hookspecs

    lines = ["from mycode_core import hookimpl"]
    for name, spec in vars(hookspecs).items():
        if callable(spec) and hasattr(spec, "mycode_spec") and name != "add_hookspecs":
            params = ", ".join(inspect.signature(spec).parameters)
            lines.append(f"@hookimpl\ndef {name}({params}):\n    raise RuntimeError('in {name}')")
    home, workspace = tmp_path / "home", tmp_path / "ws"
    write_user_plugin(home, "allbad", "\n".join(lines) + "\n")
    (workspace / "tests").mkdir(parents=True)
    (workspace / "tests" / "test_app.py").write_text("def test_x():\n    pass\n", "utf-8")
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "tests/test_app.py"}}]}
    model = write_script(tmp_path / "s.json", [read, EDIT] + [{"content": "done"}] * 4)
    run = run_cli(["-p", "go", "--model", model, "--output-format", "stream-json"], workspace, home)
    assert run.rc == 0 and run.result is not None, run.stderr
    results = run.of_type("tool_result")  # every call denied: nothing was changed
    calls = [e["id"] for e in run.of_type("tool_call")]
    assert sorted(calls) == sorted(e["id"] for e in results) and len(calls) == 2
    assert all(e["is_error"] and "allbad" in json.dumps(e["content"]) for e in results)
    assert not (workspace / "app.py").exists()
    failures = [e for e in run.of_type("notice") if "failed" in e["message"]]
    assert {"permission_verdict", "completion_verdict", "view_message"} <= {
        e["hook"] for e in failures
    }
    assert all(e["plugin"] == "allbad" for e in failures), failures
    said = [line for line in run.stderr.splitlines() if "failed" in line]
    assert said and all("plugin 'allbad' failed in" in line for line in said), run.stderr
    assert "register_settings" in run.stderr and "Traceback" not in run.stderr
    listing = run_cli(["plugins"], workspace, home)
    assert listing.rc == 0 and "plugin 'allbad' failed in plugin_details" in listing.stderr


def test_every_tool_call_gets_one_result_whatever_its_handler_raises(tmp_path: Path) -> None:
    from mycode_core import tool

    @tool(read_only=True)
    def exits() -> str:
        """Raise SystemExit."""
        raise SystemExit(3)

    @tool(read_only=True)
    def interrupts() -> str:
        """Raise KeyboardInterrupt (the handler runs on a worker thread)."""
        raise KeyboardInterrupt

    @tool
    async def exits_async() -> str:
        """Raise SystemExit from a coroutine."""
        raise SystemExit(5)

    class Tools:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            for item in (exits, interrupts, exits_async):
                register(item)

    names = ["exits", "interrupts", "exits_async"]
    calls = [{"name": name, "arguments": {}, "id": name} for name in names]
    runner = make_runner(tmp_path, Tools(), turns=[{"tool_calls": calls}, {"content": "ok"}])
    events = run_events(runner)
    results = {e.id: e for e in _of(events, "tool_result")}
    assert sorted(results) == sorted(names) and len(_of(events, "tool_result")) == 3
    assert all(result.is_error for result in results.values())
    assert results["interrupts"].content == "interrupts failed: KeyboardInterrupt"
    assert "SystemExit: 5" in str(results["exits_async"].content)
    assert events[-1].stop_reason == "completed"
