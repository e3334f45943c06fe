"""PreToolUse through real ``mycode -p`` runs: stdin fields, blocking, updatedInput, failures."""

from __future__ import annotations

import os
import time
from pathlib import Path

from cc_helpers import Env, bash, call, hooks_file, notices


def test_pretooluse_gets_claude_code_fields_and_exit_2_blocks(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {"PreToolUse": [("Bash", [env.hook("guard", exit=2, stderr="No rm -rf here.")])]},
    )
    (env.workspace / "notes.txt").write_text("hello\n")
    result = env.run([bash("rm -rf build", "c1"), call("read_file", path="notes.txt")])
    assert result.rc == 0, result.stderr
    (record,) = env.log("guard")  # the matcher missed read_file
    stdin = record["stdin"]
    assert stdin["hook_event_name"] == "PreToolUse"
    assert stdin["tool_name"] == "Bash"
    assert stdin["tool_input"]["command"] == "rm -rf build"
    assert stdin["tool_use_id"] == "c1"
    assert stdin["session_id"] == result.of_type("system")[0]["session_id"]
    assert stdin["cwd"] == str(env.workspace)
    assert stdin["permission_mode"] == "bypassPermissions"
    assert Path(stdin["transcript_path"]).is_relative_to(env.home)
    assert record["cwd"] == str(env.workspace)
    assert record["CLAUDE_PROJECT_DIR"] == str(env.workspace)
    denied, read = result.of_type("tool_result")
    assert denied["is_error"] and "No rm -rf here." in denied["content"]
    assert not read["is_error"]
    permission = result.of_type("permission")[0]
    assert permission["decision"] == "deny"
    assert permission["rule"].startswith("hook:PreToolUse") and permission["layer"] == "user"


def test_file_tools_get_absolute_file_path(env: Env) -> None:
    hooks_file(env.home / "hooks.json", {"PreToolUse": [("Write|Edit", [env.hook("files")])]})
    result = env.run(
        [
            call("write_file", path="src/a.py", content="x = 1\n"),
            call("read_file", path="src/a.py"),
            call("edit_file", path="src/a.py", old_string="1", new_string="2"),
        ]
    )
    assert result.rc == 0, result.stderr
    write, edit = (r["stdin"] for r in env.log("files"))
    assert write["tool_name"] == "Write"
    assert write["tool_input"] == {
        "file_path": str(env.workspace / "src/a.py"),
        "content": "x = 1\n",
    }
    assert edit["tool_name"] == "Edit"
    assert edit["tool_input"]["file_path"] == str(env.workspace / "src/a.py")
    assert (edit["tool_input"]["old_string"], edit["tool_input"]["new_string"]) == ("1", "2")
    assert (env.workspace / "src/a.py").read_text() == "x = 2\n"


def test_json_deny_without_reason_gives_the_model_the_system_message(env: Env) -> None:
    deny = {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"},
        "systemMessage": "[no-curl] curl is not allowed",
    }
    hooks_file(env.home / "hooks.json", {"PreToolUse": [(None, [env.hook("deny", stdout=deny)])]})
    result = env.run([bash("curl example.com")])
    (denied,) = result.of_type("tool_result")
    assert denied["is_error"] and "[no-curl] curl is not allowed" in denied["content"]
    assert any("[no-curl]" in n for n in notices(result))  # shown to the user too


def test_updated_input_rewrites_the_call_before_it_runs(env: Env) -> None:
    rewrite = {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": "echo rewritten-by-hook"},
        }
    }
    hooks_file(
        env.home / "hooks.json", {"PreToolUse": [("Bash", [env.hook("rw", stdout=rewrite)])]}
    )
    result = env.run([bash("echo original")])
    (done,) = result.of_type("tool_result")
    assert not done["is_error"]
    assert "rewritten-by-hook" in done["content"] and "original" not in done["content"]


def test_invalid_updated_input_is_refused_with_a_notice(env: Env) -> None:
    rewrite = {
        "hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"command": 5}}
    }
    hooks_file(
        env.home / "hooks.json", {"PreToolUse": [("Bash", [env.hook("rw", stdout=rewrite)])]}
    )
    marker = env.workspace / "ran.txt"
    result = env.run([bash(f"touch {marker}")])
    assert result.rc == 0
    (refused,) = result.of_type("tool_result")
    assert refused["is_error"] and "invalid" in refused["content"]
    assert not marker.exists()
    assert any("invalid input" in n for n in notices(result))


def test_a_user_deny_rule_wins_over_a_hook_allow(env: Env) -> None:
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    hooks_file(env.home / "hooks.json", {"PreToolUse": [("Bash", [env.hook("ok", stdout=allow)])]})
    (env.home / "config.toml").write_text('[permissions]\ndeny = ["run_command(rm:*)"]\n')
    result = env.run([bash("rm -f nothing.txt"), bash("echo fine")])
    denied, fine = result.of_type("tool_result")
    assert denied["is_error"] and "run_command(rm:*)" in denied["content"]
    assert not fine["is_error"]
    allowed = result.of_type("permission")[1]
    assert allowed["decision"] == "allow" and allowed["rule"].startswith("hook:PreToolUse")


