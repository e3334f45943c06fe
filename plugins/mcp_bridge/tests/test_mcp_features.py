"""Every feature of the bridge against the stdio feature server written for these tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_helpers import Run, feature

from mycode_core.testing.host import wait_until

EXPECTED = {
    "echo", "configure", "peek", "wipe", "weather", "only_structured", "picture", "links",
    "fail", "slow_count", "grow", "shrink", "crash", "hang", "nap", "huge", "noisy", "getenv",
    "whereami", "crash_leaving_helper",
}  # fmt: skip


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    """One started run for the tests that do not change the server."""
    root = tmp_path_factory.mktemp("features")
    (root / "ws").mkdir()
    (root / "home").mkdir()
    import os

    os.environ["MYCODE_TEST_SECRET"] = "do-not-leak"
    servers = {"feat": feature(env={"GIVEN": "${MYCODE_TEST_SECRET}-passed"})}
    run = Run(root / "ws", root / "home", servers).start()
    yield run
    run.close()
    os.environ.pop("MYCODE_TEST_SECRET", None)


def test_tools_registered_with_prefix(shared: Run) -> None:
    names = set(shared.context.tools.names())
    assert {f"mcp__feat__{t}" for t in EXPECTED} <= names
    tool = shared.context.tools.get("mcp__feat__echo")
    assert tool is not None and tool.plugin == "mcp_bridge"
    assert tool.description == "[MCP feat] Echo the text back."


def test_hints_map_to_traits(shared: Run) -> None:
    peek = shared.context.tools.get("mcp__feat__peek")
    wipe = shared.context.tools.get("mcp__feat__wipe")
    echo = shared.context.tools.get("mcp__feat__echo")
    assert peek and wipe and echo
    assert (peek.read_only, peek.concurrency_safe, peek.risk) == (True, True, "low")
    assert (wipe.read_only, wipe.concurrency_safe, wipe.risk) == (False, False, "high")
    assert (echo.read_only, echo.concurrency_safe, echo.risk) == (False, False, "medium")


def test_input_schema_passed_through_intact(shared: Run) -> None:
    tool = shared.context.tools.get("mcp__feat__configure")
    assert tool is not None
    schema = tool.input_schema
    assert schema["type"] == "object" and schema["required"] == ["limits"]
    assert schema["properties"]["limits"] == {"$ref": "#/$defs/Limits"}
    assert schema["properties"]["mode"]["enum"] == ["fast", "safe"]
    limits = schema["$defs"]["Limits"]
    assert limits["properties"]["depth"]["maximum"] == 5
    assert limits["properties"]["tags"] == {
        "items": {"type": "string"},
        "title": "Tags",
        "type": "array",
    }
    result = shared.call(
        "mcp__feat__configure", {"limits": {"depth": 2, "tags": ["a", "b"]}, "mode": "fast"}
    )
    assert result.content == "mode=fast depth=2 tags=a,b"


def test_text_and_structured_results(shared: Run) -> None:
    assert shared.call("mcp__feat__echo", {"text": "héllo"}).content == "héllo"
    weather = shared.call("mcp__feat__weather", {"city": "Oslo"})
    assert weather.content == '{"city":"Oslo","celsius":21.5,"sky":"clear"}'
    assert shared.call("mcp__feat__only_structured").content == '{"answer":42,"ok":true}'


def test_image_result(shared: Run) -> None:
    result = shared.call("mcp__feat__picture")
    assert isinstance(result.content, list)
    kinds = [block["type"] for block in result.content]
    assert kinds == ["text", "image"]
    assert result.content[0]["text"].startswith("here is a picture\n[image: image/png")
    assert result.content[1]["mime_type"] == "image/png"
    assert result.content[1]["data"].startswith("iVBORw0KGgo")


def test_resource_links(shared: Run) -> None:
    result = shared.call("mcp__feat__links")
    assert result.content == (
        "two links\n"
        "resource link: report <file:///tmp/report.txt> (text/plain) — the report\n"
        "resource link: x <https://example.com/x>"
    )


def test_is_error(shared: Run) -> None:
    result = shared.call("mcp__feat__fail", {"reason": "it rained"})
    assert result.is_error and "failed because it rained" in str(result.content)


def test_huge_output_is_capped_with_artifact(shared: Run) -> None:
    result = shared.call("mcp__feat__huge", {"chars": 250_000})
    assert not result.is_error and isinstance(result.content, str)
    assert len(result.content) < 100_500
    artifact = Path(result.metadata["artifact"])
    assert len(artifact.read_text()) == 250_000
    assert "showing 100,000 of 250,000 characters" in result.content
    assert str(artifact) in result.content


def test_progress_becomes_events(shared: Run) -> None:
    before = len(shared.of_type("progress"))
    assert shared.call("mcp__feat__slow_count", {"steps": 4}).content == "counted 4"
    events = shared.of_type("progress")[before:]
    assert [(e.progress, e.total, e.message) for e in events] == [
        (1.0, 4.0, "step 1"), (2.0, 4.0, "step 2"), (3.0, 4.0, "step 3"), (4.0, 4.0, "step 4"),
    ]  # fmt: skip
    assert {e.source for e in events} == {"mcp__feat__slow_count"}


def test_environment_and_cwd(shared: Run) -> None:
    assert shared.call("mcp__feat__getenv", {"var": "GIVEN"}).content == "do-not-leak-passed"
    assert shared.call("mcp__feat__getenv", {"var": "MYCODE_TEST_SECRET"}).content == "<unset>"
    assert shared.call("mcp__feat__whereami").content == str(shared.context.workspace)


def test_stderr_goes_to_a_log_not_the_terminal(
    shared: Run, capfd: pytest.CaptureFixture[str]
) -> None:
    assert shared.call("mcp__feat__noisy").content == "quiet on stdout"
    captured = capfd.readouterr()
    assert "noise on stderr" not in captured.err + captured.out
    log = shared.context.home / "logs" / "mcp" / "feat.log"
    assert "noise on stderr" in log.read_text()


def test_log_messages_go_to_the_servers_log(shared: Run, capfd: pytest.CaptureFixture[str]) -> None:
    """``notifications/message`` (an MCP server's logging) were dropped unseen."""
    assert shared.call("mcp__feat__chatter").content == "chattered"
    log = shared.context.home / "logs" / "mcp" / "feat.log"
    assert wait_until(lambda: "cache is cold" in log.read_text(), 10)
    text = log.read_text()
    assert "[server info] indexing 3 files" in text and "[server warning] cache is cold" in text
    assert "cache is cold" not in "".join(capfd.readouterr())


def test_concurrent_calls(shared: Run) -> None:
    results: dict[int, str] = {}

    def worker(i: int) -> None:
        results[i] = str(shared.call("mcp__feat__nap", {"seconds": 0.3}).content)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
    assert results == {i: "slept 0.3" for i in range(4)}
