"""Answers as real servers give them, read as what they are: a server's own error with a code
the SDK also uses for itself is the server's error (not a crash, not a timeout); a result off
its tool's output schema, or with a content block of a type the SDK does not know, still
reaches the model; names and schemas that need cleaning."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from mcp_helpers import HERE, PYTHON, Run

ANSWERS_SERVER = HERE / "servers" / "answers_server.py"
ANSWERS = {"answers": {"command": PYTHON, "args": [str(ANSWERS_SERVER)], "timeout": 30}}


def test_a_servers_own_error_with_the_sdks_codes_is_its_error(make_run: Any) -> None:
    """-32000 is the first code JSON-RPC leaves to a server's own errors (many answer every
    failure with it) and also the SDK's "connection closed": such an answer read as a crash —
    a 5 s stall, "crashed: None", a restart spent; -32001 (the SDK's request timeout) read as
    "timed out after 60 s" at once, with a notice and a health check."""
    run: Run = make_run(ANSWERS)
    quota = run.call("mcp__answers__server_error")
    plain = run.call("mcp__answers__plain_server_error")
    upstream = run.call("mcp__answers__upstream_timeout")
    assert quota.is_error and plain.is_error and upstream.is_error
    assert quota.content == (
        "MCP server 'answers' could not run server_error: "
        'MCP error -32000: quota exceeded ({"retry_after":30})'
    )
    assert plain.content.endswith("MCP error -32000: Server error")
    assert upstream.content.endswith("MCP error -32001: the upstream API timed out")
    assert run.notices() == []  # neither a crash nor a timeout to report
    connection = run.bridge.connections["answers"]
    assert connection.state == "ready" and connection.restarts == 0
    assert run.call("mcp__answers__plain").content == "plain got {}"


def test_a_server_refusing_the_handshake_says_why(make_run: Any) -> None:
    """A server answering ``initialize`` with its own -32000 error did not exit: its reason
    is what it said, not "the server process exited before completing the MCP handshake"."""
    entry = {"command": PYTHON, "args": [str(ANSWERS_SERVER), "--refuse-initialize"]}
    run: Run = make_run({"answers": entry})
    (notice,) = run.notices()
    assert "failed to start: MCP error -32000: missing API key: set ANSWERS_KEY" in notice
    assert "exited" not in notice


def test_a_result_off_its_output_schema_reaches_the_model_with_a_note(make_run: Any) -> None:
    """The SDK refuses a result whose structured content does not match the tool's output
    schema (or that has none): the model was told the server "could not run" a tool that ran,
    and could run it again."""
    run: Run = make_run(ANSWERS)
    off = run.call("mcp__answers__off_schema")
    assert not off.is_error, off.content
    text, structured, note = off.content.split("\n")
    assert (text, structured) == ("n is seven", '{"n":"seven"}')
    assert note.startswith("[note: Invalid structured content returned by tool off_schema: ")
    assert "'seven' is not of type 'integer'" in note and "shown as the server sent it" in note
    bare = run.call("mcp__answers__no_structured")
    assert not bare.is_error, bare.content
    assert bare.content.startswith("seven\n[note: Tool no_structured has an output schema")
    log = (run.context.home / "logs" / "mcp" / "answers.log").read_text()
    assert "[mcp sdk warning] Invalid structured content returned by tool off_schema" in log
    assert run.notices() == []


def test_a_content_block_of_an_unknown_type_costs_only_itself(make_run: Any) -> None:
    """One block of a type the SDK does not know (a later revision's, a server's own) made it
    refuse the whole result, and the model got a pydantic report of 13 errors."""
    run: Run = make_run(ANSWERS)
    result = run.call("mcp__answers__new_block")
    assert not result.is_error, result.content
    assert result.content == "before\n[hologram content, not shown]"


def test_a_name_that_needs_no_cleaning_keeps_it(make_run: Any) -> None:
    """``a.b`` cleans to ``a_b``, the name of another tool: the one called ``a_b`` keeps
    ``mcp__answers__a_b`` and ``a.b`` gets the hashed name (it was the other way round, by
    sort order)."""
    run: Run = make_run(ANSWERS)
    assert run.call("mcp__answers__a_b").content == "a_b got {}"
    (other,) = [n for n in run.context.tools.names() if n.startswith("mcp__answers__a_b_")]
    assert run.call(other).content == "a.b got {}"


def test_an_input_typed_object_or_null_is_offered_as_an_object(make_run: Any) -> None:
    run: Run = make_run(ANSWERS)
    tool = run.context.tools.get("mcp__answers__nullable_input")
    assert tool is not None, run.context.tools.names()
    assert tool.input_schema["type"] == "object"
    assert run.call(tool.name, {"x": 1}).content == 'nullable_input got {"x": 1}'


def test_the_sdks_client_logger_writes_to_the_servers_log(tmp_path: Path, capfd: Any) -> None:
    """``mcp.client.session`` logs as ``client``, not under ``mcp``: its warning ("Tool X not
    listed by server, cannot validate any structured content", a call just after a restart)
    was printed on the user's terminal. Another library's ``client`` records are left alone."""
    from mycode_mcp_bridge.serverlog import SERVER_LOG, route_sdk_logs

    route_sdk_logs()
    logger = logging.getLogger("client")
    site = Path(logging.__file__).parent.parent / "site-packages"
    sdk_file = str(site / "mcp" / "client" / "session.py")
    log_path = tmp_path / "server.log"
    with log_path.open("a", encoding="utf-8") as log:
        token = SERVER_LOG.set(log)
        try:
            record = logger.makeRecord(
                "client", logging.WARNING, sdk_file, 1, "Tool %s not listed", ("t",), None
            )
            logger.handle(record)
        finally:
            SERVER_LOG.reset(token)
    assert "[mcp sdk warning] Tool t not listed" in log_path.read_text()
    seen: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    keep = Keep()
    logger.addHandler(keep)
    try:
        logger.warning("someone else's client")
    finally:
        logger.removeHandler(keep)
    assert [r.getMessage() for r in seen] == ["someone else's client"]
    captured = capfd.readouterr()
    assert "not listed" not in captured.err, captured.err


def test_a_server_has_30_s_to_start_by_default() -> None:
    """As in Claude Code: ``npx -y PACKAGE`` downloads the package on its first run, which took
    over the former 10 s here (server-everything: 10.6 s), so the server never started."""
    from mycode_mcp_bridge.tools import Options

    assert Options().startup_timeout == Options.from_section({}).startup_timeout == 30.0
    assert Options.from_section({"startup_timeout": 5}).startup_timeout == 5.0


def test_claude_codes_timeout_variables_set_the_defaults_in_milliseconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``MCP_TIMEOUT`` / ``MCP_TOOL_TIMEOUT`` (milliseconds, as Claude Code reads them) replace
    the defaults; ``[mcp]`` in the configuration still wins; a bad value is ignored."""
    from mycode_mcp_bridge.tools import Options

    monkeypatch.setenv("MCP_TIMEOUT", "90000")
    monkeypatch.setenv("MCP_TOOL_TIMEOUT", "1500")
    options = Options.from_section({})
    assert (options.startup_timeout, options.call_timeout) == (90.0, 1.5)
    assert Options.from_section({"startup_timeout": 5}).startup_timeout == 5.0
    monkeypatch.setenv("MCP_TIMEOUT", "soon")
    assert Options.from_section({}).startup_timeout == 30.0