def test_failing_hooks_never_silently_allow(env: Env) -> None:
    marker = env.workspace / "ran.txt"
    cases = {
        "crash": env.hook("crash", exit=1, stderr="Traceback: boom"),
        "missing": "/no/such/hook-command --flag",
        "badjson": env.hook("badjson", stdout="{not json"),
        "huge": env.hook("huge", stdout='{"a": "', big=3_000_000),
    }
    for name, command in cases.items():
        hooks_file(env.home / "hooks.json", {"PreToolUse": [("Bash", [command])]})
        result = env.run([bash(f"touch {marker}")])
        assert result.rc == 0, (name, result.stderr)
        assert "Traceback (most recent" not in result.stderr
        (refused,) = result.of_type("tool_result")
        assert refused["is_error"], name
        assert "asking instead" in refused["content"], (name, refused["content"])
        assert not marker.exists(), name
        problems = [n for n in notices(result) if n.startswith("PreToolUse:")]
        assert len(problems) == 1, (name, notices(result))


def test_a_hanging_hook_is_killed_with_its_children(env: Env) -> None:
    pid_file = env.root / "child.pid"
    command = f"sleep 300 & echo $! > {pid_file}; wait"
    hooks_file(
        env.home / "hooks.json", {"PreToolUse": [("Bash", [{"command": command, "timeout": 1}])]}
    )
    result = env.run([bash("echo hi")])
    assert result.rc == 0
    (refused,) = result.of_type("tool_result")
    assert refused["is_error"] and "timed out" in refused["content"]
    pid = int(pid_file.read_text().strip())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        raise AssertionError("the hook's child process is still alive")


def test_hooks_of_one_event_run_in_parallel(env: Env) -> None:
    hooks_file(
        env.home / "hooks.json",
        {"PreToolUse": [(None, [env.hook("a", sleep=2)]), ("Bash", [env.hook("b", sleep=2)])]},
    )
    result = env.run([bash("echo hi")])
    assert result.rc == 0
    (a,), (b,) = env.log("a"), env.log("b")
    assert a["start"] < b["end"] and b["start"] < a["end"]  # their runs overlapped


def test_mcp_tools_keep_their_names_and_regex_matchers_work(env: Env) -> None:
    from mycode_claude_compat.sources import HookSet, parse_hooks

    hooks = HookSet()
    problems = parse_hooks(
        {
            "hooks": {
                "PreToolUse": [
                    {"matcher": "mcp__memory__.*", "hooks": [{"type": "command", "command": "a"}]},
                    {"matcher": "Notebook.*|Write", "hooks": [{"type": "command", "command": "b"}]},
                    {"matcher": "*", "hooks": [{"type": "command", "command": "c"}]},
                    {"matcher": "(", "hooks": [{"type": "command", "command": "d"}]},
                ],
                "Nonsense": [],
            }
        },
        source="test",
        layer="user",
        into=hooks,
    )
    assert [h.command for h in hooks.matching("PreToolUse", "mcp__memory__save")] == ["a", "c"]
    assert [h.command for h in hooks.matching("PreToolUse", "Write")] == ["b", "c"]
    assert [h.command for h in hooks.matching("PreToolUse", "Bash")] == ["c"]
    assert len(problems) == 2  # the bad regex and the unknown event, one line each


def test_names_with_hyphens_or_commas_match_exactly() -> None:
    """Claude Code: a matcher of plain names matches them exactly, hyphens included (it fixed
    ``code-reviewer`` and ``mcp__brave-search`` substring-matching), and ``Bash,Edit`` is
    either name (it fixed comma-separated matchers never firing)."""
    from mycode_claude_compat.sources import Matcher

    server = Matcher("mcp__brave-search")
    assert server.matches("mcp__brave-search") and not server.matches("mcp__brave-search__web")
    assert Matcher("mcp__brave-search__.*").matches("mcp__brave-search__web")
    reviewer = Matcher("code-reviewer")
    assert reviewer.matches("code-reviewer") and not reviewer.matches("pr-review:code-reviewer")
    both = Matcher("Bash,Edit")
    assert both.matches("Bash") and both.matches("Edit") and not both.matches("Write")
    assert Matcher("Edit|Write").matches("Write") and not Matcher("Edit").matches("MultiEdit")


def test_if_conditions_use_permission_rule_syntax() -> None:
    from mycode_claude_compat.sources import if_matches

    assert if_matches("Bash(git commit:*)", "Bash", {"command": "git commit -m x"})
    assert not if_matches("Bash(git commit:*)", "Bash", {"command": "git push"})
    assert if_matches("Edit(src/**)", "Edit", {"file_path": "/w/src/a/b.py"})
    assert not if_matches("Edit(src/**)", "Write", {"file_path": "/w/src/a.py"})
    assert if_matches("Bash", "Bash", {"command": "anything"})
    key = str(Path.home() / ".ssh" / "id_rsa")  # Claude Code's documented ``Read(~/.ssh/**)``
    assert if_matches("Read(~/.ssh/**)", "Read", {"file_path": key})
    assert not if_matches("Read(~/.ssh/**)", "Read", {"file_path": "/w/.ssh/id_rsa"})


