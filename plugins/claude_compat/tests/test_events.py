"""PostToolUse, Stop, SessionStart, UserPromptSubmit, SessionEnd and the transcript, through
real ``mycode -p`` runs."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cc_helpers import Env, bash, call, hooks_file, notices
from market_helpers import cc_plugin

from mycode_core.testing import FakeOpenAIServer, run_cli, start_cli, turn
from mycode_core.testing.host import host_processes, signal_when_ready, wait_until


def _server_run(env: Env, server: FakeOpenAIServer, prompt: str = "do the task") -> object:
    return run_cli(
        [*server.cli_args(prompt, output_format="stream-json"), "--permission-mode", "bypass"],
        cwd=env.workspace,
        home=env.home,
    )


def test_posttooluse_sees_claude_code_responses_and_feeds_back(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {
            "PostToolUse": [
                ("Bash", [env.hook("lint", exit=2, stderr="lint: 3 problems in a.py")]),
                ("Write|Edit", [env.hook("files")]),
            ],
            "PostToolUseFailure": [(None, [env.hook("failed")])],
        },
    )
    with FakeOpenAIServer() as server:
        server.enqueue(
            turn(
                None,
                [
                    {
                        "id": "w1",
                        "name": "write_file",
                        "arguments": {"path": "a.py", "content": "x=1\n"},
                    }
                ],
            ),
            turn(None, [{"id": "b1", "name": "run_command", "arguments": {"command": "echo out"}}]),
            turn(None, [{"id": "b2", "name": "run_command", "arguments": {"command": "exit 3"}}]),
            turn("done"),
        )
        result = _server_run(env, server)
        requests = server.chat_requests
    assert result.rc == 0, result.stderr
    (write,) = env.log("files")
    assert write["stdin"]["tool_name"] == "Write"
    response = write["stdin"]["tool_response"]
    assert response["filePath"] == str(env.workspace / "a.py") and response["success"] is True
    (lint,) = env.log("lint")  # the failed command went to PostToolUseFailure instead
    bash_response = lint["stdin"]["tool_response"]
    assert bash_response["stdout"].startswith("out") and bash_response["interrupted"] is False
    assert "stderr" in bash_response
    (failed,) = env.log("failed")
    assert failed["stdin"]["hook_event_name"] == "PostToolUseFailure"
    assert failed["stdin"]["tool_use_id"] == "b2" and "exit code: 3" in failed["stdin"]["error"]
    tool_messages = {
        m["tool_call_id"]: m["content"] for m in requests[2].messages if m["role"] == "tool"
    }
    assert "lint: 3 problems in a.py" in tool_messages["b1"]
    assert "lint" not in tool_messages["w1"]
    shown = [e["message"] for e in result.of_type("guidance")]  # the user sees it too
    assert len(shown) == 1 and "lint: 3 problems in a.py" in shown[0]
    assert result.of_type("guidance")[0]["source"] == "claude_code_hook"


def test_stop_block_continues_then_stop_hook_active_lets_it_stop(env: Env) -> None:
    block = {"decision": "block", "reason": "Run the tests before you stop."}
    hooks_file(
        env.home / "hooks.json",
        {"Stop": [(None, [env.hook("stop", stdout=block, when_active={"exit": 0})])]},
    )
    result = env.run([{"content": "done?"}, {"content": "done, really"}])
    assert result.rc == 0, result.stderr
    first, second = (r["stdin"] for r in env.log("stop"))
    assert first["hook_event_name"] == "Stop" and first["stop_hook_active"] is False
    assert second["stop_hook_active"] is True
    (guidance,) = result.of_type("guidance")
    assert guidance["message"] == "Run the tests before you stop."
    assert result.result["final_text"] == "done, really"


def test_a_stop_hook_decides_how_long_it_goes_on_and_max_steps_bounds_it(env: Env) -> None:
    """As in Claude Code, a Stop hook's blocks are not capped by ``[completion_gate]
    max_blocks`` (``/ralph-loop ... --max-iterations 5`` got 3 re-feeds, then
    ``gate_exhausted``); one that always blocks ends at ``max_steps``."""
    hooks_file(
        env.home / "hooks.json", {"Stop": [(None, [env.hook("stop", exit=2, stderr="never")])]}
    )
    (env.home / "config.toml").write_text("[completion_gate]\nmax_blocks = 1\n")
    result = env.run([{"content": text} for text in "abcdefg"], "--max-steps", "5")
    assert result.rc == 1
    assert result.result["stop_reason"] == "max_steps"
    assert len(env.log("stop")) == 5 and len(result.of_type("guidance")) >= 4


def test_the_transcript_is_a_greppable_jsonl_of_the_session(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {"Stop": [(None, [env.hook("stop", grep_transcript="echo marker-42")])]},
    )
    result = env.run([bash("echo marker-42"), {"content": "all done"}])
    assert result.rc == 0, result.stderr
    (record,) = env.log("stop")
    assert record["found"] is True
    path = Path(record["stdin"]["transcript_path"])
    assert path.is_relative_to(env.home) and not path.is_relative_to(env.workspace)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    uses = [
        block
        for line in lines
        if line["type"] == "assistant"
        for block in line["message"]["content"]
        if block.get("type") == "tool_use"
    ]
    assert uses[0]["name"] == "Bash" and uses[0]["input"] == {"command": "echo marker-42"}
    assert lines[0]["type"] == "user" and lines[0]["message"]["content"] == "do the task"
    assert lines[-1]["message"]["content"] == [{"type": "text", "text": "all done"}]
    assert {line["sessionId"] for line in lines} == {result.result["session_id"]}
    assert not any(p.suffix == ".jsonl" for p in env.workspace.rglob("*"))


def test_session_start_and_prompt_context_reach_the_model(env: Env) -> None:
    prompt_out = {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "Ticket ABC-1 is about the parser.",
        }
    }
    hooks_file(
        env.home / "hooks.json",
        {
            "SessionStart": [(None, [env.hook("start", stdout="Style: explain as you go.")])],
            "UserPromptSubmit": [(None, [env.hook("prompt", stdout=prompt_out)])],
            "SessionEnd": [(None, [env.hook("end")])],
        },
    )
    with FakeOpenAIServer() as server:
        server.enqueue(turn("ok"))
        result = _server_run(env, server, "fix the parser")
        (request,) = server.chat_requests
    assert result.rc == 0, result.stderr
    system, user = request.messages[0]["content"], request.messages[1]["content"]
    assert "Style: explain as you go." in system
    assert user.startswith("fix the parser") and "Ticket ABC-1 is about the parser." in user
    assert env.log("start")[0]["stdin"]["source"] == "startup"
    assert env.log("prompt")[0]["stdin"]["prompt"] == "fix the parser"
    (end,) = env.log("end")
    assert end["stdin"]["hook_event_name"] == "SessionEnd" and end["stdin"]["reason"] == "other"


def test_a_resumed_session_keeps_its_session_start_context(env: Env) -> None:
    """A plugin matching ``startup|clear|compact`` (obra/superpowers) counts on Claude Code
    keeping the startup context in the conversation: ``--resume`` and ``--continue`` pin it
    again (it was lost), before what hooks matching ``resume`` add."""
    start = env.hook("start", stdout="You have superpowers.")
    again = env.hook("again", stdout="Resumed: read the plan again.")
    hooks_file(
        env.home / "hooks.json",
        {"SessionStart": [("startup|clear|compact", [start]), ("resume", [again])]},
    )
    with FakeOpenAIServer() as server:
        server.enqueue(turn("one"), turn("two"), turn("three"))
        session = _server_run(env, server, "first").result["session_id"]
        for flags in (["--resume", session], ["--continue"]):
            args = [*server.cli_args("next", output_format="json"), *flags]
            assert run_cli(args, cwd=env.workspace, home=env.home).rc == 0
        systems = [request.messages[0]["content"] for request in server.chat_requests]
    assert len(systems) == 3 and "You have superpowers." in systems[0]
    for system in systems[1:]:
        assert system.endswith("You have superpowers.\n\nResumed: read the plan again.")
    assert len(env.log("start")) == 1 and len(env.log("again")) == 2
    assert not list(env.workspace.rglob("*.json")), "kept under MYCODE_HOME only"


def test_a_blocked_prompt_never_reaches_the_model(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {
            "UserPromptSubmit": [
                (None, [env.hook("prompt", exit=2, stderr="Prompt names a secret.")])
            ]
        },
    )
    with FakeOpenAIServer() as server:
        result = _server_run(env, server, "print AWS_SECRET")
        assert server.chat_requests == []
    assert result.result["stop_reason"] == "interrupted"
    assert any("Prompt names a secret." in n for n in notices(result))


def test_continue_false_stops_the_run_with_its_reason(env: Env) -> None:
    stop = {"continue": False, "stopReason": "Budget hook: out of credits"}
    hooks_file(
        env.home / "hooks.json", {"PostToolUse": [("Bash", [env.hook("stop", stdout=stop)])]}
    )
    result = env.run([bash("echo one"), bash("echo two"), {"content": "done"}])
    assert result.result["stop_reason"] == "interrupted"
    assert len(result.of_type("tool_result")) == 1
    assert any("out of credits" in n for n in notices(result))


def test_odd_exit_codes_are_one_notice_and_do_not_block(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {"PostToolUse": [(None, [env.hook("odd", exit=7, stderr="something odd")])]},
    )
    result = env.run([call("glob", pattern="*")])
    assert result.rc == 0
    (problem,) = [n for n in notices(result) if "exit code 7" in n]
    assert "something odd" in problem


def test_a_hook_declaring_itself_async_is_not_waited_for(env: Env) -> None:
    release = env.root / "release"
    done = env.root / "done"
    command = (
        f'cat > /dev/null; echo \'{{"async": true, "asyncTimeout": 120000}}\'; '
        f"while [ ! -e {release} ]; do sleep 0.1; done; touch {done}"
    )
    hooks_file(
        env.home / "hooks.json",
        {"PreToolUse": [(None, [{"command": command, "timeout": 30}])]},
    )
    result = env.run([bash("echo hi"), {"content": "ok"}])
    try:
        assert result.rc == 0, result.stderr
        assert not [n for n in notices(result) if "timed out" in n or "invalid" in n]
        (ran,) = result.of_type("tool_result")
        assert not ran["is_error"]
        assert not done.exists()  # the run did not wait for it
        assert wait_until(lambda: not host_processes(f"! -e {release} ]"), 10)  # nor outlive it
    finally:
        release.touch()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL])
def test_a_running_hook_does_not_outlive_a_signalled_run(env: Env, sig: int) -> None:
    """A hook still running when mycode was told to stop went on for its whole timeout after
    mycode had left (10 minutes here); now the cancel stops it, and a SIGKILLed mycode's
    lifeline kills its group."""
    ready = env.root / "ready"
    command = f"touch {ready}; sleep 3111 & sleep 3112; echo late"
    hooks_file(
        env.home / "hooks.json", {"PreToolUse": [(None, [{"command": command, "timeout": 600}])]}
    )
    proc = start_cli(
        env.argv([bash("echo hi")]), env.workspace, env.home, stdout=subprocess.DEVNULL
    )
    assert signal_when_ready(proc, ready, sig) == (-9 if sig == signal.SIGKILL else 128 + sig)
    assert wait_until(lambda: not host_processes("sleep 311"), 15)


def test_user_claude_settings_are_read_only_when_enabled(env: Env) -> None:
    fake_home = env.root / "userhome"
    hooks_file(fake_home / ".claude/settings.json", {"PreToolUse": [(None, [env.hook("user")])]})
    env.run([bash("echo hi")], prompt="x", env={"HOME": str(fake_home)})
    assert env.log("user") == []
    (env.home / "config.toml").write_text("[claude_compat]\nuser_claude_settings = true\n")
    env.run([bash("echo hi")], prompt="x", env={"HOME": str(fake_home)})
    assert len(env.log("user")) == 1


LOOP_HOOK = r"""
input=$(cat)
case "$input" in
  *'"hook_event_name":"Stop"'*'"stop_hook_active":false'*) ;;
  *) exit 0 ;;
