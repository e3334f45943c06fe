"""``delegate_task`` through real ``mycode -p`` runs against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path

from sa_helpers import (
    answer,
    call,
    calls,
    child_events,
    delegate,
    main_events,
    requests_for,
    run,
    tool_names,
    workspace,
)

from mycode_core.testing import FakeOpenAIServer, http_error, run_cli, write_plugin_dist


def test_child_runs_with_its_own_history_and_events_are_stamped(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    with FakeOpenAIServer(
        [calls(delegate("d1", "CHILD: what is x in a.py?", "explore")), answer("x is one")]
    ) as server:
        server.route(
            "CHILD:", calls(call("read_file", "k1", path="a.py")), answer("a.py sets x = 1")
        )
        result = run(server, ws)
    assert result.rc == 0, result.stderr
    assert [e["type"] for e in result.events].count("system") == 1
    assert [e["type"] for e in result.events].count("result") == 1
    assert result.events[-1]["type"] == "result"
    inside = child_events(result)
    assert inside and all(e["parent_call_id"] == "d1" for e in inside)
    assert len({e["agent_id"] for e in inside}) == 1
    assert not any("agent_id" in e for e in main_events(result, "tool_call"))
    (read,) = child_events(result, "tool_result")
    assert read["name"] == "read_file" and "x = 1" in read["content"]
    (delegated,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert not delegated["is_error"]
    assert "a.py sets x = 1" in delegated["content"]
    assert delegated["metadata"]["subagent"]["stop_reason"] == "completed"
    # the child's conversation starts fresh: its own system prompt and the task only
    (first, second) = requests_for(server, "CHILD:")
    assert [m["role"] for m in first.messages] == ["system", "user"]
    assert "subagent" in first.messages[0]["content"]
    assert "explore" in first.messages[0]["content"]
    assert tool_names(first) == ["read_file", "glob", "grep"]
    # the parent's history holds the delegate call and its result, not the child's turns
    last = server.chat_requests[-1].messages
    assert all(m.get("tool_call_id") != "k1" for m in last)
    assert any(m.get("tool_call_id") == "d1" for m in last)


def test_usage_rolls_up_with_a_breakdown_per_agent(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    with FakeOpenAIServer(
        [
            calls(delegate("d1", "CHILD: look", "explore"), usage={"prompt_tokens": 100,
                                                                   "completion_tokens": 10}),
            answer("done", usage={"prompt_tokens": 200, "completion_tokens": 20}),
        ]
    ) as server:  # fmt: skip
        small = {"prompt_tokens": 7, "completion_tokens": 3}
        server.route("CHILD:", answer("found it", usage=small))
        result = run(server, ws)
    final = result.result
    assert final is not None and result.rc == 0
    assert final["usage"] == {"input_tokens": 307, "output_tokens": 33}
    by_agent = final["usage_by_agent"]
    assert by_agent["main"] == {"input_tokens": 300, "output_tokens": 30}
    (child_id,) = [key for key in by_agent if key != "main"]
    assert child_id.startswith("explore-")
    assert by_agent[child_id] == {"input_tokens": 7, "output_tokens": 3}
    # the transcript keeps the same result, and the child's own transcript is stored
    home = ws.parent / "home"
    transcript = home / "sessions" / f"{final['session_id']}.jsonl"
    stored = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert stored[-1]["usage_by_agent"] == by_agent
    own = home / "sessions" / f"{final['session_id']}.agents" / f"{child_id}.jsonl"
    kinds = [json.loads(line)["type"] for line in own.read_text().splitlines()]
    assert kinds[0] == "system" and kinds[-1] == "result"


def test_permission_rules_apply_to_child_calls(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"secret.txt": "s3cr3t\n", "ok.txt": "fine\n"})
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text('[permissions]\ndeny = ["read_file(secret.txt)"]\n')
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: read both")), answer("ok")]) as server:
        server.route(
            "CHILD:",
            calls(
                call("read_file", "k1", path="secret.txt"), call("read_file", "k2", path="ok.txt")
            ),
            answer("one was denied"),
        )
        result = run(server, ws)
    decisions = {e["id"]: e for e in child_events(result, "permission")}
    assert decisions["k1"]["decision"] == "deny"
    assert decisions["k1"]["rule"] == "read_file(secret.txt)"
    assert decisions["k2"]["decision"] == "allow"
    results = {e["id"]: e for e in child_events(result, "tool_result")}
    assert results["k1"]["is_error"] and "s3cr3t" not in json.dumps(result.events)


OBSERVER = """
import json, os
from mycode_core import hookimpl

@hookimpl
def on_event(event, context):
    with open(os.environ["SEEN_FILE"], "a") as fh:
        fh.write(json.dumps({"type": event.type, "agent_id": event.agent_id,
                             "name": getattr(event, "name", None)}) + "\\n")
