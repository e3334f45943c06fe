"""Issue 21: ``[context]`` keys, ``[model] max_output_tokens``, strategy ``off`` and scripted
replays that compaction does not disturb (real subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import CliResult, FakeOpenAIServer, run_cli, turn


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    for i in range(10):
        lines = [f"line {n} of file {i}: value = {n * i} # filler text" for n in range(40)]
        (root / f"f{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _home(tmp_path: Path, config: str) -> Path:
    home = tmp_path / "home"
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(config, encoding="utf-8")
    return home


ENV = {"MYCODE_LOAD_PLUGINS": "builtin_tools,context_engine"}


def _run(root: Path, args: list[str], config: str, timeout: float = 60.0) -> CliResult:
    """``mycode ARGS`` with the context engine, on the files of ``_workspace(root)`` and a
    home whose config is ``config``."""
    return run_cli(args, cwd=_workspace(root), home=_home(root, config), env=ENV, timeout=timeout)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("[context]\ncompact_target = 0.9\n", "compact_target (0.9) must be below"),
        ("[context]\ncompact_threshold = 0.6\ncompact_target = 0.6\n", "must be below"),
        ('[context]\nstrategy = "fold"\n', "context.strategy"),
        ("[context]\nkeep_recent_results = -1\n", "context.keep_recent_results"),
        ("[model]\nmax_output_tokens = 0\n", "max_output_tokens"),
    ],
)
def test_bad_context_settings_are_one_line_config_errors(
    tmp_path: Path, config: str, expected: str
) -> None:
    result = _run(tmp_path, ["-p", "hi", "--model", "scripted:/nonexistent.json"], config)
    assert result.rc == 2, (result.stdout, result.stderr)
    assert expected in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def _script(tmp_path: Path, reads: int) -> Path:
    turns = [
        {
            "tool_calls": [
                {"id": f"r{i}", "name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}
            ]
        }
        for i in range(reads)
    ]
    turns.append({"content": "FINAL-ANSWER"})
    path = tmp_path / "turns.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return path


def test_a_scripted_replay_plays_every_turn_through_compactions(tmp_path: Path) -> None:
    """Summaries are answered by the scripted provider itself: all 60 reads run, the same way
    twice (before issue 21, each summary consumed a scripted turn)."""
    seen: list[list[Any]] = []
    for run in ("a", "b"):
        root = tmp_path / run
        result = _run(
            root,
            [
                "-p",
                "read the files",
                "--model",
                f"scripted:{_script(root.parent, 60)}",
                "--output-format",
                "stream-json",
                "--permission-mode",
                "bypass",
                "--max-steps",
                "200",
            ],
            'context_window = 5000\n[context]\nstrategy = "summary"\n',
            timeout=240,
        )
        assert result.rc == 0, result.stderr
        assert result.result is not None and result.result["final_text"] == "FINAL-ANSWER"
        calls = [e["id"] for e in result.of_type("tool_call")]
        assert calls == [f"r{i}" for i in range(60)]
        compactions = result.of_type("compaction")
        assert any(c["stage"] == "summary" for c in compactions)
        assert all("## Progress" in (c["summary"] or "") for c in compactions)
        seen.append([(c["stage"], c["steps_since_last"]) for c in compactions])
    assert seen[0] == seen[1]  # deterministic (token figures differ by the tmp paths)


def test_every_request_carries_the_configured_reply_cap(tmp_path: Path) -> None:
    server = FakeOpenAIServer(
        [turn(None, [{"id": "a", "name": "read_file", "arguments": {"path": "f1.py"}}])]
    )
    with server:
        result = _run(
            tmp_path,
            server.cli_args("read", output_format="stream-json"),
            "[model]\nmax_output_tokens = 777\n",
        )
    assert result.rc == 0, result.stderr
    caps = {r.body.get("max_tokens") for r in server.chat_requests}
    assert caps == {777}


def test_the_default_reply_cap_is_a_quarter_of_the_window(tmp_path: Path) -> None:
    server = FakeOpenAIServer([turn("ok")])
    with server:
        result = _run(
            tmp_path, server.cli_args("hi", output_format="stream-json"), "context_window = 20000\n"
        )
    assert result.rc == 0, result.stderr
    assert [r.body.get("max_tokens") for r in server.chat_requests] == [5000]


def test_strategy_off_compacts_only_at_the_hard_limit_with_a_notice(tmp_path: Path) -> None:
    reads = [
        turn(None, [{"id": f"r{i}", "name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}])
        for i in range(30)
    ]
    server = FakeOpenAIServer(reads)
    with server:
        result = _run(
            tmp_path,
            [
                *server.cli_args("TASK-88: read", output_format="stream-json"),
                "--permission-mode",
                "bypass",
            ],
            'context_window = 8000\n[context]\nstrategy = "off"\n',
            timeout=240,
        )
    assert result.rc == 0, result.stderr
    compactions = result.of_type("compaction")
    assert compactions and all(c["stage"] == "truncate" for c in compactions)
    assert all(c["before_tokens"] > 0.8 * 6000 for c in compactions)  # only near the limit
    assert not [r for r in server.chat_requests if not r.body.get("tools")]  # no summaries
    notices = [n["message"] for n in result.of_type("notice")]
    assert any("strategy = off" in m for m in notices), notices
    assert all("TASK-88" in json.dumps(r.messages) for r in server.chat_requests)  # kept