esac
transcript=$(printf '%s' "$input" | sed 's/.*"transcript_path":"\([^"]*\)".*/\1/')
last=$(grep '"role":"assistant"' "$transcript" | tail -1)
case "$last" in
  *'first try'*) printf '{"decision":"block","reason":"loop again, caf\303\251"}' ;;
esac
exit 0
"""


def test_stdin_and_transcript_are_compact_json_as_scripts_grep_them(env: Env) -> None:
    """Claude Code writes hook input and transcript lines with ``JSON.stringify`` (no spaces),
    and real Stop hooks grep them literally (a loop plugin finds the last answer with
    ``grep '"role":"assistant"'``): with spaced JSON they never matched and the loop never
    looped."""
    script = env.root / "loop.sh"
    script.write_text(LOOP_HOOK, encoding="utf-8")
    hooks_file(env.home / "hooks.json", {"Stop": [(None, [f"bash {script}"])]})
    result = env.run([{"content": "first try"}, {"content": "second try"}], prompt="café")
    assert result.rc == 0, result.stderr
    assert [event["message"] for event in result.of_type("guidance")] == ["loop again, café"]
    assert result.result["final_text"] == "second try"


def _style_plugin(root: Path, name: str, text: str) -> Path:
    """A plugin folder whose SessionStart hook is ``${CLAUDE_PLUGIN_ROOT}/hooks/start.sh``."""
    folder = root / name
    (folder / ".claude-plugin").mkdir(parents=True)
    (folder / ".claude-plugin/plugin.json").write_text(json.dumps({"name": name}))
    script = folder / "hooks/start.sh"
    script.parent.mkdir()
    script.write_text(f"#!/bin/sh\necho '{text}'\n")
    script.chmod(0o755)
    command = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hooks/start.sh"}
    hooks = {"hooks": {"SessionStart": [{"hooks": [command]}]}}
    (folder / "hooks/hooks.json").write_text(json.dumps(hooks))
    return folder


def test_two_plugins_with_the_same_hook_command_both_run(env: Env) -> None:
    """Two output-style plugins both hook SessionStart with the same text,
    ``${CLAUDE_PLUGIN_ROOT}/hooks/start.sh``: they are different scripts, and both run (only
    the first one did: hooks were told apart by their command text alone)."""
    first = _style_plugin(env.root, "explain", "Style one: explain as you go.")
    second = _style_plugin(env.root, "teach", "Style two: ask the user to write code.")
    with FakeOpenAIServer() as server:
        server.enqueue(turn("ok"))
        args = [*server.cli_args("hi", output_format="stream-json")]
        result = run_cli(
            [*args, "--plugin-dir", str(first), "--plugin-dir", str(second)],
            cwd=env.workspace,
            home=env.home,
        )
        (request,) = server.chat_requests
    assert result.rc == 0, result.stderr
    system = request.messages[0]["content"]
    assert "Style one: explain as you go." in system
    assert "Style two: ask the user to write code." in system


def test_bash_stdout_is_the_commands_output_alone(env: Env) -> None:
    """Claude Code's Bash ``tool_response.stdout`` is what the command printed; hooks got
    mycode's ``exit code: 0`` line after it, and ``(no output)`` for a silent command."""
    hooks_file(env.home / "hooks.json", {"PostToolUse": [("Bash", [env.hook("seen")])]})
    turns = [
        bash("printf 'one\\ntwo\\n'"),
        bash("true"),
        bash("cd sub && echo in"),
        {"content": "ok"},
    ]
    (env.workspace / "sub").mkdir()
    result = env.run(turns)
    assert result.rc == 0, result.stderr
    outputs = [record["stdin"]["tool_response"]["stdout"] for record in env.log("seen")]
    assert outputs == ["one\ntwo", "", "in"]


