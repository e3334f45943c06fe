"""Tool schemas (and answers) as servers write them, beyond what the MCP schema, the SDK and
mycode's own checks accept: each tool is offered if it can be, and one that cannot never costs
the others."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp_helpers import PYTHON, RAW_SERVER

from mycode_core.testing import run_cli, write_script

RAW = {"raw": {"command": PYTHON, "args": [str(RAW_SERVER)]}}


def test_schemas_without_a_type_or_with_a_foreign_regex_are_offered(make_run) -> None:  # type: ignore[no-untyped-def]
    """``{}`` or ``{"properties": ...}`` (no ``"type"``) made the SDK reject the whole
    ``tools/list``, so the server; a JavaScript-only ``pattern`` made mycode reject that tool
    and every tool after it, as did an invalid schema (now that tool only, with a notice); an
    input that is not an object made the SDK reject the whole list too (now that tool only)."""
    run = make_run(RAW)
    notices = run.notices()
    assert len(notices) == 1, notices  # the invalid one only, and it alone is left out
    assert "'bad_schema'" in notices[0] and "not offered" in notices[0]
    assert "no-such-type" in notices[0] and "\n" not in notices[0]
    assert "mcp__raw__bad_schema" not in run.context.tools.names()
    assert "mcp__raw__list_input" not in run.context.tools.names()  # no MCP call could pass it
    log = run.context.home / "logs" / "mcp" / "raw.log"
    assert "tool 'list_input' left out: its input is not a JSON object" in log.read_text()
    names = set(run.context.tools.names())
    expected = {"no_type", "empty", "js_regex", "output_no_type", "plain"}
    assert {f"mcp__raw__{name}" for name in expected} <= names
    no_type = run.context.tools.get("mcp__raw__no_type")
    assert no_type is not None and no_type.input_schema == {
        "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]
    }  # fmt: skip
    regex = run.context.tools.get("mcp__raw__js_regex")
    assert regex is not None
    properties: dict[str, Any] = regex.input_schema["properties"]
    assert "pattern" not in properties["word"]  # Python's re cannot read \p{L}
    assert properties["code"]["pattern"] == "^[A-Z]{3}$"
    assert run.call("mcp__raw__no_type", {"q": "hi"}).content == 'no_type got {"q": "hi"}'
    assert run.call("mcp__raw__output_no_type").content == 'output_no_type got {}\n{"n":7}'


def test_the_model_calls_them_through_the_core_checks(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """What is left of each schema is what the core checks the model's arguments against."""
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": RAW}))
    calls = [
        {"name": "mcp__raw__no_type", "arguments": {"q": "hi"}},
        {"name": "mcp__raw__empty", "arguments": {"anything": [1]}},
        {"name": "mcp__raw__js_regex", "arguments": {"word": "été", "code": "ABC"}},
        {"name": "mcp__raw__js_regex", "arguments": {"code": "abc"}},
        {"name": "mcp__raw__no_type", "arguments": {}},
    ]
    model = write_script(tmp_path / "turns.json", [{"tool_calls": calls}, {"content": "done"}])
    done = run_cli(
        ["-p", "go", "--model", model, "--mcp-config", str(config), "--output-format",
         "stream-json", "--completion-policy", "off"],
        cwd=workspace, home=home,
    )  # fmt: skip
    by_id = {e["id"]: e for e in done.events if e["type"] == "tool_result"}
    results = [by_id[e["id"]] for e in done.events if e["type"] == "tool_call"]
    assert [r["is_error"] for r in results] == [False, False, False, True, True], results
    assert results[2]["content"] == 'js_regex got {"code": "ABC", "word": "\\u00e9t\\u00e9"}'
    assert "code" in results[3]["content"] and "q" in results[4]["content"]
    assert done.events[-1]["stop_reason"] == "completed"


def test_a_lone_surrogate_in_an_answer_becomes_a_replacement_character(make_run: Any) -> None:
    """A JavaScript server that cut a string inside an emoji sends ``"\\ud83d"``, which the SDK's
    JSON parser refuses: the answer was dropped and the call hung until its timeout."""
    run = make_run({"raw": {**RAW["raw"], "timeout": 30}})
    result = run.call("mcp__raw__cut_emoji")
    assert not result.is_error, result.content
    assert result.content == "smile \ufffd"
    assert run.call("mcp__raw__plain", {"x": 1}).content == 'plain got {"x": 1}'


def test_mcp_list_names_the_tools_left_out_and_why(workspace: Path, home: Path) -> None:
    """A tool whose input is not an object, or whose schema is invalid, cannot be called:
    ``mcp list`` listed the invalid one among the server's tools and never named the other."""
    (home / "mcp.json").write_text(json.dumps({"mcpServers": RAW}))
    listed = run_cli(["mcp", "list", "--json"], cwd=workspace, home=home)
    (row,) = json.loads(listed.stdout)["servers"]
    assert row["status"] == "ready"
    assert "bad_schema" not in row["tools"] and "list_input" not in row["tools"]
    assert {"plain", "no_type", "empty"} <= set(row["tools"])
    reasons = {t["name"]: t["reason"] for t in row["left_out"]}
    assert reasons["list_input"] == "its input is not a JSON object"
    assert reasons["bad_schema"].startswith("invalid input_schema: 'no-such-type'")
    assert row["hidden"] == []  # not the enabled_tools/disabled_tools line
    text = run_cli(["mcp", "list"], cwd=workspace, home=home).stdout
    (line,) = [line for line in text.splitlines() if "left out" in line]
    assert "bad_schema (invalid input_schema" in line
    assert "list_input (its input is not a JSON object)" in line
    assert "bad_schema" not in next(line for line in text.splitlines() if "tool(s):" in line)
