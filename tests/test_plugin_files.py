"""Plugin files (SPEC §7): ``$MYCODE_HOME/plugins/*.py`` and trusted ``.mycode/plugins/*.py``
load as plugins with no packaging; broken, shadowing, untrusted and deselected files don't."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import write_script

# Writes a marker when imported, so a test can tell whether the file was imported at all.
WORDY = """
import os
from pathlib import Path

from mycode_core import hookimpl, tool

Path(os.environ["MARKER_DIR"], "{name}").write_text("imported")


@tool(read_only=True)
def {name}_shout(text: str) -> str:
    \"\"\"Shout the text back.\"\"\"
    return text.upper() + "!"


@hookimpl
def register_tools(register):
    register({name}_shout)
"""

COMMAND = """
import click

from mycode_core import hookimpl


@hookimpl
def register_commands(cli):
    @cli.command(name="filecmd")
    def filecmd():
        \"\"\"A command from a plugin file.\"\"\"
        click.echo("filecmd ran")
"""

SYNTAX_ERROR = "from mycode_core import hookimpl\n\ndef broken(:\n    pass\n"
RAISES = 'raise RuntimeError("exploded at import")\n'


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str | None]:
    """Plugin selection for these tests and the folder of import markers."""
    markers = tmp_path / "markers"
    markers.mkdir()
    return {"MYCODE_LOAD_PLUGINS": None, "MARKER_DIR": str(markers)}


@pytest.fixture
def mycode(cli: Any, env: dict[str, str | None]) -> Any:
    """``cli`` with ``env`` (every plugin selected unless a test narrows it)."""

    def go(args: list[str], **more: str | None) -> Any:
        return cli(args, env={**env, "MYCODE_LOAD_PLUGINS": "coretools", **more})

    return go


def _home_file(home: Path, name: str, text: str) -> Path:
    folder = home / "plugins"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text(text, encoding="utf-8")
    return path


def _select(*names: str) -> str:
    return ",".join(("coretools", *names))


def _rows(stdout: str) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in json.loads(stdout)}


def _shout(mycode: Any, tmp_path: Path, **env: str) -> Any:
    """``mycode -p`` (stream-json) with a script that calls ``wordy_shout`` once; the script
    is ``tmp_path/s.json``."""
    model = write_script(
        tmp_path / "s.json",
        [{"tool_calls": [{"name": "wordy_shout", "arguments": {"text": "go"}}]}, {"content": "ok"}],
    )
    return mycode(["-p", "shout go", "--model", model, "--output-format", "stream-json"], **env)


def test_a_home_plugin_file_loads_and_its_tool_runs(
    mycode: Any, home: Path, tmp_path: Path, env: dict[str, str | None]
) -> None:
    path = _home_file(home, "wordy", WORDY.format(name="wordy"))
    (home / "plugins" / "folderplugin").mkdir()  # a folder plugin (SPEC §11) is not a file
    (home / "plugins" / "odd.py").mkdir()  # nor is a folder named like one
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=_select("wordy", "folderplugin", "odd"))
    assert listing.rc == 0, listing.stderr
    rows = _rows(listing.stdout)
    assert rows["wordy"]["source"] == "file"
    assert rows["wordy"]["path"] == str(path)
    assert "register_tools" in rows["wordy"]["hooks"]
    assert "folderplugin" not in rows and "odd" not in rows
    assert [line.split(" is named ")[-1] for line in listing.stderr.splitlines()] == [
        "'folderplugin'",  # no plugin has these names: each named once, nothing else said
        "'odd'",
    ]

    model = write_script(
        tmp_path / "s.json",
        [{"tool_calls": [{"name": "wordy_shout", "arguments": {"text": "hi"}}]}, {"content": "ok"}],
    )
    run = mycode(
        ["-p", "shout hi", "--model", model, "--output-format", "stream-json"],
        MYCODE_LOAD_PLUGINS=_select("wordy"),
    )
    assert run.rc == 0, run.stderr
    assert "wordy" in run.events[0]["plugins"]
    assert run.of_type("tool_result")[0]["content"] == "HI!"


def test_plugin_selection_applies_by_stem_before_import(
    mycode: Any, home: Path, env: dict[str, str | None]
) -> None:
    _home_file(home, "wordy", WORDY.format(name="wordy"))
    marker = Path(str(env["MARKER_DIR"])) / "wordy"
    listing = mycode(
        ["plugins"], MYCODE_LOAD_PLUGINS=_select("wordy"), MYCODE_DISABLE_PLUGINS="wordy"
    )
    assert listing.rc == 0 and "wordy" not in _rows(listing.stdout)
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS="coretools")
    assert listing.rc == 0 and "wordy" not in _rows(listing.stdout)
    assert not marker.exists()
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=_select("wordy"))
    assert "wordy" in _rows(listing.stdout) and marker.exists()


def test_broken_plugin_files_are_load_errors_and_the_run_goes_on(
    mycode: Any, home: Path, tmp_path: Path
) -> None:
    bad = _home_file(home, "badsyntax", SYNTAX_ERROR)
    _home_file(home, "exploding", RAISES)
    _home_file(home, "wordy", WORDY.format(name="wordy"))
    select = _select("badsyntax", "exploding", "wordy")
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=select)
    assert listing.rc == 0
    rows = _rows(listing.stdout)
    assert rows["wordy"]["source"] == "file"
    assert rows["badsyntax"]["loaded"] is False and rows["badsyntax"]["path"] == str(bad)
    assert rows["badsyntax"]["error_type"] == "SyntaxError"
    assert f"{bad}:3" in rows["badsyntax"]["error"]
    assert rows["exploding"]["loaded"] is False
    assert "exploded at import" in rows["exploding"]["error"]
    assert "Traceback" not in listing.stderr
    assert len([line for line in listing.stderr.splitlines() if "'badsyntax'" in line]) == 1
    assert len([line for line in listing.stderr.splitlines() if "'exploding'" in line]) == 1

    check = mycode(["plugins", "--check"], MYCODE_LOAD_PLUGINS=select)
    assert check.rc == 1
    checked = _rows(check.stdout)
    assert checked["badsyntax"]["loaded"] is False and checked["badsyntax"]["source"] == "file"
    assert checked["badsyntax"]["problems"][0]["error_type"] == "SyntaxError"
    assert checked["wordy"]["contributes"]["tools"] == ["wordy_shout"]

    run = _shout(mycode, tmp_path, MYCODE_LOAD_PLUGINS=select)
    model = f"scripted:{tmp_path / 's.json'}"
    assert run.rc == 0, run.stderr
    assert "Traceback" not in run.stderr
    assert {e["plugin"] for e in run.events[0]["plugin_errors"]} == {"badsyntax", "exploding"}
    failed = {n["plugin"]: n for n in run.of_type("notice") if n.get("hook") == "load"}
    assert set(failed) == {"badsyntax", "exploding"}  # SPEC §4: a notice names each failed plugin
    assert "exploded at import" in failed["exploding"]["message"]
    assert run.of_type("tool_result")[0]["content"] == "GO!"
    text = mycode(["-p", "hi", "--model", model], MYCODE_LOAD_PLUGINS=select)
    assert len([line for line in text.stderr.splitlines() if "'exploding'" in line]) == 1

    strict = mycode(
        ["-p", "hi", "--model", model], MYCODE_LOAD_PLUGINS=select, MYCODE_STRICT_PLUGINS="1"
    )
    assert strict.rc == 2 and "badsyntax" in strict.stderr and "Traceback" not in strict.stderr


@pytest.mark.parametrize(
    "body", ["raise SystemExit(4)\n", "raise KeyboardInterrupt\n"], ids=["exit", "interrupt"]
)
def test_a_plugin_raising_a_base_exception_at_import_is_a_load_error(
    mycode: Any, home: Path, tmp_path: Path, body: str
) -> None:
    from mycode_core.testing.cli import write_plugin_dist

    _home_file(home, "quitter", body)
    _home_file(home, "wordy", WORDY.format(name="wordy"))
    site = tmp_path / "site"
    write_plugin_dist(site, "epquitter", body)
    select = _select("quitter", "wordy", "epquitter")
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=select, PYTHONPATH=str(site))
    assert listing.rc == 0, listing.stderr
    rows = _rows(listing.stdout)
    assert rows["quitter"]["loaded"] is False and rows["epquitter"]["loaded"] is False
    assert rows["wordy"]["source"] == "file"
    assert "Traceback" not in listing.stderr and "Aborted" not in listing.stderr
    run = _shout(mycode, tmp_path, MYCODE_LOAD_PLUGINS=select, PYTHONPATH=str(site))
    assert run.rc == 0, run.stderr
    assert {e["plugin"] for e in run.events[0]["plugin_errors"]} == {"quitter", "epquitter"}
    assert run.of_type("tool_result")[0]["content"] == "GO!"


def _started(home: Path, workspace: Path, env: dict[str, str | None], **popen: Any) -> Any:
    """``mycode plugins`` started as :func:`start_cli` starts it (SIGINT as in a terminal,
    unless ``popen`` says otherwise); its exit code and stderr."""
    from mycode_core.testing.cli import start_cli

    process = start_cli(["plugins"], workspace, home, env, **popen)
    _out, err = process.communicate(timeout=60)
    return process.returncode, err


def test_a_real_ctrl_c_while_plugins_import_still_interrupts(
    home: Path, workspace: Path, env: dict[str, str | None]
) -> None:
    _home_file(
        home,
        "slowimport",
        "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n",
    )
    code, err = _started(home, workspace, {**env, "MYCODE_LOAD_PLUGINS": "slowimport"})
    assert code != 0 and "failed to load" not in err  # not taken for the plugin's


def test_a_plugins_own_ctrl_c_is_a_load_error_where_ctrl_c_is_ignored(
    home: Path, workspace: Path, env: dict[str, str | None]
) -> None:
    """Started with SIGINT ignored (a non-interactive shell's ``cmd &``), no Ctrl-C can reach
    mycode: a ``KeyboardInterrupt`` a plugin raises at import is the plugin's failure."""
    import signal

    _home_file(home, "quitter", "raise KeyboardInterrupt\n")

    def ignoring() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    code, err = _started(
        home, workspace, {**env, "MYCODE_LOAD_PLUGINS": "quitter"}, preexec_fn=ignoring
    )
    assert code == 0 and "interrupted" not in err, err


@pytest.mark.parametrize("name", ["__init__", "json.tool", "a.b"])
def test_a_file_whose_stem_is_no_module_name_is_not_loaded(
    mycode: Any, home: Path, env: dict[str, str | None], name: str
) -> None:
    _home_file(home, name, WORDY.format(name="wordy"))
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=_select(name))
    assert listing.rc == 0, listing.stderr
    assert name not in _rows(listing.stdout)
    assert not (Path(str(env["MARKER_DIR"])) / "wordy").exists()
    (line,) = [line for line in listing.stderr.splitlines() if f"{name}.py" in line]
    assert "not a module name" in line and "Traceback" not in listing.stderr


