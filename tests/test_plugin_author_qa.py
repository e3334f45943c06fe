"""What a QA engineer writing third-party plugins ran into: each test fails without its fix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

from mycode_core import ReadPath, tool
from mycode_core.testing import installed_plugin, make_runner, run_events, tools_plugin


def _of(events: list[Any], kind: str) -> list[Any]:
    return [event for event in events if event.type == kind]


def test_a_null_for_an_optional_parameter_counts_as_not_given(tmp_path: Path) -> None:
    """The advertised schema of ``Optional[X]`` is X (small models read it better), and models
    send ``null`` for "not given": the core drops it instead of refusing the call. The
    ``tool_call`` event keeps what the model sent; a required parameter's null is refused."""
    seen: list[tuple[Any, Any]] = []

    @tool
    def qa_types(
        text: str,
        note: Annotated[Optional[str], "a note"] = None,  # noqa: UP045 (as authors write it)
        where: Optional[ReadPath] = None,  # noqa: UP045
    ) -> str:
        """Echo."""
        seen.append((note, where))
        return text

    calls = [
        {"id": "c1", "name": "qa_types", "arguments": {"text": "t", "note": None, "where": None}},
        {"id": "c2", "name": "read_file", "arguments": {"path": "a.txt", "offset": None}},
        {"id": "c3", "name": "qa_types", "arguments": {"text": None}},
    ]
    runner = make_runner(
        tmp_path,
        installed_plugin("builtin_tools"),
        tools_plugin(qa_types),
        turns=[{"tool_calls": calls}, {"content": "done"}],
    )
    (tmp_path / "workspace" / "a.txt").write_text("alpha\n", "utf-8")
    events = run_events(runner)
    results = {r.id: r for r in _of(events, "tool_result")}
    assert not results["c1"].is_error, results["c1"].content
    assert seen == [(None, None)]
    assert not results["c2"].is_error and "alpha" in results["c2"].content
    assert results["c3"].is_error and "text: None is not of type 'string'" in results["c3"].content
    sent = {e.id: e.arguments for e in _of(events, "tool_call")}
    assert sent["c1"] == {"text": "t", "note": None, "where": None}
