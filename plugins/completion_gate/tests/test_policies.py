"""The gate's verdicts per policy, through its ``completion_verdict`` hook implementation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mycode_completion_gate
import pytest
from gate_helpers import edit, read, run
from mycode_completion_gate.commands import judged

from mycode_core import hookimpl
from mycode_core.config import Settings
from mycode_core.plugins import get_plugin_manager
from mycode_core.records import CompletionVerdict, Observation, RunContext


def project(tmp_path: Path, *, tests: bool = True) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    if tests:
        (ws / "test_calc.py").write_text("def test_add():\n    pass\n", encoding="utf-8")
    return ws


def judge(
    ws: Path,
    prompt: str,
    observations: list[Observation],
    *,
    policy: str = "standard",
    todos: list[dict[str, Any]] | None = None,
    events: list[Any] | None = None,
) -> CompletionVerdict:
    settings = Settings()
    settings.completion_gate.policy = policy
    context = RunContext(
        workspace=ws,
        home=ws.parent / "home",
        settings=settings,
        session_id="t",
        prompt=prompt,
        emit=(events.append if events is not None else None),
    )
    context.observations.extend(observations)
    if todos is not None:
        context.store["todos"] = todos
    verdict = mycode_completion_gate.completion_verdict(
        final_text="Done.", observations=context.observations, context=context
    )
    assert verdict is not None
    assert verdict.source == "completion_gate"
    return verdict


# --- standard ------------------------------------------------------------------------------


def test_nothing_changed_nothing_asked_passes(tmp_path: Path) -> None:
    assert judge(project(tmp_path), "What does add do?", [read("calc.py")]).verdict == "pass"


def test_change_without_test_run_fails(tmp_path: Path) -> None:
    verdict = judge(project(tmp_path), "Fix add", [read("calc.py"), edit("calc.py")])
    assert verdict.verdict == "fail"
    assert verdict.missing == ["test"]
    assert verdict.feedback == (
        "You changed calc.py but no test run passed after that change: run the tests "
        "(e.g. `python -m pytest -q`) and report the result."
    )


def test_tests_run_only_before_the_edit_fail(tmp_path: Path) -> None:
    observations = [run("python -m pytest -q", passed=False), edit("calc.py")]
    verdict = judge(project(tmp_path), "Fix add", observations)
    assert verdict.verdict == "fail"
    assert "after the last test run (`python -m pytest -q`)" in verdict.feedback
    assert "run the tests again" in verdict.feedback


def test_passing_tests_after_the_edit_pass(tmp_path: Path) -> None:
    observations = [run("pytest", passed=False), edit("calc.py"), run("pytest")]
    assert judge(project(tmp_path), "Fix add", observations).verdict == "pass"


def test_failing_tests_after_the_edit_fail(tmp_path: Path) -> None:
    observations = [edit("calc.py"), run("pytest -q", passed=False)]
    verdict = judge(project(tmp_path), "Fix add", observations)
    assert verdict.verdict == "fail"
    assert "`pytest -q` after your last change failed" in verdict.feedback


def test_documentation_change_needs_no_tests(tmp_path: Path) -> None:
    assert judge(project(tmp_path), "Fix the typo", [edit("README.md")]).verdict == "pass"


def test_change_in_a_project_without_tests_is_unverified(tmp_path: Path) -> None:
    verdict = judge(project(tmp_path, tests=False), "Fix add", [edit("calc.py")])
    assert verdict.verdict == "unverified"
    assert "No tests" in verdict.feedback


def test_unfinished_todos_fail(tmp_path: Path) -> None:
    todos = [
        {"id": "1", "content": "Fix add", "status": "completed"},
        {"id": "2", "content": "Add a regression test", "status": "in_progress"},
        {"id": "3", "content": "Update the docs", "status": "pending"},
    ]
    verdict = judge(project(tmp_path), "Fix add", [read("calc.py")], todos=todos)
    assert verdict.verdict == "fail"
    assert verdict.missing == ["todos"]
    assert verdict.feedback.startswith(
        '2 todos are not completed: "Add a regression test" (in_progress); "Update the docs" '
        "(pending)."
    )


def test_several_gaps_are_listed(tmp_path: Path) -> None:
    todos = [{"id": "1", "content": "Fix add", "status": "pending"}]
    verdict = judge(project(tmp_path), "Fix add and lint it", [edit("calc.py")], todos=todos)
    assert verdict.verdict == "fail"
    assert sorted(verdict.missing) == ["lint", "test", "todos"]
    assert verdict.feedback.startswith("Not done yet:\n- ")
    assert verdict.feedback.count("\n- ") == 3


def test_requested_run_without_changes(tmp_path: Path) -> None:
    ws = project(tmp_path)
    assert judge(ws, "Run the tests and tell me the result", []).verdict == "fail"
    failing = [run("python -m pytest -q", passed=False)]
    # asked to run them, not to make them pass, and nothing changed: reporting is enough
    assert judge(ws, "Run the tests and tell me the result", failing).verdict == "pass"
    verdict = judge(ws, "Make sure the tests pass", failing)
    assert verdict.verdict == "fail"
    assert 'The user asked: "Make sure the tests pass"' in verdict.feedback


def test_requested_lint_in_chinese(tmp_path: Path) -> None:
    ws = project(tmp_path)
    verdict = judge(ws, "修复 add，然后运行 lint", [edit("calc.py"), run("pytest")])
    assert verdict.verdict == "fail" and verdict.missing == ["lint"]
    observations = [edit("calc.py"), run("pytest"), run("ruff check .", kind="lint")]
    assert judge(ws, "修复 add，然后运行 lint", observations).verdict == "pass"


@pytest.mark.parametrize(
    "prompt",
    ["Fix add and run the tests if possible", "修复 add，尽量跑一下测试", "Fix add if you can"],
)
def test_if_possible_is_unverified(tmp_path: Path, prompt: str) -> None:
    verdict = judge(project(tmp_path), prompt, [edit("calc.py")])
    assert verdict.verdict == "unverified"
    assert verdict.missing == ["test"]


def test_if_possible_and_done_passes(tmp_path: Path) -> None:
    observations = [edit("calc.py"), run("pytest")]
    assert judge(project(tmp_path), "Run the tests if possible", observations).verdict == "pass"


def test_declined_tests_are_unverified(tmp_path: Path) -> None:
    verdict = judge(project(tmp_path), "Fix add, don't run the tests", [edit("calc.py")])
    assert verdict.verdict == "unverified"


def test_explicit_ask_in_a_project_without_tests_is_enforced(tmp_path: Path) -> None:
    verdict = judge(project(tmp_path, tests=False), "Fix add and run the tests", [edit("calc.py")])
    assert verdict.verdict == "fail"
    assert "no tests were found in the project" in verdict.feedback


# --- the other policies ----------------------------------------------------------------------


def test_lenient_only_checks_what_was_asked(tmp_path: Path) -> None:
    ws = project(tmp_path)
    todos = [{"id": "1", "content": "x", "status": "pending"}]
    assert judge(ws, "Fix add", [edit("calc.py")], policy="lenient", todos=todos).verdict == "pass"
    verdict = judge(ws, "Fix add and run the tests", [edit("calc.py")], policy="lenient")
    assert verdict.verdict == "fail" and verdict.missing == ["test"]


def test_off_always_passes(tmp_path: Path) -> None:
    todos = [{"id": "1", "content": "x", "status": "pending"}]
    verdict = judge(
        project(tmp_path), "Fix add and run the tests", [edit("calc.py")], policy="off", todos=todos
    )
    assert verdict.verdict == "pass"


def test_strict_needs_a_validation_for_any_change(tmp_path: Path) -> None:
    ws = project(tmp_path, tests=False)
    verdict = judge(ws, "Fix the typo", [edit("README.md")], policy="strict")
    assert verdict.verdict == "fail" and verdict.missing == ["check"]
    observations = [edit("README.md"), run("ruff check .", kind="lint")]
    assert judge(ws, "Fix the typo", observations, policy="strict").verdict == "pass"


def test_strict_wants_tests_when_the_project_has_them(tmp_path: Path) -> None:
    observations = [edit("calc.py"), run("ruff check .", kind="lint")]
    verdict = judge(project(tmp_path), "Fix add", observations, policy="strict")
    assert verdict.verdict == "fail" and verdict.missing == ["test"]


def test_unknown_policy_falls_back_to_standard_with_one_warning(tmp_path: Path) -> None:
    events: list[Any] = []
    ws = project(tmp_path)
    verdict = judge(ws, "Fix add", [edit("calc.py")], policy="team_policy", events=events)
    assert verdict.verdict == "fail"
    assert len(events) == 1 and events[0].type == "notice"
    assert "team_policy" in events[0].message and "standard" in events[0].message


# --- replacing the gate ---------------------------------------------------------------------


def test_a_team_plugin_answers_before_the_gate(tmp_path: Path) -> None:
    class TeamPolicy:
        @hookimpl
        def completion_verdict(
            self, final_text: str, observations: list[Observation], context: RunContext
        ) -> CompletionVerdict | None:
            if "tested" in final_text:
                return CompletionVerdict(verdict="pass", source="team")
            return None  # hand over to the default gate

    pm = get_plugin_manager(load_entry_points=False, extra_plugins=[TeamPolicy()])
    pm.register(mycode_completion_gate, name="completion_gate")  # registered last on purpose
    ws = project(tmp_path)
    context = RunContext(
        workspace=ws, home=tmp_path / "home", settings=Settings(), session_id="t", prompt="Fix"
    )
    context.observations.append(edit("calc.py"))
    hook = pm.hook.completion_verdict
    verdict = hook(final_text="tested it", observations=context.observations, context=context)
    assert verdict.source == "team" and verdict.verdict == "pass"
    verdict = hook(final_text="done", observations=context.observations, context=context)
    assert verdict.source == "completion_gate" and verdict.verdict == "fail"


def test_a_wrapper_can_veto_the_verdict(tmp_path: Path) -> None:
    class NoTodoInAnswer:
        @hookimpl(wrapper=True)
        def completion_verdict(
            self, final_text: str, observations: list[Observation], context: RunContext
        ) -> Any:
            verdict = yield
            if verdict is not None and verdict.verdict == "pass" and "TODO" in final_text:
                return CompletionVerdict(verdict="fail", feedback="No TODOs.", source="veto")
            return verdict

    pm = get_plugin_manager(load_entry_points=False, extra_plugins=[NoTodoInAnswer()])
    pm.register(mycode_completion_gate, name="completion_gate")
    context = RunContext(
        workspace=project(tmp_path), home=tmp_path / "h", settings=Settings(), session_id="t"
    )
    hook = pm.hook.completion_verdict
    verdict = hook(final_text="Done. TODO: docs", observations=[], context=context)
    assert verdict.source == "veto" and verdict.verdict == "fail"
    verdict = hook(final_text="Done.", observations=[], context=context)
    assert verdict.source == "completion_gate" and verdict.verdict == "pass"


def test_the_gate_names_only_files_changed_after_the_last_passing_run(tmp_path: Path) -> None:
    # issue 18: calc.py -> tests pass -> util.py names util.py only
    observations = [edit("calc.py"), run("pytest -q"), edit("util.py")]
    verdict = judge(project(tmp_path), "Fix add", observations)
    assert verdict.verdict == "fail"
    assert "You changed util.py after the last test run (`pytest -q`)" in verdict.feedback
    assert "calc.py" not in verdict.feedback


def test_documentation_written_after_a_passing_test_run_needs_no_new_run(
    tmp_path: Path,
) -> None:
    ws = project(tmp_path)
    observations = [edit("calc.py"), run("pytest -q"), edit("CHANGELOG.md"), edit("notes.txt")]
    for prompt in ("Fix add", "Fix add and run the tests"):
        assert judge(ws, prompt, observations).verdict == "pass", prompt
        assert judge(ws, prompt, observations, policy="lenient").verdict == "pass", prompt
    verdict = judge(ws, "Fix add", observations, policy="strict")
    assert verdict.verdict == "fail" and "CHANGELOG.md, notes.txt" in verdict.feedback
    failing = [edit("calc.py"), run("pytest -q", passed=False), edit("notes.txt")]
    verdict = judge(ws, "Fix add", failing)
    assert verdict.verdict == "fail" and "`pytest -q` after your last change failed" in (
        verdict.feedback
    )


def test_a_failed_run_in_between_keeps_the_files_since_the_last_pass(tmp_path: Path) -> None:
    observations = [
        edit("calc.py"),
        run("pytest -q"),
        edit("util.py"),
        run("pytest -q", passed=False),
        edit("more.py"),
    ]
    verdict = judge(project(tmp_path), "Fix add", observations)
    assert "You changed util.py, more.py after the last test run" in verdict.feedback
    assert "calc.py" not in verdict.feedback


# --- commands that do not prove what their exit status seems to say ---------------------------


@pytest.mark.parametrize(
    "command",
    [
        "python -m pytest -q 2>&1 | tail -5",
        "pytest -q; echo done",
        "pytest || true",
        "bash -c 'cd sub && pytest | tee log'",
    ],  # fmt: skip
)
def test_a_test_run_whose_exit_status_is_masked_proves_nothing(
    tmp_path: Path, command: str
) -> None:
    verdict = judge(project(tmp_path), "Fix add", [edit("calc.py"), run(command)])
    assert verdict.verdict == "fail"
    assert f"`{command}` exits with the status of its last command" in verdict.feedback
    assert "(e.g. `python -m pytest -q`)" in verdict.feedback


@pytest.mark.parametrize(
    "command", ["set -o pipefail; pytest -q | tail -5", "cd sub && pytest -q && echo ok"]
)
def test_a_test_run_whose_exit_status_is_kept_counts(tmp_path: Path, command: str) -> None:
    assert judge(project(tmp_path), "Fix add", [edit("calc.py"), run(command)]).verdict == "pass"


def test_a_masked_run_then_a_plain_run_passes(tmp_path: Path) -> None:
    observations = [edit("calc.py"), run("pytest | tail -3"), run("pytest")]
    assert judge(project(tmp_path), "Fix add", observations).verdict == "pass"


@pytest.mark.parametrize(
    "command",
    [
        "pytest --version",
        "python -m pytest --collect-only -q",
        "cargo test --no-run",
        "mvn -DskipTests verify",
        "./gradlew check -x test",
    ],
)
def test_a_test_command_that_runs_no_test_proves_nothing(tmp_path: Path, command: str) -> None:
    verdict = judge(project(tmp_path), "Fix add", [edit("calc.py"), run(command)])
    assert verdict.verdict == "fail"
    assert "no test run passed after that change" in verdict.feedback


@pytest.mark.parametrize(
    "command",
    [
        "node --test",
        "node --test test/",
        "make -C sub test",
        "npm --prefix sub test",
        'sh -c "pytest"',
        "yarn jest",
        "npx --yes jest",
        "python -m tox",
        "py.test -q",
        "./node_modules/.bin/jest",
        "mix test",
        "./mvnw -q test",
        "vendor/bin/phpunit",
        "php artisan test",
        "bundle exec rake spec",
        "swift test",
        "flutter test",
        "dart test",
        "deno test -A",
        "sbt test",
        "cabal test",
        "zig build test",
        "python manage.py test",
        "pipenv run pytest",
        "uv run -- pytest",
        "make -j4 test",
        "make tests",
        "just test",
        "pdm run test",
        "./gradlew check",
        "mvn -q verify",
        "./test.sh",
        "scripts/run-tests.sh",
        "bash test.sh",
        "bin/test",
        "python runtests.py",
        "pnpm -r test",
        "pnpm --filter web test",
        "npm -w pkg test",
        "npm --workspace=pkg test",
        "yarn workspace web test",
        "npx turbo run test",
        "nx test app",
        "npx nx run-many -t test",
        "lerna run test",
        "npx playwright test",
    ],  # fmt: skip
)
def test_common_test_runners_the_core_does_not_know(tmp_path: Path, command: str) -> None:
    ws = project(tmp_path)
    passed = [edit("calc.py"), run(command, kind=None)]
    assert judge(ws, "Fix add", passed).verdict == "pass"
    failed = judge(ws, "Fix add", [edit("calc.py"), run(command, kind=None, passed=False)])
    assert failed.verdict == "fail"
    assert f"The last run of `{command}` after your last change failed" in failed.feedback


@pytest.mark.parametrize(
    "prompt", ["Why do the tests fail?", "Why does node --test fail?", "为什么测试没通过？"]
)
def test_a_question_about_failing_tests_is_not_blocked(tmp_path: Path, prompt: str) -> None:
    ws = project(tmp_path)
    assert judge(ws, prompt, [read("calc.py")]).verdict == "pass"
    observations = [read("calc.py"), run("pytest -q", passed=False)]
    assert judge(ws, prompt, observations).verdict == "pass"


@pytest.mark.parametrize(
    "command",
    ["test -f calc.py", "cat tests/data.txt", "ls test/", "make", "just build", "./test-data.sh"],
)
def test_commands_that_are_no_test_run(tmp_path: Path, command: str) -> None:
    verdict = judge(project(tmp_path), "Fix add", [edit("calc.py"), run(command, kind=None)])
    assert verdict.verdict == "fail"


@pytest.mark.parametrize(
    ("output", "outcome"),
    [
        ("Finished in 0.1s\n5 runs, 9 assertions, 0 failures, 0 errors, 0 skips\n", True),
        ("3 tests, 1 failure\n", False),
        ("4 examples, 0 failures\n", True),
        ("[INFO] BUILD SUCCESS\n", True),
        ("BUILD SUCCESS\n", True),
        ("BUILD FAILURE\n", False),
        ("FAILURES!\nTests: 3, Assertions: 3, Failures: 1.\n", False),
        ("1 passed, 0 errors\n", True),
    ],
)
def test_summaries_of_other_runners(output: str, outcome: bool | None) -> None:
    """A piped run of minitest, ExUnit, RSpec, Maven or PHPUnit is judged by its summary; a
    ``0 errors`` count is no failure."""
    assert judged(output) is outcome
