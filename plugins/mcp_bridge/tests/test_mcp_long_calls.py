"""Long calls: progress keeps a call alive past its timeout, up to ``max_call_time``; what a
server asks the client in the middle of a call (elicitation, sampling) is refused at once.

The outcomes are decided by what the servers do, not by how fast the machine is: a server
that reports progress every 0.1 s for more than twice the call timeout passes only if progress
resets the timeout, and one that reports progress forever fails only at the overall limit.
"""

from __future__ import annotations

import json
from pathlib import Path

from mcp_helpers import HERE, PYTHON, Run, feature

from mycode_core.config import load_settings

ASKING = {"ask": {"command": PYTHON, "args": [str(HERE / "servers" / "asking_server.py")]}}


def test_progress_resets_the_call_timeout(make_run) -> None:
    """A call of 7 s reporting progress every 0.1 s, against a 3 s call timeout: it was
    cancelled after 3 s although the server kept saying it was working."""
    run = make_run({"feat": feature(timeout=3, startup_timeout=60)})
    done = run.call("mcp__feat__busy", {"seconds": 7})
    assert not done.is_error, done.content
    assert str(done.content).startswith("busy for ")
    progress = [e for e in run.of_type("progress") if e.source == "mcp__feat__busy"]
    assert len(progress) > 10 and progress[0].message == "still busy (1)"
    silent = run.call("mcp__feat__nap", {"seconds": 30})  # no progress: the timeout stands
    assert silent.is_error and "timed out after 3 s" in str(silent.content)


def test_max_call_time_bounds_a_call_that_reports_progress_forever(
    workspace: Path, home: Path, runs: list[Run]
) -> None:
    (home / "config.toml").write_text("[mcp]\ncall_timeout = 3\nmax_call_time = 6\n")
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"feat": feature()}}))
    run = Run(workspace, home, settings=load_settings(workspace, home)).start()
    runs.append(run)
    connection = run.bridge.connections["feat"]
    assert (connection.call_timeout, connection.max_call_time) == (3, 6)
    tool = run.context.tools.get("mcp__feat__busy")
    assert tool is not None and tool.timeout is not None and tool.timeout > 6  # the core's bound
    endless = run.call("mcp__feat__busy", {"seconds": 3600})
    assert endless.is_error
    assert "still running after 6 s, the most one call may take" in str(endless.content)
    assert any("(max_call_time)" in n for n in run.notices())
    # it was busy, not hung: not stopped, and it answers the next call
    assert run.call("mcp__feat__echo", {"text": "next"}).content == "next"
    assert not [n for n in run.notices() if "hung" in n]
    assert connection.restarts == 0


def test_an_entry_sets_its_own_max_call_time(make_run) -> None:
    run = make_run({"feat": feature(timeout=2, max_call_time=4), "other": feature(timeout=900)})
    assert run.bridge.connections["feat"].max_call_time == 4
    assert run.bridge.connections["other"].max_call_time == 900  # never below the timeout
    endless = run.call("mcp__feat__busy", {"seconds": 3600})
    assert "still running after 4 s" in str(endless.content)


def test_elicitation_is_declined_and_sampling_refused_during_a_call(make_run) -> None:
    """The client says it can do neither; a server that asks anyway gets an answer at once
    (elicitation: ``decline``; sampling: a JSON-RPC error), its call goes on, and its log
    says what it asked."""
    run = make_run({"ask": {**ASKING["ask"], "timeout": 60}})
    caps = json.loads(str(run.call("mcp__ask__client_caps").content))
    assert "elicitation" not in caps and "sampling" not in caps
    both = run.call("mcp__ask__ask_both")
    assert not both.is_error, both.content
    asked, sampled = str(both.content).splitlines()
    assert asked == 'elicitation/create -> {"action": "decline"}'
    assert sampled.startswith('sampling/createMessage -> {"error": {"code": -32601')
    assert "sampling" in json.loads(sampled.split(" -> ", 1)[1])["error"]["message"]
    assert run.call("mcp__ask__ask_user").content == asked
    log = run.context.home / "logs" / "mcp" / "ask.log"
    lines = [line for line in log.read_text().splitlines() if line.startswith("[mycode]")]
    assert len(lines) == 3, lines
    assert "elicitation/create" in lines[0] and "Which name?" in lines[0]
    assert "declined" in lines[0]
    assert "sampling/createMessage" in lines[1] and "refused" in lines[1]
    assert run.notices() == []
