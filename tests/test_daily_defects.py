"""Issue 20 item 7: the smaller defects a new user met, each with its bad input."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from mycode_core.config import ConfigError, load_settings
from mycode_core.testing import FakeOpenAIServer, run_cli, turn

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "url", ["not a url", "ftp://example.com/v1", "http://", "http://localhost:abc/v1", "localhost"]
)
def test_an_invalid_base_url_is_a_config_error_before_any_request(
    tmp_path: Path, url: str
) -> None:
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


def test_plugin_dir_without_its_loader_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "cc-plugin"
    folder.mkdir()
    with FakeOpenAIServer([turn("fine")]) as server:
        done = run_cli(
            [*server.cli_args("hi"), "--plugin-dir", str(folder)],
            tmp_path,
            tmp_path / "home",
            {"MYCODE_LOAD_PLUGINS": "builtin_tools"},
        )
    assert done.rc == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "--plugin-dir" in line]
    assert len(lines) == 1 and "ignored" in lines[0] and "claude_compat" in lines[0]


def test_plugin_dir_with_its_loader_is_quiet(tmp_path: Path) -> None:
    pytest.importorskip("mycode_claude_compat")
    folder = tmp_path / "cc-plugin"
    folder.mkdir()
    with FakeOpenAIServer([turn("fine")]) as server:
        done = run_cli(
            [*server.cli_args("hi"), "--plugin-dir", str(folder)],
            tmp_path,
            tmp_path / "home",
            {"MYCODE_LOAD_PLUGINS": "builtin_tools,claude_compat"},
        )
    assert "--plugin-dir is ignored" not in done.stderr


def test_the_daily_use_install_lines_install_every_plugin() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    plugins = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())
    uv_line = next(line for line in readme.splitlines() if line.startswith("uv tool install ."))
    pipx_line = next(line for line in readme.splitlines() if line.startswith("pipx install ."))
    assert sorted(re.findall(r"--with \./plugins/(\w+)", uv_line)) == plugins
    assert sorted(re.findall(r"\./plugins/(\w+)", pipx_line)) == plugins