def test_stop_hooks_get_the_last_assistant_message(env: Env) -> None:
    """Claude Code gives Stop hooks ``last_assistant_message`` (the final answer), so they
    need not parse the transcript; it was missing."""
    block = {"decision": "block", "reason": "Say more."}
    hooks_file(
        env.home / "hooks.json",
        {"Stop": [(None, [env.hook("stop", stdout=block, when_active={"exit": 0})])]},
    )
    result = env.run([{"content": "short"}, {"content": "longer answer"}])
    assert result.rc == 0, result.stderr
    said = [record["stdin"]["last_assistant_message"] for record in env.log("stop")]
    assert said == ["short", "longer answer"]


def test_a_slash_command_that_expands_fires_user_prompt_expansion_first(env: Env) -> None:
    """Claude Code's ``UserPromptExpansion``: a plugin's skill or command typed as ``/name``
    is told to hooks matching ``plugin:name`` (claude-security's banner matches
    ``^claude-security:claude-security$``) before ``UserPromptSubmit``; a block stops it."""
    folder = env.root / "kit"
    (folder / "skills" / "menu").mkdir(parents=True)
    (folder / "skills" / "menu" / "SKILL.md").write_text(
        "---\nname: menu\ndescription: Pick a job.\n---\nShow the menu of jobs.\n"
    )
    (folder / "commands").mkdir()
    (folder / "commands" / "deploy.md").write_text("Deploy $ARGUMENTS now.\n")
    banner = {"systemMessage": "KIT BANNER"}
    hooks_file(
        folder / "hooks" / "hooks.json",
        {
            "UserPromptExpansion": [
                ("^kit:menu$", [env.hook("expand", stdout=banner)]),
                ("kit:deploy", [env.hook("refuse", exit=2, stderr="no deploys on Friday")]),
            ],
            "UserPromptSubmit": [(None, [env.hook("submit")])],
        },
    )
    shown = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt="/menu scan all")
    assert shown.rc == 0, shown.stderr
    (told,) = env.log("expand")
    expansion = told["stdin"]
    assert expansion["hook_event_name"] == "UserPromptExpansion"
    assert expansion["command_name"] == "kit:menu" and expansion["command_source"] == "plugin"
    assert (
        expansion["command_args"] == "scan all" and "Show the menu of jobs." in expansion["prompt"]
    )
    assert "KIT BANNER" in [n["message"] for n in shown.of_type("notice")]
    assert len(env.log("submit")) == 1 and env.log("refuse") == []
    plain = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt="just a question")
    assert plain.rc == 0 and len(env.log("expand")) == 1  # nothing expanded: not fired
    refused = env.run([{"content": "ok"}], "--plugin-dir", str(folder), prompt="/kit:deploy prod")
    assert refused.result["stop_reason"] == "interrupted"
    assert refused.of_type("assistant") == [] and len(env.log("submit")) == 2
    assert env.log("refuse")[0]["stdin"]["command_name"] == "kit:deploy"


