"""Configuration checks through the real CLI: one line naming file, key and what is expected,
exit 2, never a traceback; unknown keys are a warning with a did-you-mean."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from mycode_core import hookimpl
from mycode_core.config import ConfigError, load_settings
from mycode_core.config_check import settings_tables
from mycode_core.plugins import get_plugin_manager
from mycode_core.testing import run_cli, write_script


def _run(workspace: Path, home: Path, config: str, *extra: str, env: dict | None = None):
    (workspace / ".mycode").mkdir(exist_ok=True)
    (workspace / ".mycode" / "config.toml").write_text(config, encoding="utf-8")
    model = write_script(workspace.parent / "turns.json", [{"content": "fine"}])
    merged = {"MYCODE_LOAD_PLUGINS": ""}
    merged.update(env or {})
    return run_cli(["-p", "task", "--model", model, *extra], workspace, home, merged)


@pytest.mark.parametrize(
    ("config", "key", "expected"),
    [
        ("permissions = 3", "permissions", "Input should be a table (got 3)"),
        ("[permissions]\ndeny = 5", "permissions.deny", "valid list"),
        ('[validation_commands]\ntest = ["(unclosed"]', "validation_commands", "regular expr"),
        ("max_steps = -1", "max_steps", "greater than or equal to 1"),
        ('max_steps = "many"', "max_steps", "valid integer"),
        ("context_window = 10", "context_window", "greater than or equal to 1024"),
        ('permission_mode = "yolo"', "permission_mode", "'default'"),
        ("max_parallel_tools = 0", "max_parallel_tools", "greater than or equal to 1"),
        ("max_steps = ", "", "cannot read this config file"),
        ("[models]\nm = 5", "models.m", "Input should be a table (got 5)"),  # no class names
        ("context = 5", "context", "Input should be a table (got 5)"),
        ("models = []", "models", "Input should be a table (got [])"),
        ('[models.m]\nrequest = "hot"', "models.m.request", "a table (got 'hot')"),
    ],
)
def test_a_bad_value_is_one_line_naming_file_and_key(
    workspace: Path, home: Path, config: str, key: str, expected: str
) -> None:
    run = _run(workspace, home, config)
    assert run.rc == 2, run.stderr
    assert "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    path = str(workspace / ".mycode" / "config.toml")
    assert lines[0].startswith(f"mycode: error: {path}: {key}"), lines[0]
    assert expected in lines[0]


@pytest.mark.parametrize("layer", ["project", "local", "user"])
def test_a_config_file_that_is_not_utf8_is_one_line_naming_it(
    workspace: Path, home: Path, layer: str
) -> None:
    """Every layer as the user layer always was: exit 2 naming the file (an untrusted project's
    bad file is no exception, as its bad TOML is not), never read with the bytes replaced."""
    path = {
        "project": workspace / ".mycode" / "config.toml",
        "local": workspace / ".mycode" / "config.local.toml",
        "user": home / "config.toml",
    }[layer]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"max_steps = 4 # caf\xe9\n")
    model = write_script(workspace.parent / "turns.json", [{"content": "fine"}])
    run = run_cli(["-p", "task", "--model", model], workspace, home, {"MYCODE_LOAD_PLUGINS": ""})
    assert run.rc == 2 and "Traceback" not in run.stderr, run.stderr
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith(f"mycode: error: {path}: cannot read this config file"), line
    assert "utf-8" in line


def test_the_stagnation_table_is_checked_while_its_plugin_is_loaded(
    workspace: Path, home: Path
) -> None:
    pytest.importorskip("mycode_stagnation")
    config = "[stagnation]\nrepeat_threshold = 0"
    run = _run(workspace, home, config, env={"MYCODE_LOAD_PLUGINS": "stagnation"})
    assert run.rc == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1, run.stderr
    path = str(workspace / ".mycode" / "config.toml")
    assert lines[0].startswith(f"mycode: error: {path}: stagnation.repeat_threshold"), lines[0]
    assert "greater" in lines[0]
    assert _run(workspace, home, config).rc == 0  # not loaded: not checked, nor "unknown"


def test_a_plugin_table_is_checked_against_the_model_it_registered(
    workspace: Path, home: Path
) -> None:
    pytest.importorskip("mycode_builtin_tools")
    run = _run(
        workspace, home, '[builtin_tools]\ncommand_timeout = "x"', env={"MYCODE_LOAD_PLUGINS": ""}
    )
    assert run.rc == 0  # builtin_tools not loaded: its table is not checked, nor "unknown"
    run = _run(
        workspace,
        home,
        '[builtin_tools]\ncommand_timeout = "x"',
        env={"MYCODE_LOAD_PLUGINS": "builtin_tools"},
    )
    assert run.rc == 2
    assert "builtin_tools.command_timeout: Input should be a valid number" in run.stderr
    assert "Traceback" not in run.stderr


BAD_PLUGIN_VALUES = {
    "subagents": ('max_steps = "x"', "max_steps: Input should be"),
    "memory": ("budget_tokens = -5", "budget_tokens: Input should be"),
    "claude_compat": ('user_claude_settings = "maybe"', "user_claude_settings: Input should be a"),
}


@pytest.mark.parametrize("plugin", sorted(BAD_PLUGIN_VALUES))
def test_every_plugin_table_is_checked(workspace: Path, home: Path, plugin: str) -> None:
    """A bad value in the table of any plugin of this repository is the one-line error of a
    bad core value (it was read as the default, or ignored, without a word); a misspelt key
    gets its did-you-mean."""
    pytest.importorskip(f"mycode_{plugin}")
    line, expected = BAD_PLUGIN_VALUES[plugin]
    config = f"[{plugin}]\n{line}"
    run = _run(workspace, home, config, env={"MYCODE_LOAD_PLUGINS": plugin})
    assert run.rc == 2 and "Traceback" not in run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{plugin}.{expected}" in lines[0], run.stderr
    typo = f"[{plugin}]\nmax_step = 3\nbudget_token = 3\nuser_claude_setting = true"
    run = _run(workspace, home, typo, env={"MYCODE_LOAD_PLUGINS": plugin})
    assert run.rc == 0 and f"unknown setting [{plugin}]" in run.stderr, run.stderr
    assert "did you mean" in run.stderr


def test_unknown_keys_and_tables_warn_with_a_did_you_mean(workspace: Path, home: Path) -> None:
    config = 'modle = "x"\nmax_step = 3\n[permisions]\nallow = []\n[stagnation]\nwindw = 3\n'
    pytest.importorskip("mycode_stagnation")
    env = {"MYCODE_LOAD_PLUGINS": "stagnation"}
    run = _run(workspace, home, config, "--output-format", "stream-json", env=env)
    assert run.rc == 0, run.stderr
    notices = [e["message"] for e in run.events if e["type"] == "notice"]
    assert any("'modle' (did you mean 'model'?)" in n for n in notices), notices
    assert any("'max_step' (did you mean 'max_steps'?)" in n for n in notices)
    assert any("'permisions' (did you mean 'permissions'?)" in n for n in notices)
    assert any("[stagnation] windw (did you mean 'window'?)" in n for n in notices)
    assert all(str(workspace / ".mycode" / "config.toml") in n for n in notices)
    assert run.events[0]["type"] == "system"


def test_an_environment_variable_is_named(workspace: Path, home: Path) -> None:
    run = _run(workspace, home, "", env={"MYCODE_MAX_STEPS": "lots"})
    assert run.rc == 2
    assert run.stderr.startswith("mycode: error: environment variable MYCODE_MAX_STEPS: max_steps")


@pytest.mark.parametrize("kind", ["file", "proc", "read-only"])
def test_an_unusable_mycode_home_is_one_line_naming_it(
    workspace: Path, tmp_path: Path, kind: str
) -> None:
    if kind == "file":
        bad = tmp_path / "a-file"
        bad.write_text("x")
    elif kind == "proc":
        bad = Path("/proc/mycode-home")
    else:
        if os.geteuid() == 0:
            pytest.skip("root can write a read-only folder")
        bad = tmp_path / "ro"
        bad.mkdir()
        bad.chmod(0o555)
    model = write_script(tmp_path / "turns.json", [{"content": "fine"}])
    run = run_cli(
        ["-p", "task", "--model", model],
        workspace,
        tmp_path / "unused",
        {"MYCODE_HOME": str(bad), "MYCODE_LOAD_PLUGINS": ""},
    )
    assert run.rc == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [run.stderr.strip()]
    assert f"MYCODE_HOME {bad}" in run.stderr


class _Table(BaseModel):
    level: int = Field(default=1, ge=1, le=3)


class _TablePlugin:
    @hookimpl
    def register_settings(self, register):  # type: ignore[no-untyped-def]
        register("fancy", _Table)


def test_register_settings_hook_validates_and_warns(tmp_path: Path) -> None:
    pm = get_plugin_manager(extra_plugins=[_TablePlugin()], load_entry_points=False)
    tables = settings_tables(pm)
    assert tables == {"fancy": _Table}
    workspace = tmp_path / "ws"
    (workspace / ".mycode").mkdir(parents=True)
    config = workspace / ".mycode" / "config.toml"
    config.write_text("[fancy]\nlevel = 2\nlevle = 3\n")
    settings = load_settings(workspace, tmp_path / "home", tables=tables)
    assert settings.section("fancy")["level"] == 2
    assert settings.notices == [
        f"{config}: unknown setting [fancy] levle (did you mean 'level'?); it is ignored"
    ]
    config.write_text("[fancy]\nlevel = 9\n")
    with pytest.raises(ConfigError, match=r"fancy\.level: Input should be less than or equal"):
        load_settings(workspace, tmp_path / "home", tables=tables)


def test_user_section_leaves_the_workspaces_own_layers_out(tmp_path: Path) -> None:
    """A plugin's table from the user's own layers only (``Settings.user_section``): what a
    plugin reads where an untrusted workspace may not choose."""
    from mycode_core.config import load_settings

    home, workspace = tmp_path / "home", tmp_path / "ws"
    (workspace / ".mycode").mkdir(parents=True)
    home.mkdir()
    (home / "config.toml").write_text('[kit]\nlimit = 3\n[kit.names]\na = "x"\n', "utf-8")
    (workspace / ".mycode" / "config.toml").write_text(
        '[kit]\nlimit = 99\nextra = true\n[kit.names]\nb = "y"\n', "utf-8"
    )
    settings = load_settings(workspace, home, {"trust_workspace": True})
    assert settings.section("kit") == {"limit": 99, "extra": True, "names": {"a": "x", "b": "y"}}
    assert settings.user_section("kit") == {"limit": 3, "names": {"a": "x"}}
    assert settings.user_section("absent") == {}
