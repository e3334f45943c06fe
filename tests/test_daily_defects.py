"""Issue 20 item 7: the smaller defects a new user met, each with its bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mycode_core.config import ConfigError, load_settings
from mycode_core.testing import CliResult, FakeOpenAIServer, run_cli, turn

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "url", ["not a url", "ftp://example.com/v1", "http://", "http://localhost:abc/v1", "localhost"]
)
def test_an_invalid_base_url_is_a_config_error_before_any_request(tmp_path: Path, url: str) -> None:
    with FakeOpenAIServer() as server:
        done = run_cli(["-p", "hi", "--model", "m", "--base-url", url], tmp_path, tmp_path / "h")
        assert done.rc == 2, done.stderr
        assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr
        assert "base_url" in done.stderr and "is not a URL" in done.stderr
        assert server.requests == []


def test_an_invalid_base_url_in_a_file_or_the_environment_names_where(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('base_url = "not a url"\n')
    with pytest.raises(ConfigError, match=r"config\.toml: base_url: 'not a url' is not a URL"):
        load_settings(tmp_path, home)
    (home / "config.toml").write_text('base_url = "http://127.0.0.1:11434/v1"\n')
    assert load_settings(tmp_path, home).base_url == "http://127.0.0.1:11434/v1"
    done = run_cli(["-p", "hi", "--model", "m"], tmp_path, home, {"OPENAI_BASE_URL": "nope"})
    assert done.rc == 2 and "environment variable OPENAI_BASE_URL: base_url" in done.stderr


@pytest.mark.parametrize("value", ["5", "1.5", "[1]"])
def test_validation_messages_name_the_users_key(tmp_path: Path, value: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(f"sandbox = {value}\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, home)
    message = str(caught.value)
    assert ": sandbox: " in message, message
    assert not re.search(r"sandbox\.(bool|str|dict)", message), message
    assert "a valid boolean" in message and "a valid string" in message, message


def _run_with_plugin_dir(tmp_path: Path, plugins: str) -> CliResult:
    """``mycode -p hi --plugin-dir EMPTY-FOLDER`` with ``MYCODE_LOAD_PLUGINS=plugins``."""
    folder = tmp_path / "cc-plugin"
    folder.mkdir()
    with FakeOpenAIServer([turn("fine")]) as server:
        return run_cli(
            [*server.cli_args("hi"), "--plugin-dir", str(folder)],
            tmp_path,
            tmp_path / "home",
            {"MYCODE_LOAD_PLUGINS": plugins},
        )


def test_plugin_dir_without_its_loader_says_so(tmp_path: Path) -> None:
    done = _run_with_plugin_dir(tmp_path, "builtin_tools")
    assert done.rc == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "--plugin-dir" in line]
    assert len(lines) == 1 and "ignored" in lines[0] and "claude_compat" in lines[0]


def test_plugin_dir_with_its_loader_is_quiet(tmp_path: Path) -> None:
    pytest.importorskip("mycode_claude_compat")
    done = _run_with_plugin_dir(tmp_path, "builtin_tools,claude_compat")
    assert "--plugin-dir is ignored" not in done.stderr


def test_the_daily_use_install_lines_install_every_plugin() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    plugins = sorted(
        p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file()
    )
    uv_line = next(line for line in readme.splitlines() if line.startswith("uv tool install ."))
    pipx_line = next(line for line in readme.splitlines() if line.startswith("pipx install ."))
    assert sorted(re.findall(r"--with \./plugins/(\w+)", uv_line)) == plugins
    assert sorted(re.findall(r"\./plugins/(\w+)", pipx_line)) == plugins


def test_questions_wrap_at_word_boundaries() -> None:
    from mycode_core.cli.prompts import wrapped

    text = (
        "Allow run_command: pytest -q? Commands are not sandboxed here: bubblewrap is not "
        "installed (e.g. apt-get install bubblewrap)"
    )
    out = wrapped(text, "? ", width=32)
    lines = out.splitlines()
    assert len(lines) > 2 and lines[0].startswith("? ")
    assert all(line.startswith("  ") for line in lines[1:])
    assert all(len(line) <= 31 for line in lines)
    assert " ".join(" ".join(lines).removeprefix("? ").split()) == " ".join(text.split())
    assert "sandboxed" in out.split()  # never "sandbo" / "xed"
    long_path = "/a" * 40
    assert long_path in wrapped(f"see {long_path} now", "  ", width=30).split()


def test_help_lines_fit_the_terminal_and_keep_their_alias_note() -> None:
    from mycode_core.cli.interactive import help_text

    long = "Toolkit for interacting with and testing local web applications using Playwright"
    plugin = {"webapp-testing": long + " (also /skill:webapp-testing)", "short": "Short."}
    out = help_text(plugin, width=100)
    lines = out.splitlines()
    assert all(len(line) <= 99 for line in lines), [x for x in lines if len(x) > 99]
    entry = next(line for line in lines if line.startswith("  /webapp-testing"))
    assert entry.endswith("… (also /skill:webapp-testing)")
    assert long[:40] in entry  # shortened, not dropped
    assert "  /short" in out and "Short." in out  # what fits stays as it is
    assert long in help_text(plugin, width=200)


def test_status_lists_the_tools_in_lines_that_fit(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from mycode_core.cli.status import status_lines
    from mycode_core.config import load_settings

    names = ["delegate_task", "edit_file", "glob", "grep", "load_skill", "read_file", "remember"]
    names += ["run_command", "todo_write", "write_file", "mcp__server_with_a_long_name__tool"]
    registry = SimpleNamespace(names=lambda: names)
    runner = SimpleNamespace(
        settings=load_settings(tmp_path, tmp_path / "home"),
        session_id="s1",
        workspace=tmp_path,
        usage={},
        context=SimpleNamespace(tools=registry),
    )
    lines = "\n".join(status_lines(runner, width=60)).splitlines()
    listed = lines[lines.index(next(x for x in lines if x.startswith("tools"))) :]
    assert len(listed) > 2 and all(len(line) <= 59 for line in listed), listed
    assert all(line.startswith(" " * 13) for line in listed[1:])
    assert " ".join(" ".join(listed).split()).endswith(", ".join(sorted(names)))


def test_the_trust_question_wraps_at_word_boundaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from mycode_core.cli import prompts, trust_prompt

    workspace = tmp_path / "ws"
    (workspace / ".mycode").mkdir(parents=True)
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(prompts, "read_line", lambda question: "n")
    assert trust_prompt.ask_once(workspace, tmp_path / "home") is None
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(len(line) <= 59 or "/" in line for line in lines), lines
    assert "project)." in " ".join(lines).split()  # never ")." alone on a line


def test_a_permission_question_on_a_narrow_terminal_keeps_words_whole(tmp_path: Path) -> None:
    pytest.importorskip("mycode_builtin_tools")
    import sys

    from mycode_core.testing import cli_env
    from mycode_core.testing.terminal import Terminal

    push = {"id": "c1", "name": "run_command", "arguments": {"command": "git push --force"}}
    with FakeOpenAIServer([turn(tool_calls=[push]), turn("not pushed")]) as server:
        env = cli_env(tmp_path / "home", {"MYCODE_LOAD_PLUGINS": "builtin_tools"})
        env.update(TERM="xterm", NO_COLOR="1", MYCODE_PLAIN_PROMPTS="1")
        argv = [sys.executable, "-m", "mycode_core", *server.cli_args(), "--cwd", str(tmp_path)]
        term = Terminal([*argv, "--trust"], env, tmp_path, columns=40)
        term.expect("/help for help")
        term.type("push it\r")
        term.expect("choose")
        question = term.plain[term.plain.index("? Allow") :]
        question = question[: question.index("1)")]
        lines = [line.rstrip() for line in question.splitlines() if line.strip()]
        assert all(len(line) <= 40 for line in lines), lines
        words = set(" ".join(lines).split())
        assert "git" in words and "push" in words
        term.type("2\r")
        term.expect("not pushed")
        term.type("/exit\r")
        assert term.wait() == 0


def test_sessions_list_and_show_use_the_users_words_and_say_what_was_cut(tmp_path: Path) -> None:
    from mycode_core.testing import write_script

    reminder = "Do this carefully.\n\n<system-reminder>a hook said hi</system-reminder>"
    answer = "\n".join(f"line {n}" for n in range(1, 31))
    model = write_script(tmp_path / "t.json", [{"content": answer}])
    home = tmp_path / "home"
    done = run_cli(["-p", reminder, "--model", model], tmp_path, home, {"MYCODE_LOAD_PLUGINS": ""})
    assert done.rc == 0, done.stderr
    listing = run_cli(["sessions", "--json"], tmp_path, home)
    assert '"Do this carefully."' in listing.stdout and "system-reminder" not in listing.stdout
    from mycode_core.sessions import SessionStore

    (info,) = SessionStore(home).list()
    assert info.first_prompt == "Do this carefully." and info.steps == 1
    shown = run_cli(["sessions", "show", info.id], tmp_path, home, {"COLUMNS": "120"})
    assert "line 12" in shown.stdout and "line 13" not in shown.stdout
    assert "… 18 more lines of 30" in shown.stdout
    assert "system-reminder" not in shown.stdout
