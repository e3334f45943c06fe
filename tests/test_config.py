"""Layered settings (SPEC §5) and configuration errors (exit code 2)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from mycode_core.config import ConfigError, load_settings
from mycode_core.testing import run_cli, write_script

ENV_VARS = (
    "MYCODE_MODEL",
    "MYCODE_BASE_URL",
    "OPENAI_BASE_URL",
    "MYCODE_API_KEY",
    "OPENAI_API_KEY",
    "MYCODE_MAX_STEPS",
    "MYCODE_MAX_TOKENS",
    "MYCODE_PERMISSION_MODE",
)


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_each_layer_overrides_the_one_below(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    assert load_settings(ws, home).max_steps == 50
    _write(home / "config.toml", "max_steps = 10\nmodel = 'user-model'\n")
    assert load_settings(ws, home).max_steps == 10
    _write(ws / ".mycode" / "config.toml", "max_steps = 20\n")
    assert load_settings(ws, home).max_steps == 20
    _write(ws / ".mycode" / "config.local.toml", "max_steps = 30\n")
    assert load_settings(ws, home).max_steps == 30
    monkeypatch.setenv("MYCODE_MAX_STEPS", "40")
    assert load_settings(ws, home).max_steps == 40
    settings = load_settings(ws, home, {"max_steps": 45, "model": None})
    assert settings.max_steps == 45
    assert settings.model == "user-model"  # a flag left unset does not override
    assert [name for name, _ in settings.layers] == [
        "default",
        "user",
        "project",
        "local",
        "env",
        "cli",
    ]
    assert dict(settings.layers)["project"] == {"max_steps": 20}


def test_tables_merge_and_permission_rules_accumulate(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    _write(
        home / "config.toml",
        "[permissions]\nallow = ['run_command(pytest:*)']\n"
        "[completion_gate]\npolicy = 'strict'\nmax_blocks = 5\n"
        "[myplugin]\ncolour = 'blue'\nsize = 1\n",
    )
    _write(
        ws / ".mycode" / "config.toml",
        "[permissions]\ndeny = ['run_command(rm:*)']\n"
        "[completion_gate]\nmax_blocks = 2\n[myplugin]\nsize = 2\n",
    )
    settings = load_settings(ws, home)
    assert settings.permissions.allow == ["run_command(pytest:*)"]
    assert settings.permissions.deny == ["run_command(rm:*)"]
    assert (settings.completion_gate.policy, settings.completion_gate.max_blocks) == ("strict", 2)
    assert settings.section("myplugin") == {"colour": "blue", "size": 2}
    assert settings.section("absent") == {}


def test_mycode_variables_win_over_openai_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://openai.invalid/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "openai-key")
    settings = load_settings(tmp_path, tmp_path / "home")
    assert (settings.base_url, settings.api_key) == ("http://openai.invalid/v1", "openai-key")
    monkeypatch.setenv("MYCODE_BASE_URL", "http://mine.invalid/v1")
    monkeypatch.setenv("MYCODE_MODEL", "my-model")
    settings = load_settings(tmp_path, tmp_path / "home")
    assert (settings.base_url, settings.model) == ("http://mine.invalid/v1", "my-model")


def test_a_broken_toml_file_is_named(tmp_path: Path) -> None:
    _write(tmp_path / ".mycode" / "config.toml", "max_steps = = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, tmp_path / "home")
    assert "config.toml" in str(caught.value)


def test_a_bad_value_names_the_setting(tmp_path: Path) -> None:
    _write(tmp_path / "home" / "config.toml", "max_steps = 'many'\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, tmp_path / "home")
    assert "max_steps" in str(caught.value)


def test_cli_bad_config_exits_2_with_a_message(cli, workspace: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"content": "hi"}])
    _write(workspace / ".mycode" / "config.toml", "permission_mode = 'yolo'\n")
    run = cli(["-p", "hi", "--model", model, "--output-format", "stream-json"])
    assert run.rc == 2
    assert "permission_mode" in run.stderr
    assert "Traceback" not in run.stderr


def test_cli_config_from_home_is_used(cli, home: Path, tmp_path: Path) -> None:
    model = write_script(
        tmp_path / "s.json",
        [{"tool_calls": [{"name": "echo", "arguments": {"text": str(i)}}]} for i in range(5)],
    )
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("max_steps = 2\n")
    run = cli(["-p", "hi", "--model", model, "--output-format", "stream-json"])
    assert run.rc == 1 and run.result is not None
    assert (run.result["stop_reason"], run.result["steps"]) == ("max_steps", 2)
    # a flag wins over the file
    run = cli(["-p", "hi", "--model", model, "--output-format", "stream-json", "--max-steps", "7"])
    assert run.rc == 0 and run.result is not None and run.result["steps"] == 6


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["-p", "hi", "--output-format", "stream-json"], "model"),
        (["-p", "--model", "scripted:/nonexistent/s.json"], "prompt"),
        (["-p", "hi", "--model", "scripted:/nonexistent/s.json"], "/nonexistent/s.json"),
        (["-p", "hi", "--model", "x", "--cwd", "/nonexistent/dir"], "/nonexistent/dir"),
        (["-p", "hi", "--max-steps", "0", "--model", "x"], "max-steps"),
        (["-p", "hi", "--output-format", "yaml"], "output-format"),
    ],
)
def test_usage_errors_exit_2_naming_what_to_fix(cli, args: list[str], needle: str) -> None:
    run = cli(args)
    assert run.rc == 2, run.stderr
    assert needle in run.stderr
    assert "Traceback" not in run.stderr


def test_a_new_home_is_private_and_an_existing_one_keeps_its_mode(tmp_path: Path) -> None:
    """Transcripts, memory notes and trust records live under MYCODE_HOME: a home mycode
    creates is 0700 whatever the umask; a folder the user made keeps the mode they gave it."""
    script = write_script(tmp_path / "turns.json", [{"content": "done"}])
    created, existing = tmp_path / "new" / "home", tmp_path / "mine"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    for home in (created, existing):  # run_cli makes its own home: MYCODE_HOME points here
        env = {"MYCODE_HOME": str(home)}
        result = run_cli(["-p", "hi", "--model", script], tmp_path, tmp_path / "h", env)
        assert result.rc == 0, result.stderr
    assert stat.S_IMODE(created.stat().st_mode) == 0o700
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755