def test_an_async_rewake_hook_that_exits_2_wakes_the_model(env: Env) -> None:
    """``asyncRewake``: the hook runs in the background; exit 2 puts its ``rewakeMessage`` and
    what it wrote to stderr before the model (the answer waits for it: the run would end
    otherwise), and ``rewakeSummary`` before the user. Exit 0 says nothing."""
    review = {
        "command": env.hook("review", exit=2, stderr="review: a.py leaks a token", sleep=1),
        "asyncRewake": True,
        "rewakeMessage": "Background review of the commit:",
        "rewakeSummary": "the commit review found issues",
    }
    quiet = {"command": env.hook("quiet", stderr="nothing to say"), "asyncRewake": True}
    hooks_file(env.home / "hooks.json", {"PostToolUse": [("Bash", [review, quiet])]})
    result = env.run([bash("echo committed"), {"content": "committed"}, {"content": "fixed it"}])
    assert result.rc == 0, result.stderr
    (said,) = [e["message"] for e in result.of_type("guidance")]
    assert said.startswith("Background review of the commit:") and "a.py leaks a token" in said
    assert "nothing to say" not in said
    assert any("the commit review found issues" in n for n in notices(result))
    assert result.events[-1]["final_text"] == "fixed it"
    assert len(env.log("review")) == len(env.log("quiet")) == 1