def test_an_unsupported_hook_type_is_one_notice(env: Env) -> None:
    (env.home / "hooks.json").write_text(
        '{"hooks": {"Stop": [{"hooks": [{"type": "agent", "prompt": "Is it done?"}]}],'
        ' "TeammateIdle": [{"hooks": [{"type": "command", "command": "true"}]}]}}'
    )
    result = env.run([{"content": "done"}])
    assert result.rc == 0
    problems = [n for n in notices(result) if "not supported" in n]
    assert len(problems) == 2 and any("'agent'" in n for n in problems)


def test_an_if_condition_matches_each_command_of_a_compound_line(env: Env) -> None:
    """Claude Code matches ``"if": "Bash(git commit:*)"`` against each command of the line, so
    a commit review (the official security-guidance plugin's) fires for ``git add -A && git
    commit -m x`` — the form models use most; it fired only when the line began with it."""
    hook = env.hook("commits", exit=2, stderr="Review the commit first.")
    entry = {"command": hook, "if": "Bash(git commit:*)"}
    hooks_file(env.home / "hooks.json", {"PreToolUse": [("Bash", [entry])]})
    result = env.run(
        [
            bash("echo start && git commit -m 'x' | cat", "c1"),
            bash("echo 'git commit -m y'; git status --short", "c2"),
        ]
    )
    assert result.rc == 0, result.stderr
    assert [record["stdin"]["tool_use_id"] for record in env.log("commits")] == ["c1"]
    first, second = result.of_type("tool_result")
    assert first["is_error"] and "Review the commit first." in first["content"]
    assert "Review the commit" not in second["content"]


def _permission_request(env: Env, answer: dict[str, object] | None, **spec: object) -> object:
    """A ``-p`` run in default mode whose model runs ``git push`` (which asks) and ``echo``
    (which does not), with one PermissionRequest hook answering ``answer``."""
    hook = (
        env.hook("request", stdout=answer, **spec)
        if answer is not None
        else env.hook("request", **spec)
    )
    hooks_file(env.home / "hooks.json", {"PermissionRequest": [("Bash", [hook])]})
    turns = [bash("git push origin main", "p1"), bash("echo hi", "e1")]
    return env.run(turns, "--permission-mode", "default")


def _decision(behavior: str, **more: object) -> dict[str, object]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": behavior, **more},
        }
    }


def test_a_permission_request_hook_answers_the_question_a_call_would_ask(env: Env) -> None:
    result = _permission_request(env, _decision("allow"))
    assert result.rc == 0, result.stderr
    (record,) = env.log("request")  # echo asked nothing: no request for it
    assert record["stdin"]["hook_event_name"] == "PermissionRequest"
    assert record["stdin"]["tool_name"] == "Bash"
    assert record["stdin"]["tool_input"]["command"] == "git push origin main"
    push = result.of_type("permission")[0]
    assert push["decision"] == "allow" and push["rule"].startswith("hook:PermissionRequest")
    ran = result.of_type("tool_result")[0]
    assert "Permission denied" not in str(ran["content"])  # it ran (and failed: no remote)


def test_a_permission_request_hook_denies_with_its_message(env: Env) -> None:
    result = _permission_request(env, _decision("deny", message="no pushing on Fridays"))
    assert result.rc == 0, result.stderr
    push = result.of_type("permission")[0]
    assert push["decision"] == "deny" and push["rule"].startswith("hook:PermissionRequest")
    denied = result.of_type("tool_result")[0]
    assert denied["is_error"] and "no pushing on Fridays" in denied["content"]


def test_a_failing_permission_request_hook_leaves_the_question_as_it_was(env: Env) -> None:
    result = _permission_request(env, None, exit=1, stderr="broken")
    assert result.rc == 0, result.stderr
    push = result.of_type("permission")[0]
    assert push["decision"] == "deny" and not push["rule"].startswith("hook:")  # -p: no one asked


def test_load_skill_is_claude_codes_skill_tool(env: Env) -> None:
    """A hook matching ``Skill`` sees ``load_skill`` as Claude Code's Skill tool."""
    skill = env.workspace / ".claude" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up.\n---\nTidy $0.\n")
    hooks_file(env.home / "hooks.json", {"PreToolUse": [("Skill", [env.hook("skills")])]})
    load = {"tool_calls": [{"name": "load_skill", "arguments": {"name": "tidy", "args": "src"}}]}
    result = env.run([load], "--trust")
    assert result.rc == 0, result.stderr
    (record,) = env.log("skills")
    assert record["stdin"]["tool_name"] == "Skill"
    assert record["stdin"]["tool_input"] == {"skill": "tidy", "args": "src"}
