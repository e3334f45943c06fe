"""Claude Code's agent fields as its users write them, and what an untrusted workspace's
profiles may not do."""

from __future__ import annotations

from pathlib import Path

from mycode_subagents.profiles import parse_profile
from sa_helpers import answer, call, calls, delegate, requests_for, run, tool_names, workspace

from mycode_core.testing import FakeOpenAIServer


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_commas_inside_a_tool_specifier_do_not_split_it(tmp_path: Path) -> None:
    text = (
        "---\nname: lead\ndescription: Leads.\n"
        "tools: Read, Agent(kit:scan, kit:verify), Bash(git log:*, git diff:*), Grep\n---\nLead.\n"
    )
    profile = parse_profile(_write(tmp_path / "lead.md", text))
    assert profile.tool_names() == ["read_file", "delegate_task", "run_command", "grep"]


def test_disallowed_tools_are_taken_away_from_the_child(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    _write(
        ws / ".claude" / "agents" / "careful.md",
        "---\nname: careful\ndescription: Careful.\ndisallowedTools: Bash, Write, Edit\n---\nGo.\n",
    )
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: look", "careful")), answer("ok")]) as srv:
        srv.route("CHILD:", answer("looked"))
        result = run(srv, ws)
    assert result.rc == 0, result.stderr
    (child_request,) = requests_for(srv, "CHILD:")
    offered = tool_names(child_request)
    assert "read_file" in offered and "grep" in offered
    assert not {"run_command", "write_file", "edit_file"} & set(offered)


def test_an_untrusted_workspace_may_not_pick_the_childs_model(tmp_path: Path) -> None:
    ws = workspace(
        tmp_path, {".mycode/config.toml": '[subagents]\nmodel_aliases = {haiku = "x"}\n'}
    )
    _write(
        ws / ".claude" / "agents" / "picky.md",
        "---\nname: picky\ndescription: Picky.\ntools: Read\nmodel: project-model\n---\nGo.\n",
    )
    _write(
        ws / ".claude" / "agents" / "small.md",
        "---\nname: small\ndescription: Small.\ntools: Read\nmodel: haiku\n---\nGo.\n",
    )
    script = [
        calls(delegate("d1", "CHILD1: go", "picky"), delegate("d2", "CHILD2: go", "small")),
        answer("ok"),
    ]
    for trust, picked, aliased in (
        ((), "fake-model", "fake-model"),
        (
            ("--trust",),
            "project-model",
            "x",
        ),
    ):
        with FakeOpenAIServer(list(script)) as srv:
            srv.route("CHILD1:", answer("done"))
            srv.route("CHILD2:", answer("done"))
            result = run(srv, ws, "PARENT: go", *trust)
        assert result.rc == 0, result.stderr
        assert requests_for(srv, "CHILD1:")[0].body["model"] == picked
        assert requests_for(srv, "CHILD2:")[0].body["model"] == aliased
        notices = [e["message"] for e in result.events if e["type"] == "notice"]
        ignored = [n for n in notices if "model: project-model" in n or "model_aliases" in n]
        assert len(ignored) == (0 if trust else 2), notices


def test_plan_mode_lets_children_run_but_they_stay_read_only(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    script = [
        calls(delegate("d1", "CHILD1: look", "explore")),
        calls(delegate("d2", "CHILD2: write", "general")),
        answer("planned"),
    ]
    with FakeOpenAIServer(script) as srv:
        srv.route("CHILD1:", calls(call("read_file", "r1", path="a.py")), answer("x is 1"))
        srv.route(
            "CHILD2:", calls(call("write_file", "w1", path="b.py", content="y\n")), answer("no")
        )
        result = run(srv, ws, "PARENT: plan", "--permission-mode", "plan")
    assert result.rc == 0, result.stderr
    done = {e["id"]: e for e in result.events if e["type"] == "tool_result"}
    assert not done["d1"]["is_error"] and "x is 1" in done["d1"]["content"]
    assert not done["r1"]["is_error"]
    assert done["w1"]["is_error"] and "plan mode" in done["w1"]["content"]
    assert not (ws / "b.py").exists()


def test_an_untrusted_workspace_may_not_raise_the_subagent_limits(tmp_path: Path) -> None:
    """SPEC §8: the project's own config may only make things stricter — deeper nesting, more
    steps or tokens per child and more children at once are the user's to allow."""
    config = "[subagents]\nmax_depth = 2\nmax_steps = 500\nmax_parallel = 2\n"
    ws = workspace(tmp_path, {".mycode/config.toml": config})
    for trust, nested in (((), False), (("--trust",), True)):
        with FakeOpenAIServer([calls(delegate("d1", "CHILD: go", "general")), answer("ok")]) as srv:
            srv.route("CHILD:", answer("done"))
            result = run(srv, ws, "PARENT: go", *trust)
        assert result.rc == 0, result.stderr
        (child_request,) = requests_for(srv, "CHILD:")
        assert ("delegate_task" in tool_names(child_request)) is nested
        notices = [e["message"] for e in result.events if e["type"] == "notice"]
        ignored = [n for n in notices if "[subagents]" in n and "untrusted" in n]
        assert len(ignored) == (0 if trust else 2), notices  # one per setting
        if not trust:
            assert "max_steps = 500" in ignored[0] and "max_depth = 2" in ignored[1]
            assert "max_parallel" not in " ".join(ignored)  # lowering it is stricter: kept


def test_no_token_limit_counts_as_raising_it_and_lowering_is_kept(tmp_path: Path) -> None:
    from mycode_subagents.settings import load

    from mycode_core.config import load_settings

    config = "[subagents]\nmax_tokens = 0\nmax_steps = 5\n"  # 0: no budget of its own
    ws = workspace(tmp_path, {".mycode/config.toml": config})
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text("[subagents]\nmax_tokens = 1000\n")
    loaded, notices = load(load_settings(ws, tmp_path / "home"))
    assert (loaded.max_tokens, loaded.max_steps) == (1000, 5)
    assert len(notices) == 1 and "max_tokens = 0" in notices[0]


def test_max_turns_caps_the_childs_steps(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    _write(
        ws / ".claude" / "agents" / "brief.md",
        "---\nname: brief\ndescription: Brief.\ntools: Read\nmaxTurns: 2\n---\nGo.\n",
    )
    reads = [calls(call("read_file", f"r{n}", path="a.py")) for n in range(6)]
    with FakeOpenAIServer([calls(delegate("d1", "CHILD: look", "brief")), answer("ok")]) as srv:
        srv.route("CHILD:", *reads)
        result = run(srv, ws)
    assert result.rc == 0, result.stderr
    steps = [r for r in requests_for(srv, "CHILD:") if r.body.get("tools")]
    assert len(steps) == 2  # then one request without tools: its step-limit checkpoint
    (delegated,) = [e for e in result.events if e["type"] == "tool_result" and e["id"] == "d1"]
    assert "max_steps" in delegated["content"]


def test_max_turns_must_be_a_number_of_steps(tmp_path: Path) -> None:
    import pytest
    from mycode_subagents.profiles import ProfileError

    path = _write(
        tmp_path / "odd.md", "---\nname: odd\ndescription: Odd.\nmaxTurns: lots\n---\nGo.\n"
    )
    with pytest.raises(ProfileError, match="maxTurns"):
        parse_profile(path)
