"""The console script leaves with ``os._exit`` once the run is over (issue 24): right code,
output flushed, transcript complete, ``atexit`` handlers run; ``main`` in-process unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from mycode_core.testing import FakeOpenAIServer, cli_env, run_cli, turn


def _python(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=cli_env(home),
        check=False,
        timeout=60,
    )


def test_a_run_through_the_script_exits_with_its_result_and_transcript(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with FakeOpenAIServer() as server:
        server.enqueue(turn("the answer"))
        result = run_cli(
            server.cli_args("hi", output_format="stream-json"),
            workspace,
            tmp_path / "home",
            use_script=True,
        )
    assert result.rc == 0, result.stderr
    assert result.result is not None and result.result["final_text"] == "the answer"
    [transcript] = (tmp_path / "home" / "sessions").glob("*.jsonl")
    lines = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert lines[-1]["type"] == "result"


def test_the_exit_code_of_a_failed_run_survives(tmp_path: Path) -> None:
    result = run_cli(["-p", "hi", "--cwd", str(tmp_path / "missing")], tmp_path, tmp_path / "home")
    assert result.rc not in (0, None)
    assert "is not a folder" in result.stderr
    assert "Traceback" not in result.stderr


def test_atexit_handlers_and_last_calls_run_before_leaving(tmp_path: Path) -> None:
    done = _python(
        """
        import atexit, sys
        from mycode_core.cli import entry
        atexit.register(lambda: print("atexit ran", flush=True))
        entry.BEFORE_EXIT.append(lambda: print("drained", flush=True))
        entry.BEFORE_EXIT.append(lambda: 1 / 0)  # a failing last call is ignored
        sys.argv = ["mycode", "--version"]
        entry.console_main()
        print("never here")
        """,
        tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("mycode ")
    assert "drained" in done.stdout and "atexit ran" in done.stdout
    assert "never here" not in done.stdout and "Traceback" not in done.stderr


@pytest.mark.parametrize(("value", "code"), [(None, 0), (3, 3), ("bad thing", 1)])
def test_exit_values_map_to_codes(tmp_path: Path, value: object, code: int) -> None:
    done = _python(
        f"""
        import sys
        from mycode_core.cli import entry
        entry.leave(entry._code({value!r}))
        """,
        tmp_path,
    )
    assert done.returncode == code
    if isinstance(value, str):
        assert value in done.stderr


def test_main_in_process_still_raises_system_exit() -> None:
    from mycode_core.cli.main import build_cli

    result = CliRunner().invoke(build_cli(load_plugins=False), ["--version"])
    assert result.exit_code == 0 and "mycode" in result.output
