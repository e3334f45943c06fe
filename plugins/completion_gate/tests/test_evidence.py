"""What the session proves: only validations after the latest change count."""

from __future__ import annotations

import pytest
from gate_helpers import edit, read, run
from mycode_completion_gate.evidence import collect, is_documentation


def test_no_observations() -> None:
    evidence = collect([])
    assert not evidence.mutated and evidence.changed == []
    assert evidence.status("test").status == "missing"


def test_validation_before_the_change_does_not_count() -> None:
    evidence = collect([run("python -m pytest -q"), read("calc.py"), edit("calc.py")])
    status = evidence.status("test")
    assert status.status == "missing"
    assert status.before_change is not None
    assert status.before_change.command == "python -m pytest -q"
    assert evidence.changed == ["calc.py"]


def test_validation_after_the_latest_change_counts() -> None:
    observations = [edit("a.py"), run("pytest -q"), edit("b.py"), run("pytest -q", passed=False)]
    assert collect(observations).status("test").status == "failed"
    observations.append(run("pytest -q"))
    evidence = collect(observations)
    assert evidence.status("test").status == "passed"
    assert evidence.changed == ["a.py", "b.py"]


def test_a_failing_command_is_cleared_only_by_rerunning_it() -> None:
    observations = [edit("a.py"), run("pytest -q", passed=False), run("pytest -q -k add")]
    status = collect(observations).status("test")
    assert status.status == "failed" and status.command == "pytest -q"
    observations.append(run("pytest  -q"))  # same command, spacing aside
    assert collect(observations).status("test").status == "passed"


def test_kinds_are_separate_and_check_means_any() -> None:
    evidence = collect([edit("a.py"), run("ruff check .", kind="lint")])
    assert evidence.status("lint").status == "passed"
    assert evidence.status("test").status == "missing"
    assert evidence.status("check").status == "passed"


def test_a_chain_proves_every_kind_it_runs() -> None:
    chained = "ruff check . && mypy src && python -m pytest -q"
    evidence = collect([edit("a.py"), run(chained, kind="lint")])
    assert [evidence.status(kind).status for kind in ("lint", "typecheck", "test")] == [
        "passed"
    ] * 3
    failing = collect([edit("a.py"), run(chained, kind="lint", passed=False)])
    assert failing.status("test").status == "failed"
    assert collect([edit("a.py"), run("ruff check . ; pytest", kind="lint")]).status(
        "test"
    ).status == ("missing")  # ';' hides the status: proves nothing without a summary


def test_a_validation_that_writes_files_covers_its_own_writes() -> None:
    observations = [edit("a.py"), run("pytest --cov", mutated=[".coverage"])]
    evidence = collect(observations)
    assert evidence.status("test").status == "passed"
    assert ".coverage" in evidence.changed


def test_a_command_that_changed_unknown_files() -> None:
    obs = run("sed -i s/a/b/ a.py", kind=None)
    obs = obs.model_copy(update={"mutation": True, "mutated": []})
    evidence = collect([run("pytest"), obs])
    assert evidence.unknown_change and evidence.changed_code
    assert evidence.status("test").status == "missing"


def test_last_command_is_suggested_again() -> None:
    evidence = collect([run("tox -e py311"), edit("a.py")])
    assert evidence.last_command("test") == "tox -e py311"
    assert evidence.last_command("lint") is None


@pytest.mark.parametrize(
    ("path", "doc"),
    [
        ("README.md", True),
        ("docs/index.html", True),
        ("CHANGELOG", True),
        ("LICENSE.txt", True),
        ("src/app.py", False),
        ("pyproject.toml", False),
        ("package.json", False),
    ],
)
def test_documentation(path: str, doc: bool) -> None:
    assert is_documentation(path) is doc


def test_documentation_only_change() -> None:
    evidence = collect([edit("README.md")])
    assert evidence.mutated and not evidence.changed_code


def test_changed_since_the_last_passing_run() -> None:
    evidence = collect([edit("a.py"), run("pytest"), edit("b.py"), edit("a.py")])
    status = evidence.status("test")
    assert status.status == "missing"
    assert status.changed_since == ("b.py", "a.py")
    never = collect([edit("a.py"), run("pytest", passed=False), edit("b.py")]).status("test")
    assert never.changed_since == ("a.py", "b.py")  # nothing passed: every change is uncovered