@pytest.mark.parametrize("name", ["json", "pluggy", "click"])
def test_a_file_shadowing_a_module_is_not_loaded(
    mycode: Any, home: Path, env: dict[str, str | None], name: str
) -> None:
    _home_file(home, name, WORDY.format(name=name))
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=_select(name))
    assert listing.rc == 0, listing.stderr
    assert name not in _rows(listing.stdout)
    assert not (Path(str(env["MARKER_DIR"])) / name).exists()
    lines = [line for line in listing.stderr.splitlines() if f"{name}.py" in line]
    assert len(lines) == 1 and "shadows" in lines[0], listing.stderr
    assert "Traceback" not in listing.stderr


def test_workspace_plugin_files_need_trust(
    mycode: Any, workspace: Path, env: dict[str, str | None], tmp_path: Path
) -> None:
    folder = workspace / ".mycode" / "plugins"
    folder.mkdir(parents=True)
    (folder / "local1.py").write_text(WORDY.format(name="local1"), encoding="utf-8")
    (folder / "local2.py").write_text(WORDY.format(name="local2"), encoding="utf-8")
    select = _select("local1", "local2")
    markers = Path(str(env["MARKER_DIR"]))
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=select)
    assert listing.rc == 0
    assert not {"local1", "local2"} & set(_rows(listing.stdout))
    assert not (markers / "local1").exists() and not (markers / "local2").exists()
    notices = [line for line in listing.stderr.splitlines() if "untrusted" in line]
    assert len(notices) == 1 and "local1.py" in notices[0] and "local2.py" in notices[0]

    model = write_script(
        tmp_path / "s.json",
        [{"tool_calls": [{"name": "local1_shout", "arguments": {"text": "x"}}]}, {"content": "ok"}],
    )
    args = ["-p", "use it", "--model", model, "--output-format", "stream-json"]
    untrusted = mycode(args, MYCODE_LOAD_PLUGINS=select)
    assert untrusted.rc == 0 and "local1_shout" not in untrusted.events[0]["tools"]
    assert not (markers / "local1").exists()
    skipped = [e for e in untrusted.of_type("notice") if e.get("source") == "plugin_files"]
    assert len(skipped) == 1 and "local1.py" in skipped[0]["message"]  # the stream has it too

    trusted = mycode([*args, "--trust"], MYCODE_LOAD_PLUGINS=select)
    assert trusted.rc == 0, trusted.stderr
    assert trusted.of_type("tool_result")[0]["content"] == "X!"

    assert mycode(["trust"], MYCODE_LOAD_PLUGINS=select).rc == 0
    listing = mycode(["plugins"], MYCODE_LOAD_PLUGINS=select)
    rows = _rows(listing.stdout)
    assert rows["local1"]["source"] == "file" and rows["local1"]["path"] == str(
        folder / "local1.py"
    )
    assert "untrusted" not in listing.stderr


