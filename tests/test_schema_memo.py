"""Tool input schemas built from ``@tool`` signatures are remembered under ``MYCODE_HOME``
(issue 24: building each through pydantic cost every start-up a few ms per tool)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from mycode_core import tooling
from mycode_core.testing import FakeOpenAIServer, run_cli
from mycode_core.testing.responses import completion
from mycode_core.tooling import ReadPath, tool_from_function


def _greet(
    name: str,
    times: Annotated[int, Field(ge=1, description="how often")] = 1,
    tone: Literal["warm", "dry"] = "warm",
    path: ReadPath | None = None,
) -> str:
    """Greet someone."""
    return name


class _Point(BaseModel):
    x: int


def _plot(point: _Point) -> str:
    """Plot a point."""
    return str(point.x)


@pytest.fixture(autouse=True)
def _empty_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tooling, "BUILT_SCHEMAS", {})


def test_a_built_schema_is_remembered_and_then_used() -> None:
    first = tool_from_function(_greet).input_schema
    assert len(tooling.BUILT_SCHEMAS) == 1
    key = next(iter(tooling.BUILT_SCHEMAS))
    assert tooling.BUILT_SCHEMAS[key] == first
    marked = {**first, "properties": {**first["properties"], "marker": {}}}
    tooling.BUILT_SCHEMAS[key] = marked
    assert tool_from_function(_greet).input_schema == marked


def test_the_key_changes_with_what_the_schema_is_made_of() -> None:
    def one(name: Annotated[str, "who"]) -> str:
        """Greet."""
        return name

    def other(name: Annotated[str, "whom"]) -> str:
        """Greet."""
        return name

    other.__qualname__ = one.__qualname__
    tool_from_function(one)
    tool_from_function(other)
    assert len(tooling.BUILT_SCHEMAS) == 2
    assert tool_from_function(other).input_schema["properties"]["name"]["description"] == "whom"


def test_a_model_typed_parameter_is_built_every_time() -> None:
    schema = tool_from_function(_plot).input_schema
    assert schema["properties"]["point"]["properties"]["x"]["type"] == "integer"
    assert tooling.BUILT_SCHEMAS == {}


def test_a_remembered_schema_is_a_copy() -> None:
    tool_from_function(_greet).input_schema["properties"].clear()
    assert tool_from_function(_greet).input_schema["properties"]["name"] == {"type": "string"}


def test_a_second_run_sends_the_same_tools_from_the_file(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    tools_sent = []
    for _ in range(2):
        with FakeOpenAIServer() as server:
            server.enqueue(completion("done"))
            done = run_cli(server.cli_args("say done", output_format="json"), workspace, home)
            assert done.rc == 0, done.stderr
            tools_sent.append(server.chat_requests[0].body["tools"])
        cache = json.loads((home / "cache" / "schemas.json").read_text(encoding="utf-8"))
        assert cache["built"], "the built-in tools' schemas are remembered"
    assert tools_sent[0] == tools_sent[1]
    assert {t["function"]["name"] for t in tools_sent[0]} >= {"read_file", "edit_file"}


def test_a_damaged_file_only_costs_the_rebuild(tmp_path: Path) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    (home / "cache").mkdir(parents=True)
    (home / "cache" / "schemas.json").write_text('{"built": [1, 2', encoding="utf-8")
    with FakeOpenAIServer() as server:
        server.enqueue(completion("done"))
        done = run_cli(server.cli_args("say done", output_format="json"), workspace, home)
    assert done.rc == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads((home / "cache" / "schemas.json").read_text(encoding="utf-8"))["built"]
