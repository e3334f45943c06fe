"""A child's edits and tests reach the parent's gate; read-only children run in parallel."""

from __future__ import annotations

from pathlib import Path

from sa_helpers import answer, call, calls, child_events, delegate, main_events, run, workspace

from mycode_core.testing import CliResult, FakeOpenAIServer, delayed

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
READ = call("read_file", "k1", path="calc.py")
FIX = call("edit_file", "k2", path="calc.py", old_string="a - b", new_string="a + b")
TESTS = call("run_command", "k3", command="python -m pytest -q")


def _gate_guidance(events: list[dict[str, object]]) -> list[dict[str, object]]:
    return [e for e in events if e["type"] == "guidance" and e["source"] == "completion_gate"]


def test_the_gate_blocks_a_parent_whose_child_edited_without_tests(tmp_path: Path) -> None:
    ws = workspace(tmp_path, PROJECT)
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text("[completion_gate]\nmax_blocks = 1\n")
    with FakeOpenAIServer(
        [calls(delegate("d1", "CHILD: fix add")), answer("fixed"), answer("fixed, really")]
    ) as server:
        server.route("CHILD:", calls(READ), calls(FIX), answer("I fixed add"))
        result = run(server, ws, "PARENT: fix the add function", "--permission-mode", "bypass")
    assert "a + b" in (ws / "calc.py").read_text()
    parent_blocks = [e for e in _gate_guidance(result.events) if not e.get("agent_id")]
    assert parent_blocks, "the parent's gate must see the child's edit"
    assert "test" in str(parent_blocks[0]["message"]).lower()
    assert result.result is not None and result.result["stop_reason"] == "gate_exhausted"
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert res["metadata"]["subagent"]["files_changed"] == ["calc.py"]


def test_a_childs_passing_tests_satisfy_the_parents_gate(tmp_path: Path) -> None:
    ws = workspace(tmp_path, PROJECT)
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: fix add")), answer("fixed")]) as server:
        server.route("CHILD:", calls(READ), calls(FIX), calls(TESTS), answer("fixed; 1 passed"))
        result = run(server, ws, "PARENT: fix the add function", "--permission-mode", "bypass")
    assert result.rc == 0, result.stderr + result.stdout[-3000:]
    assert not _gate_guidance(result.events)
    assert result.result is not None and result.result["verdict"] == "pass"
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    facts = res["metadata"]["subagent"]
    assert facts["validations"] == [
        {"kind": "test", "command": "python -m pytest -q", "passed": True}
    ]
    assert "Checks run: python -m pytest -q (test): passed" in res["content"]


def _spans(server: FakeOpenAIServer, markers: list[str]) -> dict[str, tuple[float, float]]:
    """For each child: when its first request arrived and when its last one did."""
    spans: dict[str, tuple[float, float]] = {}
    for marker in markers:
        times = [
            r.received_at
            for r in server.chat_requests
            if marker in str(next(m for m in r.messages if m["role"] == "user")["content"])
        ]
        spans[marker] = (min(times), max(times))
    return spans


def _children(
    tmp_path: Path, markers: list[str], task: str, agent: str, delay: float
) -> tuple[CliResult, dict[str, tuple[float, float]]]:
    """A parent delegating one child per marker at once; each child's first answer (a glob
    call) takes ``delay`` seconds. Returns the run and each child's model-request span."""
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    first = calls(*[delegate(f"d{i}", f"{m} {task}", agent) for i, m in enumerate(markers)])
    with FakeOpenAIServer([first, answer("all done")]) as server:
        for marker in markers:
            # the child's first answer takes a while; its second request comes after it
            glob = calls(call("glob", "g", pattern="*.py"))
            server.route(marker, delayed(delay, glob), answer("x"))
        result = run(server, ws)
    assert result.rc == 0, result.stderr
    return result, _spans(server, markers)


def test_read_only_children_run_in_parallel(tmp_path: Path) -> None:
    markers = ["KID-A:", "KID-B:", "KID-C:"]
    result, spans = _children(tmp_path, markers, "look", "explore", 1.5)
    assert len({e["agent_id"] for e in child_events(result)}) == 3
    starts = sorted(start for start, _ in spans.values())
    ends = sorted(end for _, end in spans.values())
    assert starts[-1] < ends[0], f"the children did not overlap: {spans}"


def test_writing_children_run_one_at_a_time(tmp_path: Path) -> None:
    _, by_marker = _children(tmp_path, ["KID-A:", "KID-B:"], "edit", "general", 0.3)
    spans = sorted(by_marker.values())
    assert spans[0][1] < spans[1][0], f"the writing children overlapped: {spans}"
