"""``mycode -p --json-schema SCHEMA``: real CLI runs with a scripted model (SPEC §2, §4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import run_cli, write_script

SCHEMA = {
    "type": "object",
    "required": ["name", "count"],
    "properties": {"name": {"type": "string"}, "count": {"type": "integer"}},
}


def _run(tmp_path: Path, answers: list[str], *extra: str) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    model = write_script(tmp_path / "script.json", [{"content": text} for text in answers])
    return run_cli(
        ["-p", "--model", model, "--output-format", "stream-json", *extra, "Give the summary"],
        cwd=ws,
        home=tmp_path / "home",
    )


def _guidance(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "guidance"]


def test_valid_first_answer_inline_schema(tmp_path: Path) -> None:
    run = _run(tmp_path, ['{"name": "calc", "count": 3}'], "--json-schema", json.dumps(SCHEMA))
    assert run.rc == 0, run.stderr
    assert run.result is not None
    assert run.result["stop_reason"] == "completed"
    assert run.result["structured_output"] == {"name": "calc", "count": 3}
    assert _guidance(run.events) == []


def test_invalid_then_valid_from_a_schema_file(tmp_path: Path) -> None:
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA), encoding="utf-8")
    answers = ['{"name": "calc", "count": "three"}', '```json\n{"name": "calc", "count": 3}\n```']
    run = _run(tmp_path, answers, "--json-schema", str(schema_file))
    assert run.rc == 0, run.stderr
    guidance = _guidance(run.events)
    assert len(guidance) == 1
    assert guidance[0]["source"] == "structured_output"
    assert (
        "count" in guidance[0]["message"]
        and "'three' is not of type 'integer'" in (guidance[0]["message"])
    )
    assert run.result is not None
    assert run.result["structured_output"] == {"name": "calc", "count": 3}
    assert run.result["steps"] == 2


def test_never_valid_is_gate_exhausted_even_with_the_gate_off(tmp_path: Path) -> None:
    answers = ["Here it is: calc, 3"] * 5
    run = _run(tmp_path, answers, "--json-schema", json.dumps(SCHEMA), "--completion-policy", "off")
    assert run.rc == 1
    assert run.result is not None
    assert run.result["stop_reason"] == "gate_exhausted"
    assert "structured_output" not in run.result
    guidance = _guidance(run.events)
    assert len(guidance) == 3  # [completion_gate] max_blocks default
    assert all(g["source"] == "structured_output" for g in guidance)
    assert "not JSON" in guidance[0]["message"]


def test_json_output_format_carries_structured_output(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [{"content": '{"name": "a", "count": 1}'}])
    run = run_cli(
        ["-p", "--model", model, "--output-format", "json", "--json-schema", json.dumps(SCHEMA)]
        + ["go"],
        cwd=ws,
        home=tmp_path / "home",
    )
    assert run.rc == 0, run.stderr
    assert json.loads(run.stdout)["structured_output"] == {"name": "a", "count": 1}


def test_without_a_schema_the_result_has_no_structured_output(tmp_path: Path) -> None:
    run = _run(tmp_path, ['{"name": "calc", "count": 3}'])
    assert run.rc == 0, run.stderr
    assert run.result is not None and "structured_output" not in run.result


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        ("{not json", "not valid JSON"),
        ('{"type": "strnig"}', "not a valid JSON Schema"),
        ('{"type": "object", "required": "name"}', "not a valid JSON Schema"),
        ("[1, 2]", "a JSON Schema is an object"),
        ("missing-schema.json", "neither inline JSON nor an existing file"),
        ('{"$ref": "#/nope"}', "$ref '#/nope' does not resolve"),
        ('{"$ref": "https://example.com/s.json"}', "references inside the schema only"),
        ('{"properties": {"a": {"$ref": "#/$defs/b"}}, "$defs": {}}', "'#/$defs/b' does not"),
    ],
)
def test_bad_schema_is_one_line_exit_2(tmp_path: Path, schema: str, says: str) -> None:
    run = _run(tmp_path, ["{}"], "--json-schema", schema)
    assert run.rc == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and says in lines[0], run.stderr
    assert "Traceback" not in run.stderr and run.events == []


def test_references_inside_the_schema_are_followed(tmp_path: Path) -> None:
    schema = {
        "properties": {"n": {"$ref": "#/$defs/count"}},
        "$defs": {"count": {"type": "integer"}},
    }
    run = _run(tmp_path, ['{"n": "three"}', '{"n": 3}'], "--json-schema", json.dumps(schema))
    assert run.rc == 0, run.stderr
    assert run.result is not None and run.result["structured_output"] == {"n": 3}


def test_bad_schema_file_contents(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{oops", encoding="utf-8")
    run = _run(tmp_path, ["{}"], "--json-schema", str(bad))
    assert run.rc == 2 and "not valid JSON" in run.stderr and str(bad) in run.stderr


def test_json_schema_needs_print_mode(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [{"content": "{}"}])
    run = run_cli(
        ["--model", model, "--json-schema", json.dumps(SCHEMA), "go"], cwd=ws, home=tmp_path / "h"
    )
    assert run.rc == 2
    assert "--json-schema needs -p" in run.stderr and "Traceback" not in run.stderr


def test_the_model_is_shown_the_schema_and_the_errors(
    cli: Any, server: Any, server_args: list[str]
) -> None:
    from mycode_core.testing import turn

    server.enqueue(turn('{"name": 5}'), turn('{"name": "calc", "count": 2}'))
    run = cli(["-p", "summarise", "--json-schema", json.dumps(SCHEMA), *server_args])
    assert run.rc == 0, run.stderr
    assert run.result is not None
    assert run.result["structured_output"] == {"name": "calc", "count": 2}
    first, second = server.chat_requests[:2]
    system = first.messages[0]
    assert system["role"] == "system" and '"required": ["name", "count"]' in system["content"]
    later = json.dumps(second.messages)
    assert "'count' is a required property" in later and "5 is not of type 'string'" in later


def test_a_reasoning_models_leading_thoughts_are_left_aside(tmp_path: Path) -> None:
    """llama.cpp (without a reasoning parser), vLLM, LM Studio: ``<think>`` stays in the text."""
    thoughts = '<think>\nThe user wants {"name": ...}; count is 3.\n</think>\n\n'
    answer = thoughts + '{"name": "calc", "count": 3}'
    run = _run(tmp_path, [answer], "--json-schema", json.dumps(SCHEMA))
    assert run.rc == 0, run.stderr
    assert run.result["structured_output"] == {"name": "calc", "count": 3}
