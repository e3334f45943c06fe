"""Reading the user's request: asked, declined and softened verifications (EN and ZH)."""

from __future__ import annotations

import pytest
from mycode_completion_gate.requirements import parse_request, unfinished_todos


@pytest.mark.parametrize(
    ("prompt", "kind", "must_pass"),
    [
        ("Fix the bug in calc.py and run the tests.", "test", False),
        ("Please rerun the unit tests when you are done", "test", False),
        ("Make sure the tests pass.", "test", True),
        ("Refactor it; the test suite must still pass", "test", True),
        ("Fix the failing test in test_calc.py", "test", True),
        ("The tests are failing, please fix", "test", True),
        ("Check it with pytest", "test", False),
        ("Run pytest on tests/unit/test_calc.py", "test", False),
        ("run the tests in ./tests", "test", False),
        ("run `npm test` afterwards", "test", False),
        ("Change the parser and test it", "test", False),
        ("修复 calc.py 里的 bug，然后跑一下测试", "test", False),
        ("运行测试", "test", False),
        ("确保测试通过", "test", True),
        ("改完跑下单测", "test", False),
        ("修复失败的测试", "test", True),
        ("Lint the code before finishing", "lint", True),
        ("run ruff on the package", "lint", True),
        ("做一下代码检查", "lint", True),
        ("运行 lint", "lint", True),
        ("Make sure it type-checks with mypy", "typecheck", True),
        ("修复类型错误", "typecheck", True),
        ("Make sure the project still builds", "build", True),
        ("Run the build when done", "build", True),
        ("确保能编译通过", "build", True),
        ("Verify your change", "check", False),
        ("改完之后运行检查", "check", False),
        ("最后验证一下", "check", False),
    ],
)
def test_asks(prompt: str, kind: str, must_pass: bool) -> None:
    request = parse_request(prompt)
    ask = request.asked(kind)
    assert ask is not None, request
    assert ask.must_pass is must_pass
    assert not ask.best_effort
    assert ask.phrase


@pytest.mark.parametrize(
    "prompt",
    [
        "Add a docstring to add()",
        "Write a test for add()",
        "写一个测试用例覆盖 add",
        "Add input validation to the form",
        "给表单添加输入验证",
        "Rename the build_index function",
        "Summarise /tmp/pytest-of-root/pytest-64/test_notes/notes.md",
        "Read https://example.org/docs/testing/run-the-tests.html and sum it up",
        "",
    ],
)
def test_no_asks(prompt: str) -> None:
    request = parse_request(prompt)
    assert request.asks == {}
    assert not request.declined


@pytest.mark.parametrize(
    "prompt",
    [
        "Fix calc.py but don't run the tests",
        "No need to run the test suite.",
        "Fix it and skip the tests",
        "修一下这个 bug，不用跑测试",
        "不需要运行单元测试",
    ],
)
def test_declined_tests(prompt: str) -> None:
    request = parse_request(prompt)
    assert "test" in request.declined
    assert request.asked("test") is None


def test_changing_tests_is_not_declining_them() -> None:
    request = parse_request("Don't change the tests. Make sure the tests pass.")
    assert "test" not in request.declined
    assert request.asked("test") is not None


@pytest.mark.parametrize(
    "prompt",
    [
        "Fix calc.py and run the tests if possible",
        "Run the tests if you can.",
        "Run the tests if there are any",
        "尽量跑一下测试",
        "如果可以的话，运行测试",
        "修复这个 bug，可以的话跑一下单测",
    ],
)
def test_softened_asks(prompt: str) -> None:
    ask = parse_request(prompt).asked("test")
    assert ask is not None and ask.best_effort


def test_softening_stays_in_its_sentence() -> None:
    request = parse_request("Run the tests. If possible, keep the public API unchanged.")
    ask = request.asked("test")
    assert ask is not None and not ask.best_effort
    assert request.softens_session  # the soft sentence asked nothing specific


def test_a_firm_ask_wins_over_a_soft_one() -> None:
    request = parse_request("Run the tests if you can. Then make sure the tests pass.")
    ask = request.asked("test")
    assert ask is not None and not ask.best_effort and ask.must_pass


def test_softening_the_whole_task() -> None:
    assert parse_request("Fix the bug in calc.py if you can.").softens_session
    assert parse_request("尽量修复 calc.py 的问题").softens_session
    assert not parse_request("Fix the bug in calc.py.").softens_session


def test_unfinished_todos() -> None:
    store = {
        "todos": [
            {"id": "1", "content": "fix add", "status": "completed"},
            {"id": "2", "content": "add test", "status": "in_progress"},
            {"id": "3", "content": "update docs", "status": "pending"},
            "garbage",
        ]
    }
    assert [t["id"] for t in unfinished_todos(store)] == ["2", "3"]
    assert unfinished_todos({}) == []
    assert unfinished_todos({"todos": "nonsense"}) == []


@pytest.mark.parametrize(
    "prompt",
    ["Why do the tests fail?", "What makes test_parse fail", "How do I make the tests pass?"],
)
def test_questions_ask_for_no_check(prompt: str) -> None:
    assert parse_request(prompt).asks == {}


def test_a_question_next_to_a_request_keeps_the_request() -> None:
    assert "test" in parse_request("Why do the tests fail? Fix it and run the tests.").asks


@pytest.mark.parametrize(
    "prompt", ["When you are done, make sure the tests pass.", "Where possible, run the tests."]
)
def test_a_request_led_by_when_or_where_is_no_question(prompt: str) -> None:
    assert "test" in parse_request(prompt).asks
