"""Issue 21's bad input: huge, one-line and binary tool results, a summariser answering garbage,
and a window smaller than the system prompt — one clear notice each, the run goes on (or ends
with ``context_overflow``), no traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import mycode_context_engine.plugin as engine
import pytest
from view_helpers import SideModel

from mycode_core.records import Tool, ToolResult
from mycode_core.testing import (
    TurnsModel,
    installed_plugin,
    make_plugin_manager,
    model_plugin,
    run_cli,
    tool_pairing_problems,
    tools_plugin,
)

TASK = "TASK-9090: look at the output"


def _run(tmp_path: Path, model: TurnsModel, *plugins: object, **settings: Any) -> list[Any]:
    from mycode_core.config import Settings
    from mycode_core.runtime.child import run_child
    from mycode_core.runtime.loop import AgentRunner

    workspace = (tmp_path / "workspace").resolve()
    workspace.mkdir(parents=True, exist_ok=True)
    for i in range(10):
        lines = [f"line {n} of file {i}: value = {n * i} # filler" for n in range(40)]
        (workspace / f"f{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "home").mkdir(exist_ok=True)
    runner = AgentRunner(
        spawn_child=run_child,
        pm=make_plugin_manager(
            installed_plugin("builtin_tools"), engine, model_plugin(model), *plugins
        ),
        settings=Settings(model="test:m", permission_mode="bypass", max_steps=100, **settings),
        workspace=workspace,
        home=(tmp_path / "home").resolve(),
        session_id="s1",
    )
    try:
        return list(runner.run(TASK))
    finally:
        runner.close()


def _notices(events: list[Any]) -> list[str]:
    return [e.message for e in events if e.type == "notice"]


@pytest.mark.parametrize(
    ("output", "said"),
    [
        ("\n".join(f"row {i} " + "z" * 90 for i in range(200_000)), "bigger than the context"),
        ("y" * 10_000_000, "bigger than the context"),  # one line of 10 MB
        (bytes(range(256)).decode("latin-1") * 400, "binary bytes"),
    ],
    ids=["20 MB", "one 10 MB line", "binary"],
)
def test_a_bad_tool_result_is_one_notice_and_a_readable_path(
    tmp_path: Path, output: str, said: str
) -> None:
    tool = Tool(
        name="dump",
        description="Dump it.",
        handler=lambda arguments, context: ToolResult(content=output),
        read_only=True,
    )
    call = {"tool_calls": [{"name": "dump", "arguments": {}}]}
    model = SideModel([call, call, {"content": "seen"}], lambda: "summary")
    events = _run(tmp_path, model, tools_plugin(tool), context_window=8_000)
    assert events[-1].stop_reason == "completed"
    notices = [m for m in _notices(events) if said in m]
    assert len(notices) == 1, _notices(events)  # one notice, not one per step
    last = model.calls[-1]["messages"]
    assert tool_pairing_problems(last) == [] and len(json.dumps(last)) < 8_000 * 4
    shown = last[-1]["content"]
    saved = Path(shown.split("saved at ")[1].split(" ")[0])
    assert saved.read_bytes().decode("utf-8") == output
    if said == "binary bytes":
        assert shown.startswith("[binary output: ") and "\x00" not in json.dumps(last)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (lambda: "\x00\x01\x02\ufffd" * 300, "binary garbage"),
        (lambda: "the " * 400, "repeated itself"),
        (lambda: "", "returned nothing"),
        (lambda: " ".join(f"w{i}" for i in range(25_000)), "too long"),
    ],
    ids=["binary", "a loop", "empty", "50,000 tokens"],
)
def test_a_summary_of_garbage_is_one_notice_and_the_facts_stay(
    tmp_path: Path, reply: Callable[[], str], problem: str
) -> None:
    reads = [
        {"tool_calls": [{"name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}]}
        for i in range(30)
    ]
    model = SideModel(reads, reply)
    events = _run(tmp_path, model, context_window=8_000, context={"strategy": "summary"})
    assert events[-1].stop_reason == "completed"
    assert len([e for e in events if e.type == "compaction"]) >= 3
    notices = [m for m in _notices(events) if problem in m]
    assert len(notices) == 1 and "recorded facts" in notices[0], _notices(events)
    head = model.calls[-1]["messages"][1]["content"]
    assert TASK in head and "Recorded by mycode" in head
    assert "the the the" not in head and "\x00" not in head and "w24999" not in head


def test_a_window_smaller_than_the_system_prompt_ends_with_context_overflow(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "AGENTS.md").write_text("Always follow this rule. " * 600, encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text("context_window = 1024\n", encoding="utf-8")
    script = tmp_path / "turns.json"
    script.write_text(json.dumps([{"content": "never"}]), encoding="utf-8")
    result = run_cli(
        ["-p", "hello", "--model", f"scripted:{script}", "--output-format", "json"],
        cwd=workspace,
        home=home,
        env={"MYCODE_LOAD_PLUGINS": "builtin_tools,context_engine"},
    )
    assert result.rc == 1 and "Traceback" not in result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["stop_reason"] == "context_overflow"
    assert "system prompt ~" in outcome["error"] and "AGENTS.md" in outcome["error"]


@pytest.mark.parametrize(
    ("hook", "body", "said"),
    [
        ("compact_context", 'return {"messages": []}', "plugin 'bad' failed in compact_context"),
        ("compact_context", "raise RuntimeError('cc')", "plugin 'bad' failed in compact_context"),
        ("summarize_context", "return {'a': 1}", "a summarize_context answer was dict"),
        (
            "summarize_context",
            "raise RuntimeError('sc')",
            "plugin 'bad' failed in summarize_context",
        ),
    ],
)
def test_a_broken_compactor_or_summariser_is_named_and_the_engine_still_compacts(
    tmp_path: Path, hook: str, body: str, said: str
) -> None:
    from mycode_core.testing import script_turn, write_script

    home, workspace = tmp_path / "home", tmp_path / "ws"
    (home / "plugins").mkdir(parents=True)
    params = "messages, budget, context" if hook == "compact_context" else "messages"
    (home / "plugins" / "bad.py").write_text(
        f"from mycode_core import hookimpl\n\n@hookimpl(tryfirst=True)\n"
        f"def {hook}({params}):\n    {body}\n",
        "utf-8",
    )
    (home / "config.toml").write_text('context_window = 8000\n[context]\nstrategy = "summary"\n')
    workspace.mkdir()
    for i in range(6):
        (workspace / f"f{i}.txt").write_text(f"line of text {i}\n" * 300, "utf-8")
    turns = [script_turn("read_file", path=f"f{i}.txt") for i in range(6)] + [{"content": "ok"}]
    model = write_script(tmp_path / "s.json", turns)
    run = run_cli(["-p", "go", "--model", model, "--output-format", "stream-json"], workspace, home)
    assert run.rc == 0 and run.result is not None, run.stderr
    assert run.result["stop_reason"] == "completed" and "Traceback" not in run.stderr
    assert run.of_type("compaction"), "the engine (or the fallback) still compacted"
    notices = [e["message"] for e in run.of_type("notice") if said in e["message"]]
    assert len(notices) == 1, [e["message"] for e in run.of_type("notice")]
    assert not [e for e in run.of_type("notice") if "'context_engine' failed" in e["message"]]