"""


def test_an_on_event_observer_sees_child_events_with_their_agent_id(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    site = tmp_path / "site"
    write_plugin_dist(site, "observer", OBSERVER)
    seen = tmp_path / "seen.jsonl"
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: go", "explore")), answer("ok")]) as server:
        server.route("CHILD:", calls(call("grep", "k1", pattern="x")), answer("found"))
        result = run(server, ws, env={"SEEN_FILE": str(seen)}, pythonpath=[site])
    assert result.rc == 0, result.stderr
    lines = [json.loads(line) for line in seen.read_text().splitlines()]
    child_calls = [e for e in lines if e["type"] == "tool_call" and e["agent_id"]]
    assert [e["name"] for e in child_calls] == ["grep"]
    assert any(e["type"] == "tool_call" and e["name"] == "delegate_task" and not e["agent_id"]
               for e in lines)  # fmt: skip


def test_unknown_profile_is_an_error_listing_the_profiles(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: x", "nosuch")), answer("ok")]) as server:
        result = run(server, ws)
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert res["is_error"]
    assert all(word in res["content"] for word in ("nosuch", "explore", "general"))
    assert not child_events(result)
    assert result.rc == 0


def test_a_child_cannot_delegate_beyond_the_depth_cap(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: nest")), answer("ok")]) as server:
        server.route("CHILD:", calls(delegate("d2", "KID-2: deeper")), answer("could not"))
        result = run(server, ws)
    assert "delegate_task" not in tool_names(requests_for(server, "CHILD:")[0])
    (refused,) = child_events(result, "tool_result")
    assert refused["id"] == "d2" and refused["is_error"]
    assert not requests_for(server, "KID-2:")
    assert result.rc == 0


def test_a_configured_depth_of_two_lets_a_child_delegate_once(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (tmp_path / "home").mkdir()  # the user's config (a project's may not raise it, SPEC §8)
    (tmp_path / "home" / "config.toml").write_text("[subagents]\nmax_depth = 2\n")
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: nest")), answer("ok")]) as server:
        server.route("CHILD:", calls(delegate("d2", "KID-2: deeper")), answer("child done"))
        server.route("KID-2:", calls(delegate("d3", "KID-3: more")), answer("grand done"))
        result = run(server, ws)
    assert result.rc == 0, result.stderr
    assert not requests_for(server, "KID-3:")
    (grand_request, *_rest) = requests_for(server, "KID-2:")
    assert "delegate_task" not in tool_names(grand_request)
    ids = {e["agent_id"] for e in child_events(result)}
    assert len(ids) == 2
    refused = [e for e in child_events(result, "tool_result") if e["id"] == "d3"]
    assert refused and refused[0]["is_error"] and refused[0]["parent_call_id"] == "d2"
    final = result.result
    assert final is not None and len(final["usage_by_agent"]) == 3
    total = sum(u["input_tokens"] for u in final["usage_by_agent"].values())
    assert total == final["usage"]["input_tokens"]


def test_a_child_model_error_is_an_error_result_and_the_parent_goes_on(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: fail")), answer("parent fine")]) as server:
        server.route("CHILD:", http_error(400, "the model does not exist"))
        result = run(server, ws)
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert res["is_error"] and "model_error" in res["content"]
    assert res["metadata"]["subagent"]["stop_reason"] == "model_error"
    assert result.rc == 0 and result.result is not None
    assert result.result["final_text"] == "parent fine"


def test_a_child_stopped_for_stagnation_says_why_in_one_sentence(tmp_path: Path) -> None:
    """A child going round in circles ends with an error result naming the stop, and the
    parent goes on; its reason ended in "information.. What it found" (a doubled period)."""
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    reads = [calls(call("read_file", f"r{n}", path="a.py")) for n in range(6)]
    turns = [calls(delegate("d1", "CHILD: look")), *reads, answer("parent fine")]
    with FakeOpenAIServer(turns) as server:
        result = run(server, ws)
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert res["is_error"] and res["metadata"]["subagent"]["stop_reason"] == "stagnation"
    assert "did not complete: Stopped: the repetition" in res["content"]
    assert ".." not in res["content"], res["content"]
    assert result.rc == 0 and result.result is not None
    assert result.result["final_text"] == "parent fine"


def test_a_child_at_its_step_cap_returns_what_it_found(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 2\n"})
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text("[subagents]\nmax_steps = 2\n")
    first = calls(delegate("d1", "CHILD: explore", "explore"))
    with FakeOpenAIServer([first, answer("ok")]) as srv:
        srv.route(
            "CHILD:",
            turn_with_text("looking at a.py first", call("read_file", "k1", path="a.py")),
            calls(call("read_file", "k2", path="b.py")),
            answer("NOTES: x is 1 and y is 2"),  # the checkpoint notes at the cap
        )
        result = run(srv, ws)
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert res["is_error"]
    assert res["metadata"]["subagent"]["stop_reason"] == "max_steps"
    assert "NOTES: x is 1 and y is 2" in res["content"]
    assert result.rc == 0


def turn_with_text(text: str, *tool_calls: dict[str, object]) -> object:
    """A turn with words and tool calls."""
    from mycode_core.testing import turn

    return turn(text, list(tool_calls), usage={"prompt_tokens": 1, "completion_tokens": 1})


def test_text_view_shows_child_progress_indented_and_not_its_words(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    first = calls(delegate("d1", "CHILD: look", "explore"))
    with FakeOpenAIServer([first, answer("PARENT ANSWER")]) as server:
        server.route("CHILD:", calls(call("read_file", "k1", path="a.py")), answer("CHILD WORDS"))
        result = run(server, ws, output="text")
    assert result.rc == 0, result.stderr
    assert result.stdout.strip() == "PARENT ANSWER"
    child_lines = [line for line in result.stderr.splitlines() if "read_file(a.py)" in line]
    assert child_lines and child_lines[0].startswith("    ")
    assert "explore-" in child_lines[0]
    assert "CHILD WORDS" not in result.stdout


def test_the_json_output_is_the_one_result_with_usage_of_every_agent(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: x")), answer("done")]) as server:
        server.route("CHILD:", answer("child"))
        result = run(server, ws, output="json")
    assert len(result.events) == 1
    assert result.events[0]["usage"]["input_tokens"] == 30


def test_a_child_has_its_own_token_budget_within_the_parents(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    (ws / ".mycode").mkdir()
    (ws / ".mycode" / "config.toml").write_text("[subagents]\nmax_tokens = 50\n")
    big = {"prompt_tokens": 40, "completion_tokens": 20}
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: read", "explore")), answer("ok")]) as srv:
        srv.route(
            "CHILD:",
            calls(call("read_file", "k1", path="a.py"), usage=big),
            calls(call("read_file", "k2", path="a.py", offset=1), usage=big),
        )
        result = run(srv, ws)
    (res,) = [e for e in main_events(result, "tool_result") if e["name"] == "delegate_task"]
    assert res["is_error"] and res["metadata"]["subagent"]["stop_reason"] == "token_budget"
    assert len(requests_for(srv, "CHILD:")) == 1  # stopped before a second request
    assert result.result is not None and result.result["usage"]["input_tokens"] == 60
    assert result.rc == 0


def test_claude_code_hooks_see_the_child_tool_calls(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    seen = tmp_path / "hook-input.jsonl"
    hook = {"type": "command", "command": f"cat >> {seen}; echo >> {seen}"}
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Read", "hooks": [hook]}],
            "SubagentStop": [{"hooks": [hook]}],
        }
    }
    home = ws.parent / "home"  # user-level hooks: no workspace trust needed
    home.mkdir()
    (home / "hooks.json").write_text(json.dumps(settings))
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: read", "explore")), answer("ok")]) as srv:
        srv.route("CHILD:", calls(call("read_file", "k1", path="a.py")), answer("read it"))
        result = run(srv, ws, "PARENT: go")
    assert result.rc == 0, result.stderr
    inputs = [json.loads(line) for line in seen.read_text().splitlines() if line.strip()]
    events = [(i["hook_event_name"], i.get("tool_name")) for i in inputs]
    assert ("PreToolUse", "Read") in events
    assert ("SubagentStop", None) in events
    (pre,) = [i for i in inputs if i["hook_event_name"] == "PreToolUse"]
    assert pre["tool_use_id"] == "k1"


def test_a_failed_childs_line_says_why_in_the_terminal_and_the_session_views(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    both = calls(
        delegate("d1", "CHILD A: look", "explore"), delegate("d2", "CHILD B: look", "explore")
    )
    with FakeOpenAIServer([both, answer("PARENT ANSWER")]) as server:
        server.route("CHILD A:", answer("a.py sets x"))
        server.route("CHILD B:", http_error(400, "invalid request: bad tool schema"))
        result = run(server, ws, output="text")
    assert result.rc == 0, result.stderr
    failed = [line for line in result.stderr.splitlines() if "✗" in line]
    assert len(failed) == 1 and "HTTP 400" in failed[0], result.stderr
    assert "invalid request" in failed[0] and "model_error" in failed[0]
    done = [line for line in result.stderr.splitlines() if "[subagent" in line]
    assert done and "· 1 step ·" in done[0], result.stderr  # one step, not "1 steps"
    (session,) = [p.stem for p in (tmp_path / "home" / "sessions").glob("*.jsonl")]
    home = {"MYCODE_HOME": str(tmp_path / "home")}
    shown = run_cli(["sessions", "show", session], ws, tmp_path / "home", home)
    assert shown.rc == 0 and "HTTP 400: invalid request" in shown.stdout, shown.stdout
    page = tmp_path / "s.html"
    run_cli(["sessions", "show", session, "--html", str(page)], ws, tmp_path / "home", home)
    assert "HTTP 400: invalid request" in page.read_text(encoding="utf-8")
