"""``{"type": "prompt"}`` hooks: the run's model judges the event, through real ``mycode -p``
runs against a fake OpenAI-compatible server."""

from __future__ import annotations

import json
from typing import Any

from cc_helpers import Env, notices

from mycode_core.testing import CliResult, FakeOpenAIServer, run_cli, turn


def _prompt_hooks(env: Env, table: dict[str, tuple[str | None, str]]) -> None:
    hooks: dict[str, Any] = {}
    for event, (matcher, prompt) in table.items():
        entry: dict[str, Any] = {"hooks": [{"type": "prompt", "prompt": prompt}]}
        if matcher is not None:
            entry["matcher"] = matcher
        hooks[event] = [entry]
    (env.home / "hooks.json").write_text(json.dumps({"hooks": hooks}))


def _run(env: Env, server: FakeOpenAIServer) -> CliResult:
    args = [*server.cli_args("do the task", output_format="stream-json")]
    return run_cli(
        [*args, "--permission-mode", "bypass"], cwd=env.workspace, home=env.home, timeout=120
    )


def _bash(command: str, call_id: str) -> Any:
    return turn(None, [{"id": call_id, "name": "run_command", "arguments": {"command": command}}])


def test_a_prompt_hook_asks_the_model_and_its_no_denies_or_blocks(env: Env) -> None:
    """Claude Code sends a prompt hook's ``prompt`` (``$ARGUMENTS`` = the hook input) to a
    model and reads ``{"ok": false, "reason"}`` as a block; mycode refused the hook type."""
    _prompt_hooks(
        env,
        {
            "PreToolUse": ("Bash", "QA-GATE deletions. Input: $ARGUMENTS"),
            "Stop": (None, "QA-STOP: were the tests run?"),
        },
    )
    with FakeOpenAIServer() as server:
        server.route(
            "QA-GATE",
            turn('{"ok": false, "reason": "No deleting in this repo."}'),
            turn('Sure: ```json\n{"ok": true}\n```'),
        )
        server.route(
            "QA-STOP", turn('{"ok": false, "reason": "Run the tests first."}'), turn('{"ok": true}')
        )
        server.enqueue(
            _bash("rm -rf build", "c1"),
            _bash("echo tested", "c2"),
            turn("done"),
            turn("done, tested"),
        )
        result = _run(env, server)
        asked = [r.messages for r in server.chat_requests if "QA-" in r.messages[1]["content"]]
    assert result.rc == 0, result.stderr
    first, second = (event for event in result.of_type("tool_result"))
    assert first["is_error"] and "No deleting in this repo." in first["content"]
    assert not second["is_error"] and "tested" in second["content"]
    gate = json.loads(asked[0][1]["content"].split("Input: ", 1)[1])
    assert (
        gate["hook_event_name"] == "PreToolUse" and gate["tool_input"]["command"] == "rm -rf build"
    )
    assert "Hook input:" in asked[2][1]["content"]  # no $ARGUMENTS: the input is appended
    assert [g["message"] for g in result.of_type("guidance")] == ["Run the tests first."]
    assert result.result["final_text"] == "done, tested"
    assert not notices(result)


def test_a_prompt_hook_that_gets_no_answer_it_can_read_fails_open(env: Env) -> None:
    _prompt_hooks(env, {"PreToolUse": (None, "QA-GATE everything")})
    with FakeOpenAIServer() as server:
        server.route("QA-GATE", turn("I think that is fine."))
        server.enqueue(_bash("echo hi", "c1"), turn("ok"))
        result = _run(env, server)
    assert result.rc == 0, result.stderr
    (ran,) = result.of_type("tool_result")
    assert not ran["is_error"]
    (problem,) = notices(result)
    assert "QA-GATE everything" in problem and '"ok"' in problem