def test_an_async_rewake_stop_hook_is_an_ordinary_stop_hook_in_print_mode(
    env: Env, tmp_path: Path
) -> None:
    """A plugin's ``asyncRewake`` Stop hook (security-guidance's review) in ``-p``: as in
    ``claude -p`` it is waited for as any Stop hook — it was killed when the run ended — so its
    exit 2 + stderr, or its ``decision``/``reason``, keep the agent going."""
    root = cc_plugin(tmp_path / "reviewer", "reviewer", commands=())
    said = {"exit": 2, "stderr": "review: a.py leaks a token", "sleep": 1.5}
    stop = {"command": env.hook("review", **said, when_active={}), "asyncRewake": True}
    stop["rewakeMessage"] = "Background review:"  # an interactive session's wake-up only
    hooks_file(root / "hooks" / "hooks.json", {"Stop": [(None, [stop])]})
    turns = [{"content": "first"}, {"content": "second"}]
    result = env.run(turns, "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    assert [e["message"] for e in result.of_type("guidance")] == ["review: a.py leaks a token"]
    assert result.events[-1]["final_text"] == "second"
    assert [r["stdin"]["stop_hook_active"] for r in env.log("review")] == [False, True]
    env.hook("review", stdout={"decision": "block", "reason": "check b.py"}, when_active={})
    result = env.run(turns, "--plugin-dir", str(root))
    assert [e["message"] for e in result.of_type("guidance")] == ["check b.py"]
    assert result.events[-1]["final_text"] == "second"


def test_a_turn_that_ends_on_a_model_error_fires_stop_failure(env: Env) -> None:
    """Claude Code's ``StopFailure``: the turn ended on a model error (here a key the server
    refuses); matched on the kind of error; ``Stop`` does not run, there was no answer."""
    hooks_file(
        env.home / "hooks.json",
        {
            "StopFailure": [
                ("rate_limit", [env.hook("limited")]),
                ("authentication_failed", [env.hook("failed")]),
            ],
            "Stop": [(None, [env.hook("stop")])],
        },
    )
    with FakeOpenAIServer(api_key="right") as server:
        args = server.cli_args("hi", output_format="json")
        args[args.index("--api-key") + 1] = "wrong"
        result = run_cli(args, cwd=env.workspace, home=env.home)
    assert result.rc == 1 and json.loads(result.stdout)["stop_reason"] == "model_error"
    (failed,) = env.log("failed")
    payload = failed["stdin"]
    assert (
        payload["hook_event_name"] == "StopFailure" and payload["error"] == "authentication_failed"
    )
    assert "HTTP 401" in payload["error_details"]
    assert env.log("limited") == [] and env.log("stop") == []


def test_stop_failure_names_the_kind_of_error() -> None:
    from mycode_claude_compat.failure import error_kind

    kinds = {
        "HTTP 429: slow down": "rate_limit",
        "HTTP 402: Payment Required": "billing_error",
        "HTTP 400: bad tool schema": "invalid_request",
        "HTTP 502: bad gateway": "server_error",
        "the model's thinking filled the reply cap (512 tokens) 3 times": "max_output_tokens",
        "cannot reach the model server at http://127.0.0.1:9/v1": "unknown",
    }
    assert {message: error_kind(message) for message in kinds} == kinds


def test_a_hook_in_exec_form_gets_its_args_without_a_shell(env: Env, tmp_path: Path) -> None:
    """Claude Code's exec form: ``args`` beside ``command`` start it with those arguments, no
    shell between, ``${CLAUDE_PLUGIN_ROOT}`` and ``${CLAUDE_PROJECT_DIR}`` filled in — paths
    with spaces need no quoting; ``$HOME`` without braces stays as written."""
    root = cc_plugin(tmp_path / "my plugin", "exec-form", commands=())
    (root / "hooks").mkdir()
    (root / "hooks" / "log.py").write_text(
        "import json, sys\n"
        "data = json.load(sys.stdin)\n"
        "open(sys.argv[1], 'w').write(data['tool_name'] + ' ' + sys.argv[2])\n"
    )
    hook = {
        "type": "command",
        "command": sys.executable,
        "args": [
            "${CLAUDE_PLUGIN_ROOT}/hooks/log.py",
            "${CLAUDE_PROJECT_DIR}/seen it.txt",
            "$HOME",
        ],
    }
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (root / "hooks" / "hooks.json").write_text(json.dumps(hooks))
    result = env.run([bash("true"), {"content": "ok"}], "--plugin-dir", str(root))
    assert result.rc == 0, result.stderr
    assert (env.workspace / "seen it.txt").read_text() == "Bash $HOME"
    bad = {"type": "command", "command": "true", "args": "--flag"}
    (root / "hooks" / "hooks.json").write_text(
        json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [bad]}]}})
    )
    result = env.run([bash("true"), {"content": "ok"}], "--plugin-dir", str(root))
    assert any("'args' must be a list of strings" in n for n in notices(result))


def test_hook_output_too_long_for_the_context_is_saved_and_previewed(env: Env) -> None:
    """As in Claude Code: over 50,000 characters of ``additionalContext`` are saved (under
    ``MYCODE_HOME``) and the model gets a preview and the path, which ``read_file`` opens."""
    long = "".join(f"line {n}\n" for n in range(20_000))
    answer = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": long}}
    hooks_file(
        env.home / "hooks.json", {"PostToolUse": [("Bash", [env.hook("big", stdout=answer)])]}
    )
    turns = [bash("true"), {"content": "ok"}]
    result = env.run(turns)
    text = json.dumps([e for e in result.events if e["type"] in ("tool_result", "guidance")])
    assert "line 0" in text and "line 19999" not in text
    (saved,) = (env.home / "artifacts").glob("*/hook-PostToolUse-*.txt")
    assert saved.read_text() == long.strip() and str(saved) in text
    assert not any(env.workspace.iterdir())
