"""The default stagnation policy (the ``mycode_stagnation`` plugin).

Unit tests feed hand-made observations to the hook one batch at a time, as the loop does;
the end-to-end tests at the bottom play scripted sessions through the CLI.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import mycode_stagnation as stagnation
import pytest
from mycode_stagnation.policy import StagnationState
from mycode_stagnation.settings import StagnationSettings

from mycode_core import hookimpl
from mycode_core.config import Settings
from mycode_core.plugins import get_plugin_manager
from mycode_core.records import Observation, RunContext, StagnationVerdict
from mycode_core.testing import script_turn

# --- helpers ------------------------------------------------------------------------------


def make_obs(
    tool: str,
    args: dict[str, Any],
    result: str,
    *,
    resources: list[str] | None = None,
    mutation: bool = False,
    step: int = 1,
) -> Observation:
    """An observation shaped like the core's (signature = name + normalised JSON)."""
    signature = f"{tool} {json.dumps(args, sort_keys=True, separators=(',', ':'))}"
    return Observation(
        step=step,
        call_id=f"c{step}",
        tool=tool,
        signature=signature,
        result_hash=hashlib.sha1(result.encode()).hexdigest()[:16],
        resources=resources or [],
        mutation=mutation,
        mutated=[str(args.get("path"))] if mutation else [],
    )


def read(path: str, content: str | None = None, start: int = 1, end: int = 20) -> Observation:
    """A read_file observation of ``path`` lines ``start-end``."""
    args: dict[str, Any] = {"path": path}
    if start != 1:
        args["offset"] = start
    return make_obs(
        "read_file",
        args,
        content if content is not None else f"{path} {start}-{end}",
        resources=[f"file:{path}:{start}-{end}"],
    )


def edit(path: str, n: int) -> Observation:
    """An edit_file observation (a mutation)."""
    args = {"path": path, "old_string": f"v{n}", "new_string": f"v{n + 1}"}
    return make_obs("edit_file", args, f"edited {path}", resources=[f"file:{path}"], mutation=True)


def command(cmd: str, output: str) -> Observation:
    """A run_command observation."""
    return make_obs("run_command", {"command": cmd}, output, resources=[f"command:{cmd}"])


class Session:
    """Feeds observations batch by batch to the hook, like the loop."""

    def __init__(self, tmp_path: Path, **stagnation_settings: Any) -> None:
        settings = Settings(stagnation=stagnation_settings)
        self.context = RunContext(
            workspace=tmp_path, home=tmp_path / "home", settings=settings, session_id="t"
        )
        self.verdicts: list[StagnationVerdict | None] = []

    def batch(self, *observations: Observation) -> StagnationVerdict | None:
        """Record a batch and return the policy's verdict for it."""
        self.context.observations.extend(observations)
        verdict = stagnation.stagnation_verdict(
            observations=self.context.observations, context=self.context
        )
        self.verdicts.append(verdict)
        return verdict

    def actions(self) -> list[str]:
        """The verdicts so far as strings (``-`` for none)."""
        return [v.action if v else "-" for v in self.verdicts]


# --- patterns -----------------------------------------------------------------------------


