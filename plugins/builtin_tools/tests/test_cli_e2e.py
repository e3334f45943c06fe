"""End to end through ``mycode -p --model scripted:…``: real loop, real tools, real policy."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

MYCODE = shutil.which("mycode", path=str(Path(sys.executable).parent)) or shutil.which("mycode")
pytestmark = pytest.mark.skipif(MYCODE is None, reason="the mycode command is not installed")


def _run(tmp_path: Path, workspace: Path, turns: list[dict[str, Any]], *flags: str) -> list[dict]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(turns))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env["MYCODE_HOME"] = str(tmp_path / "home")
    proc = subprocess.run(
        [MYCODE, "-p", "task", "--model", f"scripted:{script}", "--output-format", "stream-json",
         "--cwd", str(workspace), *flags],
        capture_output=True, text=True, timeout=120, env=env, stdin=subprocess.DEVNULL,
        cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def _results(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] == "tool_result"]


def _call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_read_edit_run_in_default_mode(tmp_path: Path, workspace: Path) -> None:
    (workspace / "app.py").write_bytes(b"print('hello')\r\n")
    turns = [
        {"content": "read", "tool_calls": [_call("read_file", path="app.py")]},
        {"content": "edit", "tool_calls": [
            _call("edit_file", path="app.py", old_string="hello", new_string="world")]},
        {"content": "run", "tool_calls": [_call("run_command", command="python3 app.py")]},
        {"content": "done"},
    ]  # fmt: skip
    events = _run(tmp_path, workspace, turns)
    results = _results(events)
    assert [r["is_error"] for r in results] == [False, False, False]
    assert "world" in results[2]["content"]
    assert (workspace / "app.py").read_bytes() == b"print('world')\r\n"
    assert events[-1]["type"] == "result" and events[-1]["stop_reason"] == "completed"


def test_denials_name_rule_and_layer(tmp_path: Path, workspace: Path) -> None:
    turns = [
        {"content": "x", "tool_calls": [
            _call("run_command", command="rm -rf ~"),
            _call("run_command", command="pip install requests"),
            _call("write_file", path="../escape.txt", content="x"),
        ]},
        {"content": "done"},
    ]  # fmt: skip
    events = _run(tmp_path, workspace, turns)
    permissions = [e for e in events if e["type"] == "permission"]
    assert [p["decision"] for p in permissions] == ["deny", "deny", "deny"]
    assert permissions[0]["rule"] == "builtin:delete-outside-workspace"
    assert permissions[1]["rule"] == "builtin:package-install"
    assert all(p["layer"] == "default" for p in permissions)
    results = _results(events)
    assert all(r["is_error"] for r in results)
    assert "run_command(pip install:*)" in results[1]["content"]
    assert not (workspace.parent / "escape.txt").exists()


def test_plan_mode_blocks_edits(tmp_path: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    turns = [
        {"content": "x", "tool_calls": [_call("read_file", path="a.txt")]},
        {"content": "x", "tool_calls": [
            _call("edit_file", path="a.txt", old_string="a", new_string="b")]},
        {"content": "done"},
    ]  # fmt: skip
    events = _run(tmp_path, workspace, turns, "--permission-mode", "plan")
    results = _results(events)
    assert [r["is_error"] for r in results] == [False, True]
    assert "--permission-mode" in results[1]["content"]
    assert (workspace / "a.txt").read_text() == "a\n"


def test_project_rule_allows_what_default_asks(tmp_path: Path, workspace: Path) -> None:
    (workspace / ".mycode").mkdir()
    (workspace / ".mycode" / "config.toml").write_text(
        '[permissions]\nallow = ["run_command(curl --version:*)"]\n'
    )
    turns = [{"content": "x", "tool_calls": [_call("run_command", command="curl --version")]},
             {"content": "done"}]  # fmt: skip
    events = _run(tmp_path, workspace, turns, "--trust")
    permission = next(e for e in events if e["type"] == "permission")
    assert (permission["decision"], permission["layer"]) == ("allow", "project")
    # the same file in a workspace nobody trusted: the rule is ignored and one notice says so
    events = _run(tmp_path, workspace, turns)
    permission = next(e for e in events if e["type"] == "permission")
    assert permission["decision"] == "deny"
    notices = [e["message"] for e in events if e["type"] == "notice"]
    assert len([n for n in notices if "untrusted workspace" in n]) == 1
    assert "[permissions] allow (.mycode/config.toml)" in " ".join(notices)


@pytest.mark.parametrize(("model", "sees_it"), [("gpt-4o", True), ("m", False)])
def test_an_image_read_reaches_a_model_that_takes_images(
    tmp_path: Path, workspace: Path, model: str, sees_it: bool
) -> None:
    """A screenshot the model reads (megabytes, as real ones are) is sent as an image to a
    vision model, in the next request and whole; a text model gets a note instead."""
    from mycode_core.testing import FakeOpenAIServer, run_cli, turn

    shot = b"\x89PNG\r\n\x1a\n" + os.urandom(3 * 1024 * 1024)
    (workspace / "shot.png").write_bytes(shot)
    read = {"name": "read_file", "arguments": {"path": "shot.png"}, "id": "c1"}
    with FakeOpenAIServer([turn(tool_calls=[read]), turn("a chart")]) as server:
        done = run_cli(
            server.cli_args("look at shot.png", output_format="json", model=model),
            workspace,
            tmp_path / "home",
            {"MYCODE_LOAD_PLUGINS": "builtin_tools"},
        )
        second = server.chat_requests[1].messages
    assert done.rc == 0, done.stderr
    reply = next(m for m in second if m["role"] == "tool")
    assert "shot.png: image/png image, 3,145,736 bytes" in reply["content"]
    images = [m for m in second if m["role"] == "user" and isinstance(m["content"], list)]
    if sees_it:
        url = images[0]["content"][1]["image_url"]["url"]
        assert url == "data:image/png;base64," + base64.b64encode(shot).decode()
    else:
        assert not images and "not known to take images" in reply["content"]


def test_a_resumed_session_shows_the_model_the_images_it_saw(
    tmp_path: Path, workspace: Path
) -> None:
    """``--resume`` rebuilds the history the model saw, the image message after a tool's result
    included (a compaction's recorded view counts it), and the tool's line says the image is
    shown rather than that the model takes none."""
    from mycode_core.testing import FakeOpenAIServer, run_cli, turn

    shot = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    (workspace / "shot.png").write_bytes(shot)
    read = {"name": "read_file", "arguments": {"path": "shot.png"}, "id": "c1"}
    env = {"MYCODE_LOAD_PLUGINS": "builtin_tools"}
    with FakeOpenAIServer([turn(tool_calls=[read]), turn("a chart"), turn("still")]) as server:
        first = run_cli(server.cli_args("look at shot.png", output_format="json", model="gpt-4o"),
                        workspace, tmp_path / "home", env)  # fmt: skip
        assert first.rc == 0, first.stderr
        session = json.loads(first.stdout)["session_id"]
        again = run_cli([*server.cli_args("and now?", model="gpt-4o"), "--resume", session],
                        workspace, tmp_path / "home", env)  # fmt: skip
        assert again.rc == 0, again.stderr
        live, resumed = server.chat_requests[1].messages, server.chat_requests[2].messages
    assert resumed[: len(live)] == live
    reply = next(m for m in live if m["role"] == "tool")
    assert "shown in the next message" in reply["content"]


def test_writing_hook_settings_asks(tmp_path: Path, workspace: Path) -> None:
    """A hook in ``.claude/`` or ``.codex/`` runs outside the sandbox once the workspace is
    trusted: writing or editing there asks, as ``.mycode/`` does (in ``-p``: denied, saying how
    to allow it); ``bypass`` asks nothing."""
    (workspace / ".codex").mkdir()
    (workspace / ".codex" / "hooks.json").write_text('{"hooks": {}}')
    hook = '{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "id"}]}]}}'
    turns = [
        {"content": "x", "tool_calls": [
            _call("write_file", path=".claude/settings.local.json", content=hook)]},
        {"content": "x", "tool_calls": [_call("read_file", path=".codex/hooks.json")]},
        {"content": "x", "tool_calls": [_call(
            "edit_file", path=".codex/hooks.json", old_string="{}", new_string=hook[10:-1])]},
        {"content": "done"},
    ]  # fmt: skip
    events = _run(tmp_path, workspace, turns)
    permissions = [e for e in events if e["type"] == "permission"]
    assert [p["decision"] for p in permissions] == ["deny", "allow", "deny"]
    assert [p["rule"] for p in permissions[::2]] == ["builtin:protected-folder"] * 2
    results = _results(events)
    assert "edit_file(.claude/settings.local.json)" in results[0]["content"]
    assert not (workspace / ".claude").exists()
    assert (workspace / ".codex" / "hooks.json").read_text() == '{"hooks": {}}'
    events = _run(tmp_path, workspace, turns, "--permission-mode", "bypass")
    assert [r["is_error"] for r in _results(events)] == [False, False, False]
    assert "SessionStart" in (workspace / ".claude" / "settings.local.json").read_text()


def test_config_folders_a_command_creates_below_the_root_are_taken_back(
    tmp_path: Path, workspace: Path
) -> None:
    """A trusted folder trusts the folders below it, and mycode run in one reads its own
    ``.mycode/plugins``, ``.claude/`` and ``.codex/``: such a folder a sandboxed command creates
    at any depth is taken back as at the root (from a folder that was there, the files it
    created), and write_file asks there too."""
    pwned = tmp_path / "pwned"
    hook = {"hooks": {"SessionStart": [{"hooks": [{"command": f"touch {pwned}"}]}]}}
    evil = f"open({str(pwned)!r}, 'w')"  # a plugin file: imported, it leaves a mark
    (workspace / "plant.py").write_text(
        "import json, os\nos.makedirs('sub2/.mycode/plugins')\nos.makedirs('sub2/.claude')\n"
        f"open('sub2/.mycode/plugins/evil2.py', 'w').write({evil!r})\n"
        f"open('sub2/.claude/settings.json', 'w').write(json.dumps({hook!r}))\n"
        "open('sub3/.claude/settings.json', 'w').write('{}')\n"
    )
    (workspace / "sub3" / ".claude" / "commands").mkdir(parents=True)
    (workspace / "sub3" / ".claude" / "commands" / "x.md").write_text("x")
    turns = [
        {"content": "x", "tool_calls": [
            _call("run_command", command="python3 plant.py && echo made")]},
        {"content": "x", "tool_calls": [
            _call("write_file", path="sub/.mycode/plugins/evil.py", content="x = 1")]},
        {"content": "done"},
    ]  # fmt: skip
    events = _run(tmp_path, workspace, turns)
    results = _results(events)
    assert "made" in results[0]["content"], results[0]
    denied = [e for e in events if e["type"] == "permission" and e["decision"] == "deny"]
    assert [p["rule"] for p in denied] == ["builtin:protected-folder"]
    assert sorted(p.name for p in workspace.iterdir()) == ["plant.py", "sub2", "sub3"]
    assert list((workspace / "sub2").iterdir()) == []
    assert [p.name for p in (workspace / "sub3" / ".claude").iterdir()] == ["commands"]
    kept = tmp_path / "home" / "artifacts"
    assert len(list(kept.glob("*/taken-back/*/sub2/.mycode/plugins/evil2.py"))) == 1
    assert len(list(kept.glob("*/taken-back/*/sub3/.claude/settings.json"))) == 1
    # the user trusts the repository and runs mycode in sub2: nothing planted runs
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "MYCODE_"))}
    env["MYCODE_HOME"] = str(tmp_path / "home")
    trusted = subprocess.run([MYCODE, "trust", str(workspace)], env=env, capture_output=True)
    assert trusted.returncode == 0, trusted.stderr
    (workspace / "sub2" / ".claude").mkdir()  # the control: a hook put back runs
    (workspace / "sub2" / ".claude" / "settings.json").write_text(json.dumps(hook))
    _run(tmp_path, workspace / "sub2", [{"content": "done"}])
    assert pwned.exists()
    pwned.unlink()
    (workspace / "sub2" / ".claude" / "settings.json").unlink()
    _run(tmp_path, workspace / "sub2", [{"content": "done"}])
    assert not pwned.exists()
