"""The tool-authoring API (``@tool``, ``ReadPath``/``WritePath``) and what the core enforces
for every tool: the boundary, path rules, plan mode, the facts, results and failures."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path
from typing import Annotated, Any

import pytest

from mycode_core import ReadPath, RunContext, Tool, ToolResult, WritePath, hookimpl, tool
from mycode_core.config import Settings
from mycode_core.testing import (
    assert_tool_contract,
    call_tool,
    make_context,
    make_runner,
    run_events,
    tools_plugin,
)
from mycode_core.testing.contract import ToolContractError


@tool(read_only=True)
def word_count(path: ReadPath) -> int:
    """Count the words of a file in the workspace."""
    return len(path.read_text().split())


@tool
def append_line(path: Annotated[WritePath, "File to append to."], line: str) -> str:
    """Append one line to a file.

    Args:
        line: The text to append (no newline needed).
    """
    with path.open("a", encoding="utf-8") as fh:
        fh.write(line + "\n")
    return f"appended to {path.name}"


# --- the schema from the signature -----------------------------------------------------------


def test_schema_name_and_descriptions_come_from_the_function() -> None:
    @tool
    def search(
        query: Annotated[str, "What to look for."],
        limit: int = 10,
        exact: bool = False,
    ) -> list[str]:
        """Search the notes.

        :param limit: At most this many hits.
        """
        return []

    assert search.name == "search" and search.description == "Search the notes."
    schema = search.input_schema
    assert schema["required"] == ["query"]
    assert schema["properties"]["query"] == {"type": "string", "description": "What to look for."}
    assert schema["properties"]["limit"]["description"] == "At most this many hits."
    assert schema["properties"]["limit"]["default"] == 10
    assert search.read_only is False and search.concurrency_safe is False
    assert word_count.read_only and word_count.concurrency_safe and word_count.risk == "low"
    assert word_count.paths == {"path": "read"} and append_line.paths == {"path": "write"}
    assert append_line.input_schema["properties"]["line"]["description"].startswith("The text")


@pytest.mark.parametrize("bad", ["bad schema", "x" * 65, "", "dots.not.allowed"])
def test_invalid_tool_names_are_refused_when_built(bad: str) -> None:
    with pytest.raises(ValueError, match="invalid"):
        Tool(name=bad, description="d", handler=lambda a, c: "")


def test_an_invalid_schema_is_refused() -> None:
    with pytest.raises(ValueError, match="input_schema"):
        Tool(name="t", description="d", handler=lambda a, c: "", input_schema={"type": "nope"})


def test_registration_problems_are_one_notice_naming_the_plugin(tmp_path: Path) -> None:
    class Bad:
        @hookimpl
        def register_tools(self, register: Any) -> None:
            register(lambda arguments: None)  # a lambda has no valid name
            register(word_count)

    runner = make_runner(tmp_path, Bad(), turns=[])
    events = run_events(runner)
    notices = [e.message for e in events if e.type == "notice"]
    assert any("tool not registered" in n and "<lambda>" in n for n in notices), notices
    system = next(e for e in events if e.type == "system")
    assert "word_count" in system.tools


# --- results and failures --------------------------------------------------------------------


def test_results_json_blocks_async_and_errors(tmp_path: Path) -> None:
    context = make_context(tmp_path)

    @tool
    def data() -> dict[str, Any]:
        """Return data."""
        return {"a": [1, 2], "b": "x"}

    @tool
    async def later(n: int) -> str:
        """An async tool."""
        await asyncio.sleep(0)
        return f"n={n}"

    @tool
    def blocks() -> list[dict[str, Any]]:
        """Content blocks."""
        return [{"type": "text", "text": "hello"}]

    @tool
    def broken() -> str:
        """Raises."""
        raise KeyError("missing")

    assert json.loads(call_tool(data, {}, context).text()) == {"a": [1, 2], "b": "x"}
    assert call_tool(later, {"n": 3}, context).content == "n=3"
    assert call_tool(blocks, {}, context).content == [{"type": "text", "text": "hello"}]
    failed = call_tool(broken, {}, context)
    assert failed.is_error and "KeyError" in failed.text()
    assert "Traceback" in failed.metadata["traceback"]
    assert call_tool(later, {"n": "x"}, context).is_error


def test_a_hung_handler_is_answered_at_its_timeout(tmp_path: Path) -> None:
    import threading

    release = threading.Event()

    @tool(timeout=0.5)
    def hang() -> str:
        """Never returns on its own."""
        release.wait(30)
        return "late"

    try:
        result = call_tool(hang, {}, make_context(tmp_path))
    finally:
        release.set()
    assert result.is_error and "did not finish" in result.text()


# --- paths owned by the core -----------------------------------------------------------------


def test_read_path_refuses_escapes_and_reads_inside(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    (context.workspace / "notes.txt").write_text("one two three")
    secret = tmp_path / "secret.txt"
    secret.write_text("a b")
    (context.workspace / "out").symlink_to(tmp_path)
    assert call_tool(word_count, {"path": "notes.txt"}, context).content == "3"
    for raw in ("../secret.txt", str(secret), "out/secret.txt", "~/x", "a\x00b"):
        result = call_tool(word_count, {"path": raw}, context)
        assert result.is_error, raw
    assert (
        "../../../etc/passwd"
        and call_tool(word_count, {"path": "../../../etc/passwd"}, context).is_error
    )


def test_a_path_the_core_cannot_resolve_is_refused_when_defined(tmp_path: Path) -> None:
    """``list[ReadPath]`` (or a dict, or a union with ``str``) would reach the handler as plain
    ``Path``s, outside the boundary: a read-only tool reading ``~/.ssh`` unasked. So ``@tool``
    refuses it, naming the parameter; ``Optional[ReadPath]`` stays resolved."""
    from mycode_core.errors import ToolDefinitionError

    for hidden in (list[ReadPath], dict[str, WritePath], ReadPath | str, tuple[ReadPath, ...]):

        def reads(paths: Any) -> str:
            """Read files."""
            return ""

        reads.__annotations__["paths"] = hidden
        with pytest.raises(ToolDefinitionError, match="paths.*ReadPath"):
            tool(read_only=True)(reads)

    @tool(read_only=True)
    def maybe(path: ReadPath | None = None) -> str:
        """Read a file, perhaps."""
        return path.read_text() if path is not None else ""

    assert maybe.paths == {"path": "read"}
    secret = tmp_path / "secret.txt"
    secret.write_text("s")
    assert call_tool(maybe, {"path": str(secret)}, make_context(tmp_path)).is_error


def test_readable_roots_open_reads_but_never_writes(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    extra = tmp_path / "skills"
    extra.mkdir()
    (extra / "SKILL.md").write_text("x y")
    context.readable_roots.append(extra)
    assert call_tool(word_count, {"path": str(extra / "SKILL.md")}, context).content == "2"
    result = call_tool(append_line, {"path": str(extra / "SKILL.md"), "line": "z"}, context)
    assert result.is_error and (extra / "SKILL.md").read_text() == "x y"


def test_write_path_is_recorded_and_denied_in_plan_mode(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    result = call_tool(append_line, {"path": "log.txt", "line": "hi"}, context)
    assert not result.is_error and result.metadata["mutated"] == ["log.txt"]
    assert result.metadata["resources"] == ["file:log.txt"]
    plan = make_context(tmp_path / "plan", settings=Settings(permission_mode="plan"))
    denied = call_tool(append_line, {"path": "log.txt", "line": "hi"}, plan)
    assert denied.is_error and "plan mode" in denied.text()
    assert not (plan.workspace / "log.txt").exists()


def test_path_rules_apply_to_plugin_tools(tmp_path: Path) -> None:
    policy = pytest.importorskip("mycode_builtin_tools")  # the default permission policy
    runner = make_runner(
        tmp_path,
        policy,
        tools_plugin(word_count),
        turns=[
            {"tool_calls": [{"name": "word_count", "arguments": {"path": "secrets/key.txt"}}]},
            {"tool_calls": [{"name": "word_count", "arguments": {"path": "open.txt"}}]},
        ],
        permissions={"deny": ["word_count(secrets/**)"]},
    )
    workspace = tmp_path / "workspace"
    (workspace / "secrets").mkdir(parents=True)
    (workspace / "secrets" / "key.txt").write_text("hidden words here")
    (workspace / "open.txt").write_text("a b")
    events = run_events(runner)
    results = [e for e in events if e.type == "tool_result"]
    assert results[0].is_error and "word_count(secrets/**)" in str(results[0].content), results[0]
    assert not results[1].is_error and results[1].content == "2"


def test_the_contract_kit_passes_a_good_tool_and_catches_a_leaky_one(tmp_path: Path) -> None:
    assert_tool_contract(
        word_count, tmp_path / "a", example={"path": "notes.txt"}, files={"notes.txt": "a b"}
    )
    assert_tool_contract(
        append_line, tmp_path / "b", example={"path": "log.txt", "line": "x"}, files={}
    )

    def leaky_handler(arguments: dict[str, Any], context: RunContext) -> str:
        target = Path(context.workspace) / str(arguments["path"])  # the old, escaping template
        return str(len(target.read_text().split()))

    leaky = Tool(
        name="leaky",
        description="Count words (wrongly).",
        input_schema={"type": "object", "properties": {"path": {"type": "string"}}},
        handler=leaky_handler,
        read_only=True,
    )
    with pytest.raises(ToolContractError, match="boundary"):
        assert_tool_contract(
            leaky.model_copy(update={"paths": {}}),
            tmp_path / "c",
            example={"path": "notes.txt"},
            files={"notes.txt": "a b"},
        )
    declared = leaky.model_copy(update={"paths": {"path": "read"}})
    assert_tool_contract(
        declared, tmp_path / "d", example={"path": "notes.txt"}, files={"notes.txt": "a b"}
    )


# --- mutation facts and the gate -------------------------------------------------------------


def _gate_turns(name: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"tool_calls": [{"name": name, "arguments": arguments}]},
        {"content": "Done."},
        {"content": "Done."},
        {"content": "Done."},
        {"content": "Done."},
        {"content": "Done."},
    ]


def test_a_write_tool_needs_verification_like_write_file(tmp_path: Path) -> None:
    pytest.importorskip("mycode_completion_gate")
    from mycode_core.plugins import get_plugin_manager

    pm_plugins = [p for n, p in get_plugin_manager().list_name_plugin() if n == "completion_gate"]
    runner = make_runner(
        tmp_path,
        *pm_plugins,
        tools_plugin(append_line),
        turns=_gate_turns("append_line", {"path": "calc.py", "line": "x = 1"}),
    )
    events = run_events(runner, "Fix calc.py and run the tests")
    observations = [e for e in events if e.type == "observation"]
    assert observations[0].observation["mutation"] is True
    assert any(e.type == "guidance" and e.source == "completion_gate" for e in events)


def test_undeclared_writes_are_detected_and_read_only_liars_reported(tmp_path: Path) -> None:
    @tool
    def scribble(text: str, context: RunContext) -> str:
        """Writes a file it does not declare."""
        (Path(context.workspace) / "scribble.txt").write_text(text)
        return "ok"

    @tool(name="liar", read_only=True)
    def liar(context: RunContext) -> str:
        """Claims to be read-only."""
        (Path(context.workspace) / "lie.txt").write_text("!")
        return "ok"

    runner = make_runner(
        tmp_path,
        tools_plugin(scribble, liar),
        turns=[
            {"tool_calls": [{"name": "scribble", "arguments": {"text": "hi"}}]},
            {"tool_calls": [{"name": "liar", "arguments": {}}]},
        ],
    )
    events = run_events(runner)
    observations = [e.observation for e in events if e.type == "observation"]
    assert observations[0]["mutated"] == ["scribble.txt"] and observations[0]["mutation"]
    notices = [e.message for e in events if e.type == "notice"]
    assert any("'liar'" in n and "read_only" in n and "lie.txt" in n for n in notices), notices


# --- slash commands in print mode ------------------------------------------------------------


def test_print_mode_runs_a_plugin_slash_command(tmp_path: Path) -> None:
    from mycode_core.testing import run_cli, write_plugin_dist, write_script

    site = tmp_path / "site"
    write_plugin_dist(
        site,
        "greeter",
        "from mycode_core import hookimpl, SlashCommand, SlashResult\n"
        "@hookimpl\n"
        "def register_slash_commands(register):\n"
        "    register(SlashCommand(name='greet', run=lambda args, ctx: f'Say hello to {args}'))\n"
        "    register(SlashCommand(name='version', run=lambda a, c: SlashResult(output='v9')))\n",
    )
    model = write_script(tmp_path / "s.json", [{"content": "Hello, Ada!"}])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    result = run_cli(
        ["-p", "/greet Ada", "--model", model, "--output-format", "stream-json"],
        cwd=workspace,
        home=tmp_path / "home",
        env={"PYTHONPATH": str(site)},
    )
    user = [e for e in result.events if e["type"] == "user"]
    assert user and user[0]["content"] == "Say hello to Ada", result.stderr
    shown = run_cli(
        ["-p", "/version", "--model", model],
        cwd=workspace,
        home=tmp_path / "home",
        env={"PYTHONPATH": str(site)},
    )
    assert shown.rc == 0 and shown.stdout.strip() == "v9"


def test_tool_result_from_tool_result_passes_through(tmp_path: Path) -> None:
    @tool
    def explicit() -> ToolResult:
        """Returns a ToolResult."""
        return ToolResult(content="x", metadata={"exit_code": 0})

    result = call_tool(explicit, {}, make_context(tmp_path))
    assert result.content == "x" and result.metadata["exit_code"] == 0


def test_a_symlink_swapped_in_after_the_check_is_not_followed(tmp_path: Path) -> None:
    from mycode_core.paths import bind_path, resolve_in_workspace

    context = make_context(tmp_path)
    (context.workspace / "sub").mkdir()
    (context.workspace / "sub" / "f.txt").write_text("inside")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("SECRET")
    resolved = resolve_in_workspace("sub/f.txt", context)
    path = bind_path(resolved, context.workspace, writable=True)
    assert path.read_text() == "inside"
    (context.workspace / "sub" / "f.txt").unlink()
    (context.workspace / "sub").rmdir()
    (context.workspace / "sub").symlink_to(outside)  # the race: swapped after the check
    with pytest.raises(OSError):
        path.read_text()
    with pytest.raises(OSError):
        path.write_text("overwrite")
    assert (outside / "f.txt").read_text() == "SECRET"


def _call_bounded(probe: Tool, arguments: dict[str, Any], context: RunContext) -> ToolResult:
    """``call_tool`` in a thread; a call still blocked on the FIFO after 30 s fails the test
    (after its open is given the other end of the pipe, so the test always ends)."""
    results: list[ToolResult] = []
    worker = threading.Thread(
        target=lambda: results.append(call_tool(probe, arguments, context)), daemon=True
    )
    worker.start()
    worker.join(30)
    if worker.is_alive():
        os.close(os.open(context.workspace / "pipe", os.O_RDWR | os.O_NONBLOCK))
        worker.join(30)
        pytest.fail(f"{probe.name} blocked opening a FIFO")
    return results[0]


def test_a_fifo_behind_a_bound_path_is_refused_never_opened_blocking(tmp_path: Path) -> None:
    """A plugin's ``path.read_text()`` or ``path.open("a")`` on a FIFO is an error result: the
    open does not wait for the other end of the pipe."""
    context = make_context(tmp_path)
    os.mkfifo(context.workspace / "pipe")
    for probe, arguments in ((word_count, {"path": "pipe"}),
                             (append_line, {"path": "pipe", "line": "x"})):  # fmt: skip
        result = _call_bounded(probe, arguments, context)
        assert result.is_error and "not a regular file" in result.text(), result.text()


def test_a_read_path_cannot_be_opened_for_writing(tmp_path: Path) -> None:
    @tool
    def sneaky(path: ReadPath) -> str:
        """Tries to write through a read path."""
        path.write_text("changed")
        return "wrote"

    context = make_context(tmp_path)
    (context.workspace / "a.txt").write_text("orig")
    result = call_tool(sneaky, {"path": "a.txt"}, context)
    assert result.is_error and "reading only" in result.text()
    assert (context.workspace / "a.txt").read_text() == "orig"
