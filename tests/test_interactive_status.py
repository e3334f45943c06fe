"""The interactive status line after each turn: cost and context (issue 20), on a real pty."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from mycode_core.testing import FakeOpenAIServer, cli_env, turn
from mycode_core.testing.terminal import Terminal

MYCODE = [sys.executable, "-m", "mycode_core"]
USAGE = {"prompt_tokens": 1500, "completion_tokens": 20}


def _session(tmp_path: Path, config: str, server: FakeOpenAIServer) -> Terminal:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "config.toml").write_text("context_window = 10000\n" + config, encoding="utf-8")
    env = cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})
    argv = [*MYCODE, "--model", "m", "--base-url", server.base_url, "--api-key", "k"]
    term = Terminal([*argv, "--cwd", str(workspace)], env, workspace)
    term.expect("/help for help")
    return term


def test_status_line_shows_cost_and_context_after_each_turn(tmp_path: Path) -> None:
    price = '[models."m"]\ninput_per_mtok = 1000\noutput_per_mtok = 1000\n'
    with FakeOpenAIServer() as server:
        server.enqueue(turn("first answer", usage=USAGE), turn("second answer", usage=USAGE))
        term = _session(tmp_path, price, server)
        term.type("hello\r")
        term.expect("first answer")
        term.expect("completed")
        term.expect("$1.5200 · context 1.5k/10k (15%)")  # 1,520 tokens at $1,000 per million
        term.type("again\r")
        term.expect("second answer")
        term.expect("$3.0400 · context 1.5k/10k (15%)")  # the session's cost so far
        term.type("/exit\r")
        assert term.wait() == 0


def test_status_line_leaves_out_an_unknown_price(tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        server.enqueue(turn("an answer", usage=USAGE))
        term = _session(tmp_path, "", server)
        term.type("hello\r")
        term.expect("context 1.5k/10k (15%)")
        term.type("/exit\r")
        assert term.wait() == 0
    status = next(line for line in term.output.splitlines() if "context 1.5k" in line)
    assert "completed" in status and "$" not in status


def test_the_models_thinking_is_shown_apart_before_its_answer(tmp_path: Path) -> None:
    """A reasoning model's ``reasoning_content`` streams (dim) before the answer, on its own
    lines, rather than leaving the user with a spinner for the whole think."""
    with FakeOpenAIServer() as server:
        server.enqueue(turn("the answer", usage=USAGE, reasoning="Pondering the question."))
        term = _session(tmp_path, "", server)
        term.type("hello\r")
        term.expect("Pondering the question.")
        term.expect("the answer")
        term.type("/exit\r")
        assert term.wait() == 0
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", term.output)
    lines = [line.strip() for line in plain.splitlines()]
    thought = lines.index("Pondering the question.")
    assert "the answer" in lines[thought + 1 :]


def test_context_counts_tokens_as_the_status_line_does(tmp_path: Path) -> None:
    """``/context`` right after a turn showed the byte bounds a run starts with as tokens
    ("tools ~4364" for schemas a llama-server counted as ~1,340), beside a status line
    with the server's own count. It counts with the tokenizer."""
    import json

    from mycode_core.tokens import count_text

    with FakeOpenAIServer(context_window=100_000) as server:  # usage: its exact count
        server.enqueue(turn("an answer"))
        home, workspace = tmp_path / "home", tmp_path / "ws"
        workspace.mkdir()
        env = cli_env(home, {"TERM": "xterm", "NO_COLOR": "1"})  # a large window: no recount
        argv = [*MYCODE, "--model", "m", "--base-url", server.base_url, "--api-key", "k"]
        term = Terminal([*argv, "--cwd", str(workspace)], env, workspace)
        term.expect("/help for help")
        term.type("hello\r")
        term.expect("an answer")
        term.expect("completed")
        term.set_mark()
        term.type("/context\r")
        term.expect("masked ~", after_mark=True)
        term.type("/exit\r")
        assert term.wait() == 0
    schemas = count_text(json.dumps(server.chat_requests[0].body["tools"], ensure_ascii=False))
    shown = int(term.since_mark().split("tools ~")[1].split(",")[0])
    assert abs(shown - schemas) <= schemas // 20, (shown, schemas)
    assert "summary ~0," in term.since_mark() and "masked ~0" in term.since_mark()  # not ~1
