"""Concurrency-safe tools really run in parallel; no generated path escapes the workspace."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mycode_builtin_tools import readstate
from mycode_builtin_tools.tools import build_tools

from mycode_core.paths import BoundaryError, resolve_in_workspace
from mycode_core.records import Tool, ToolResult

TOOLS = {tool.name: tool for tool in build_tools()}


_TOGETHER = threading.Barrier(3)


def _slow(arguments: dict[str, Any], context: Any) -> ToolResult:
    """Returns only once all three calls of the batch are running at the same time (a barrier,
    not a clock: a loaded machine cannot make it fail, a serial batch always does)."""
    try:
        _TOGETHER.wait(timeout=60)
    except threading.BrokenBarrierError:
        return ToolResult.error("the three slow calls never ran at the same time")
    return ToolResult(content="slow done")


SLOW = Tool(name="slow", description="sleeps", handler=_slow, concurrency_safe=True)


def test_safe_tools_run_in_parallel(workspace: Path, context) -> None:
    for i in range(20):
        (workspace / f"m{i}.py").write_text(f"value = {i}\n" * 50)
    batch = [
        (SLOW, {}),
        (SLOW, {}),
        (TOOLS["read_file"], {"path": "m1.py"}),
        (TOOLS["grep"], {"pattern": "value = 7"}),
        (TOOLS["glob"], {"pattern": "*.py"}),
        (SLOW, {}),
    ]
    assert all(tool.concurrency_safe for tool, _ in batch)
    _TOGETHER.reset()
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda item: item[0].handler(item[1], context), batch))
    assert [r.is_error for r in results] == [False] * len(batch), "not run in parallel"
    assert "m7.py" in results[3].text()


def test_parallel_reads_are_all_recorded(workspace: Path, context) -> None:
    for i in range(40):
        (workspace / f"f{i}.txt").write_text(f"{i}\n")
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(
                lambda i: TOOLS["read_file"].handler({"path": f"f{i}.txt"}, context), range(40)
            )
        )
    assert all(not r.is_error for r in results)
    assert all(readstate.get(context, workspace / f"f{i}.txt") for i in range(40))


COMPONENTS = st.sampled_from(
    ["..", ".", "a", "b", "link", "loop", "", "~", "~root", "%2e%2e", "...", "a\\..", "é", "\x00"]
)


def _paths() -> st.SearchStrategy[str]:
    return st.builds(
        lambda prefix, parts: prefix + "/".join(parts),
        st.sampled_from(["", "/", "./", "../", "/etc/", "//"]),
        st.lists(COMPONENTS, min_size=0, max_size=8),
    )


def _setup(workspace: Path, outside: Path) -> None:
    (workspace / "a").mkdir(exist_ok=True)
    outside.mkdir(exist_ok=True)
    link = workspace / "link"
    if not link.is_symlink():
        link.symlink_to(outside)
    loop = workspace / "loop"
    if not loop.is_symlink():
        loop.symlink_to(workspace / "loop")


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=_paths())
def test_no_generated_path_escapes(workspace: Path, tmp_path: Path, context, raw: str) -> None:
    outside = tmp_path / "outside"
    _setup(workspace, outside)
    try:
        resolved = resolve_in_workspace(raw, context)
    except BoundaryError:
        return
    real_root = Path(os.path.realpath(workspace))
    real = Path(os.path.realpath(resolved))
    assert real == real_root or real_root in real.parents, (raw, real)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(raw=_paths())
def test_write_tools_never_touch_outside(
    workspace: Path, tmp_path: Path, context, raw: str
) -> None:
    outside = tmp_path / "outside"
    _setup(workspace, outside)
    before = sorted(os.listdir(outside))
    for name in ("write_file", "edit_file", "read_file"):
        result = TOOLS[name].handler(
            {"path": raw, "content": "x", "old_string": "a", "new_string": "b"}, context
        )
        assert isinstance(result, ToolResult)
    assert sorted(os.listdir(outside)) == before
    assert not Path("/etc/a").exists()


def test_symlink_loop_cannot_hide_an_escape(workspace: Path, tmp_path: Path, context) -> None:
    outside = tmp_path / "outside"
    _setup(workspace, outside)
    result = TOOLS["write_file"].handler({"path": "loop/../link/x/y.txt", "content": "x"}, context)
    assert result.is_error
    assert os.listdir(outside) == []