def test_same_tool_repeat_guides_once_then_stops(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for _ in range(8):
        verdict = session.batch(read("a.py"))
        if verdict and verdict.action == "stop":
            break
    assert session.actions() == ["-", "-", "guide", "-", "-", "stop"]
    guide = session.verdicts[2]
    assert guide is not None and guide.pattern == "same_tool_repeat"
    assert "without getting new information" in guide.message
    assert 'read_file {"path":"a.py"}' in guide.message
    # the message does not dictate a tool
    for tool in ("grep", "glob", "edit_file", "write_file", "run_command"):
        assert tool not in guide.message
    stop = session.verdicts[-1]
    assert stop is not None and stop.pattern == "same_tool_repeat"
    assert isinstance(session.context.store["stagnation"], StagnationState)


def test_thresholds_come_from_settings(tmp_path: Path) -> None:
    session = Session(tmp_path, repeat_threshold=5, hard_after_guidance=1)
    for _ in range(6):
        session.batch(command("git status", "clean"))
    assert session.actions() == ["-", "-", "-", "-", "guide", "stop"]


def test_disabled_policy_says_nothing(tmp_path: Path) -> None:
    session = Session(tmp_path, enabled=False)
    for _ in range(8):
        session.batch(read("a.py"))
    assert session.actions() == ["-"] * 8


def test_same_result_repeat_with_different_arguments(tmp_path: Path) -> None:
    session = Session(tmp_path)
    session.batch(make_obs("mcp__db__query", {"sql": "select 1"}, "error: no table"))
    session.batch(make_obs("mcp__db__query", {"sql": "select 1;"}, "error: no table"))
    verdict = session.batch(make_obs("mcp__db__query", {"sql": "SELECT 1"}, "error: no table"))
    assert verdict is not None and verdict.action == "guide"
    assert verdict.pattern == "same_result_repeat"
    assert "mcp__db__query" in verdict.message


def test_resource_repeat_rereading_lines_already_read(tmp_path: Path) -> None:
    session = Session(tmp_path)
    session.batch(read("big.py", start=1, end=400))
    session.batch(read("other.py"))
    session.batch(read("big.py", start=100, end=150))
    verdict = session.batch(read("big.py", start=200, end=260))
    assert verdict is not None and verdict.pattern == "resource_repeat"
    assert "`big.py` 3 times" in verdict.message


@pytest.mark.parametrize("period", [2, 3])
def test_alternation(tmp_path: Path, period: int) -> None:
    session = Session(tmp_path)
    calls = [read(f"f{i}.py") for i in range(period)]
    verdicts = [session.batch(obs) for obs in calls + calls]
    assert [v.action if v else "-" for v in verdicts] == ["-"] * (2 * period - 1) + ["guide"]
    last = verdicts[-1]
    assert last is not None and last.pattern == "alternation"
    # going on with the cycle after the guidance ends the run
    for _ in range(2):
        for obs in calls:
            verdict = session.batch(obs)
            if verdict and verdict.action == "stop":
                assert verdict.pattern == "alternation"
                return
    pytest.fail("the alternation never stopped")


def test_one_guidance_per_episode(tmp_path: Path) -> None:
    session = Session(tmp_path)
    session.batch(read("b.py"))
    for _ in range(3):
        session.batch(read("a.py"))
    # more calls without new information, but not the culprit: no second guidance, no stop
    for _ in range(6):
        session.batch(read("b.py"), read("a.py", start=2, end=10))
    assert session.actions().count("guide") == 1
    assert "stop" not in session.actions()


def test_new_information_ends_the_episode(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for _ in range(3):
        session.batch(read("a.py"))
    session.batch(read("a.py"))  # 1 repeat after guidance
    session.batch(read("new.py"))  # new information: episode over, counter reset
    for _ in range(3):
        session.batch(read("a.py"))
    assert session.actions() == ["-", "-", "guide", "-", "-", "-", "-", "guide"]


def test_parallel_batch_of_identical_calls(tmp_path: Path) -> None:
    session = Session(tmp_path)
    verdict = session.batch(read("a.py"), read("a.py"), read("a.py"))
    assert verdict is not None and verdict.action == "guide"


def test_repeated_identical_writes_are_not_progress(tmp_path: Path) -> None:
    session = Session(tmp_path)
    write = make_obs(
        "write_file",
        {"path": "a.py", "content": "x = 1\n"},
        "wrote a.py",
        resources=["file:a.py"],
        mutation=True,
    )
    for _ in range(3):
        session.batch(write)
        session.batch(command("python -m pytest -q", "1 failed"))
    assert "guide" in session.actions()


# --- no false positives -------------------------------------------------------------------


def test_reading_different_files_is_progress(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for i in range(30):
        # identical (empty) content: only the resource tells the reads apart
        session.batch(
            make_obs(
                "read_file",
                {"path": f"pkg{i}/__init__.py"},
                f"(pkg{i}/__init__.py is empty)",
                resources=[f"file:pkg{i}/__init__.py"],
            )
        )
    assert set(session.actions()) == {"-"}


def test_reading_a_big_file_in_chunks_is_progress(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for i in range(20):
        session.batch(read("big.py", start=1 + 100 * i, end=100 * (i + 1)))
    assert set(session.actions()) == {"-"}


def test_rerunning_tests_after_edits_is_progress(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for n in range(10):
        # the test output does not change, but every run follows an edit
        session.batch(command("python -m pytest -q", "1 failed, 2 passed"))
        session.batch(read("calc.py"))
        session.batch(edit("calc.py", n))
    assert set(session.actions()) == {"-"}


def test_polling_a_command_whose_output_changes(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for n in range(20):
        session.batch(command("cat progress.txt", f"{n * 5}% done"))
    assert set(session.actions()) == {"-"}


@pytest.mark.parametrize(
    "polls",
    [
        [("sleep 30; cat status.txt", "building")],
        [("sleep 0.5 && curl -s localhost:8000/health", "starting")],
        [("sleep 10", ""), ("tail -1 build.log", "compiling…")],
    ],
)
def test_polling_with_a_wait_whose_output_has_not_changed_yet(
    tmp_path: Path, polls: list[tuple[str, str]]
) -> None:
    """A command that waits before it looks may see the same answer many times (the build is
    still running): that is polling, not a loop."""
    session = Session(tmp_path)
    for _ in range(12):
        for cmd, output in polls:
            session.batch(command(cmd, output))
    assert set(session.actions()) == {"-"}


def test_a_command_that_does_not_wait_is_still_a_repeat(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for _ in range(6):
        session.batch(command("sleep 0; cat status.txt", "building"))
    assert session.actions()[-1] == "stop"


def test_distinct_searches_with_no_matches(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for word in ("foo", "bar", "baz", "qux", "quux"):
        session.batch(
            make_obs("grep", {"pattern": word}, "No matches found.", resources=[f"grep:.:{word}"])
        )
    assert set(session.actions()) == {"-"}


def test_normal_investigation_of_one_file(tmp_path: Path) -> None:
    session = Session(tmp_path)
    session.batch(read("app.py", start=1, end=120))
    for word in ("def main", "class App", "import", "return"):
        session.batch(
            make_obs(
                "grep",
                {"pattern": word, "path": "app.py"},
                f"app.py: {word} ...",
                resources=[f"grep:app.py:{word}"],
            )
        )
    session.batch(read("app.py", start=40, end=60))  # one look back is fine
    assert set(session.actions()) == {"-"}


# --- cost and replaceability --------------------------------------------------------------


class CountingList(list[Observation]):
    """A list that counts how many items the policy touched."""

    touched = 0

    def __getitem__(self, index: Any) -> Any:
        result = super().__getitem__(index)
        CountingList.touched += len(result) if isinstance(index, slice) else 1
        return result


def test_cost_does_not_grow_with_history(tmp_path: Path) -> None:
    context = RunContext(workspace=tmp_path, home=tmp_path, settings=Settings(), session_id="t")
    history = CountingList(read(f"f{i}.py") for i in range(5000))
    stagnation.stagnation_verdict(observations=history, context=context)
    costs = []
    for i in range(50):
        history.append(read(f"g{i}.py"))
        CountingList.touched = 0
        stagnation.stagnation_verdict(observations=history, context=context)
        costs.append(CountingList.touched)
    window = StagnationSettings().window
    assert max(costs) <= 4 * window


def test_a_plugin_replaces_the_default_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MYCODE_LOAD_PLUGINS", "stagnation")

    class Strict:
        @hookimpl
        def stagnation_verdict(
            self, observations: list[Observation], context: RunContext
        ) -> StagnationVerdict | None:
            if len(observations) >= 2:
                return StagnationVerdict(action="stop", pattern="team", message="two is enough")
            return None

    pm = get_plugin_manager(extra_plugins=[Strict()])
    context = RunContext(workspace=tmp_path, home=tmp_path, settings=Settings(), session_id="t")
    context.observations.extend([read("a.py"), read("a.py"), read("a.py")])
    verdict = pm.hook.stagnation_verdict(observations=context.observations, context=context)
    assert verdict is not None and verdict.pattern == "team"
    # without it, the default policy answers
    pm = get_plugin_manager()
    context.store.clear()
    verdict = pm.hook.stagnation_verdict(observations=context.observations, context=context)
    assert verdict is not None and verdict.pattern == "same_tool_repeat"


# --- end to end through the CLI -----------------------------------------------------------


def run_cli(
    workspace: Path, home: Path, turns: list[dict[str, Any]], prompt: str, *extra: str
) -> tuple[list[dict[str, Any]], int]:
    """Play ``turns`` through ``mycode -p`` and return the stream-json events and exit code."""
    from mycode_core.testing import run_cli as run_mycode
    from mycode_core.testing import write_script

    model = write_script(home / "script.json", turns)
    path = {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    args = ["-p", prompt, "--model", model, "--output-format", "stream-json",
            "--cwd", str(workspace), "--permission-mode", "bypass", *extra]  # fmt: skip
    run = run_mycode(args, workspace, home, path, timeout=120)
    assert run.events and run.events[-1]["type"] == "result", run.stdout + run.stderr
    return run.events, run.rc


def cli_available() -> bool:
    """Whether the CLI module exists yet."""
    import importlib.util

    return importlib.util.find_spec("mycode_core.cli.main") is not None


needs_cli = pytest.mark.skipif(not cli_available(), reason="mycode CLI not built")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A tiny Python project with a failing test."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    (ws / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
        encoding="utf-8",
    )
    return ws


@needs_cli
def test_cli_reading_the_same_file_again_and_again_stops(project: Path, tmp_path: Path) -> None:
    turns = [script_turn("read_file", path="calc.py") for _ in range(8)]
    turns.append({"content": "done"})
    events, code = run_cli(project, tmp_path / "home", turns, "look at calc.py")
    guidance = [e for e in events if e["type"] == "guidance" and e["source"] == "stagnation"]
    soft = [e for e in guidance if "without getting new information" in e["message"]]
    assert len(soft) == 1  # one soft guidance for the episode
    assert soft[0]["pattern"] == "same_tool_repeat"
    assert events.index(soft[0]) < len(events) - 1
    result = events[-1]
    assert result["stop_reason"] == "stagnation"
    assert code == 1
    reads = [e for e in events if e["type"] == "tool_call" and e["name"] == "read_file"]
    assert len(reads) == 6  # guidance after 3, stop after 3 more


@needs_cli
def test_cli_edit_and_rerun_tests_is_not_stagnation(project: Path, tmp_path: Path) -> None:
    if shutil.which("python", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("python not in the venv bin folder")
    turns: list[dict[str, Any]] = [script_turn("read_file", path="calc.py")]
    for old, new in [("a - b", "a * b"), ("a * b", "a - b"), ("a - b", "b + a")]:
        turns.append(script_turn("run_command", command="python -m pytest -q"))
        turns.append(script_turn("read_file", path="calc.py"))
        turns.append(script_turn("edit_file", path="calc.py", old_string=old, new_string=new))
    turns.append(script_turn("run_command", command="python -m pytest -q"))
    turns.append({"content": "Fixed add(); `python -m pytest -q` passes."})
    events, code = run_cli(project, tmp_path / "home", turns, "fix add and run the tests")
    assert not [e for e in events if e["type"] == "guidance" and e["source"] == "stagnation"]
    result = events[-1]
    assert result["stop_reason"] == "completed", result
    assert code == 0
    assert "b + a" in (project / "calc.py").read_text(encoding="utf-8")


@needs_cli
def test_cli_polling_a_build_is_not_stagnation(project: Path, tmp_path: Path) -> None:
    """Eight polls of a build that is still running end with the model's answer, not with
    ``stagnation`` (they were stopped after six)."""
    (project / "status.txt").write_text("building\n", encoding="utf-8")
    turns = [script_turn("run_command", command="sleep 0.1; cat status.txt") for _ in range(8)]
    turns.append({"content": "The build is still running."})
    events, code = run_cli(project, tmp_path / "home", turns, "wait for the build")
    assert not [e for e in events if e["type"] == "guidance" and e["source"] == "stagnation"]
    assert (events[-1]["stop_reason"], code) == ("completed", 0)


def test_same_result_repeat_for_a_command_spelled_differently(tmp_path: Path) -> None:
    session = Session(tmp_path)
    session.batch(command("cat calc.py", "def add(a, b): ..."))
    session.batch(command("cat ./calc.py", "def add(a, b): ..."))
    verdict = session.batch(command("cat  'calc.py'", "def add(a, b): ..."))
    assert verdict is not None and verdict.pattern == "same_result_repeat"


def test_same_result_repeat_for_a_path_spelled_differently(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for path in ("calc.py", "./calc.py", "/ws/calc.py"):
        obs = make_obs("read_file", {"path": path}, "1 def add", resources=["file:calc.py:1-1"])
        verdict = session.batch(obs)
    assert verdict is not None and verdict.pattern == "same_result_repeat"


def test_different_silent_commands_are_not_a_repeat(tmp_path: Path) -> None:
    session = Session(tmp_path)
    for cmd in ("git add -A", "git commit -qm wip", "git tag v1", "git config x.y 1"):
        session.batch(command(cmd, "(no output)\nexit code: 0"))
    assert set(session.actions()) == {"-"}