def test_a_plugin_file_command_shows_in_help(mycode: Any, home: Path) -> None:
    before = mycode(["--help"], MYCODE_LOAD_PLUGINS=_select("cmdfile"))
    assert before.rc == 0 and "filecmd" not in before.stdout
    _home_file(home, "cmdfile", COMMAND)  # a new file invalidates the command cache
    after = mycode(["--help"], MYCODE_LOAD_PLUGINS=_select("cmdfile"))
    assert after.rc == 0 and "filecmd" in after.stdout, after.stdout
    ran = mycode(["filecmd"], MYCODE_LOAD_PLUGINS=_select("cmdfile"))
    assert ran.rc == 0 and "filecmd ran" in ran.stdout


def test_help_with_a_fresh_command_cache_imports_no_plugin_file(
    mycode: Any, home: Path, env: dict[str, str | None]
) -> None:
    _home_file(home, "wordy", WORDY.format(name="wordy"))
    marker = Path(str(env["MARKER_DIR"])) / "wordy"
    first = mycode(["--help"], MYCODE_LOAD_PLUGINS=_select("wordy"))
    assert first.rc == 0 and marker.exists()  # the cache was built: plugins were imported
    marker.unlink()
    again = mycode(["--help"], MYCODE_LOAD_PLUGINS=_select("wordy"))
    assert again.rc == 0 and not marker.exists()
