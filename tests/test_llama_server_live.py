"""``mycode -p`` against a real ``llama-server`` (skipped unless one is named).

    MYCODE_LLAMA_SERVER=/path/to/llama-server MYCODE_LLAMA_MODELS=/path/to/models \\
        uv run pytest tests/test_llama_server_live.py

``MYCODE_LLAMA_MODELS`` is a folder written by ``bench/llama_tiny_model.py`` (tiny models with
replies fixed in advance: see there, and ``bench/README.md`` for building the server). Each test
starts its own server on a free port of 127.0.0.1 and stops it; nothing else is reached. The
fake server (``mycode_core.testing.server``) imitates what these check; this is where the
imitation is compared with the real thing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mycode_core.testing import run_cli

SERVER = os.environ.get("MYCODE_LLAMA_SERVER", "")
MODELS = Path(os.environ.get("MYCODE_LLAMA_MODELS", "/nonexistent"))
pytestmark = pytest.mark.skipif(
    not (SERVER and Path(SERVER).is_file() and (MODELS / "tiny-text.gguf").is_file()),
    reason="set MYCODE_LLAMA_SERVER (a llama-server binary) and MYCODE_LLAMA_MODELS "
    "(bench/llama_tiny_model.py's folder) to run against a real llama-server",
)
START_TIMEOUT = 60.0


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama(model: str | Path, *args: str) -> Iterator[str]:
    """A ``llama-server`` serving ``tiny-MODEL.gguf`` (or the file ``model``); yields its base
    URL (``…/v1``) once ``/health`` answers (a 503 too: a model still loading)."""
    port = _free_port()
    path = model if isinstance(model, Path) else MODELS / f"tiny-{model}.gguf"
    command = [SERVER, "-m", str(path), "--host", "127.0.0.1"]
    command += ["--port", str(port), "-t", "2", "--no-warmup", *args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1):
                    break
            except urllib.error.HTTPError as exc:
                if exc.code == 503:
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"llama-server did not start: {' '.join(command)}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _run(tmp_path: Path, url: str, *args: str, env: dict[str, str] | None = None) -> Any:
    (tmp_path / "README.md").write_text("# readme\n", encoding="utf-8")
    argv = ["-p", "hi", "--model", "tiny", "--base-url", url, "--output-format", "stream-json"]
    return run_cli([*argv, *args], tmp_path, tmp_path / "home", env)


def _model_error(done: Any, says: str) -> None:
    """The run ended with ``model_error`` (exit 1), its error saying ``says``."""
    assert done.rc == 1 and done.result["stop_reason"] == "model_error", done.result
    assert says in done.result["error"]


def test_a_reply_streams_with_usage_and_the_window_from_props(tmp_path: Path) -> None:
    with llama("text", "-c", "8192") as url:
        done = _run(tmp_path, url)
        assert done.rc == 0, done.stderr
        result = done.result
        assert result["final_text"] == "Hello from llama"
        assert result["usage"]["input_tokens"] > 100 and result["usage"]["output_tokens"] == 4
        # /props n_ctx, asked in the background once the first reply is in, then cached:
        # this run or the next one knows it
        windows = [result["context"]["window"], _run(tmp_path, url).result["context"]["window"]]
        assert 8192 in windows, windows
        cache = json.loads((tmp_path / "home" / "cache" / "windows.json").read_text())
        assert cache == {f"{url} tiny": 8192}


def test_thinking_arrives_as_reasoning_deltas(tmp_path: Path) -> None:
    with llama("think", "-c", "8192") as url:
        done = _run(tmp_path, url)
        assert done.rc == 0, done.stderr
        assert "".join(e["text"] for e in done.of_type("reasoning_delta")) == "Pondering"
        assert done.result["final_text"] == "Answer 42"


def test_tool_calls_run_and_their_results_go_back(tmp_path: Path) -> None:
    with llama("tool", "-c", "8192") as url:
        done = _run(tmp_path, url, "--max-steps", "2")
        assert done.result["stop_reason"] == "max_steps" and done.rc == 1
        calls = done.of_type("tool_call")
        assert [c["arguments"] for c in calls] == [{"path": "README.md"}] * 2
        assert all(not r["is_error"] for r in done.of_type("tool_result"))


def _cap_replies(tmp_path: Path, tokens: int) -> None:
    """``[model] max_output_tokens`` in the user config :func:`_run` uses."""
    home = tmp_path / "home"
    home.mkdir()
    text = f"[model]\nmax_output_tokens = {tokens}\n"
    (home / "config.toml").write_text(text, encoding="utf-8")


def test_max_tokens_ends_a_reply_with_length(tmp_path: Path) -> None:
    _cap_replies(tmp_path, 8)
    with llama("loop", "-c", "8192") as url:
        done = _run(tmp_path, url)
        cut = [e for e in done.of_type("assistant") if e["finish_reason"] == "length"]
        assert cut and all(e["usage"]["output_tokens"] == 8 for e in cut)
        # still cut after two continuations: no completion, the whole answer kept
        _model_error(done, "cut by the reply cap (8 tokens) 3 times")
        assert done.result["final_text"] == "".join(e["content"] for e in cut)


def test_a_reply_that_fills_a_small_window_is_not_continued_past_it(tmp_path: Path) -> None:
    # the reply fills the 2,048-token window; a continuation would overflow it: compacted
    # (not the budget halved below the tool schemas), then the run ends naming the window
    _cap_replies(tmp_path, 8000)
    with llama("loop", "-c", "2048") as url:
        done = _run(tmp_path, url)
        _model_error(done, "the answer filled the context window (2048 tokens)")
        assert not [n for n in done.of_type("notice") if "halving" in n["message"]]
        cut = [e["content"] for e in done.of_type("assistant")]
        assert done.result["final_text"] == "".join(cut) and "ping pong" in cut[0]


def test_a_window_too_small_is_context_overflow(tmp_path: Path) -> None:
    with llama("text", "-c", "256") as url:
        done = _run(tmp_path, url)
        assert done.rc == 1 and done.result["stop_reason"] == "context_overflow"
        notices = [n["message"] for n in done.of_type("notice")]
        assert any("context window is 256 tokens" in n for n in notices), notices


def test_a_window_the_tool_schemas_fill_names_them(tmp_path: Path) -> None:
    # every default plugin's tools (~1,300 tokens of schemas) in a 1,024-token window
    with llama("text", "-c", "1024") as url:
        done = _run(tmp_path, url)
        assert done.rc == 1 and done.result["stop_reason"] == "context_overflow"
        error = done.result["error"]
        assert error.startswith("the tool schemas (~") and "window 1024" in error
        assert "MYCODE_DISABLE_PLUGINS" in error


def test_the_step_limit_checkpoint_leaves_the_context_reading_alone(tmp_path: Path) -> None:
    # the checkpoint is asked without tool schemas: its small prompt is not the context's fill
    with llama("tool", "-c", "8192") as url:
        done = _run(tmp_path, url, "--max-steps", "2")
        assert done.result["stop_reason"] == "max_steps" and done.of_type("checkpoint")
        last = done.of_type("assistant")[-1]["usage"]["input_tokens"]
        assert done.result["context"]["used"] == last > 1000


def test_an_api_key_is_sent_and_a_missing_one_named(tmp_path: Path) -> None:
    with llama("text", "-c", "8192", "--api-key", "sekret") as url:
        done = _run(tmp_path, url, "--api-key", "sekret")
        assert done.rc == 0, done.stderr
        assert done.result["context"]["window"] == 8192  # /props asked with the key too
        done = _run(tmp_path, url)
        assert done.rc == 1 and "HTTP 401" in done.result["error"]


def test_a_server_without_jinja_is_named_at_once(tmp_path: Path) -> None:
    with llama("text", "-c", "8192", "--no-jinja") as url:
        done = _run(tmp_path, url)
        assert done.rc == 1 and "--jinja" in done.result["error"]
        assert done.of_type("retry") == []


def test_a_chat_template_without_tools_is_named_at_once(tmp_path: Path) -> None:
    # chatml drops the tools: the model's <tool_call> comes back as text, no completion
    with llama("tool", "-c", "8192", "--chat-template", "chatml") as url:
        done = _run(tmp_path, url)
        _model_error(done, "chat template takes no tools")
        assert done.of_type("tool_call") == []
        env = {"MYCODE_LOAD_PLUGINS": "builtin_tools", "MYCODE_BASE_URL": url}
        report = run_cli(["doctor", "--model", "tiny"], tmp_path, tmp_path / "home", env)
        assert report.rc == 1 and "chat template takes no tools" in report.stdout


def test_with_no_model_your_keyed_server_is_named(tmp_path: Path) -> None:
    with llama("text", "-c", "8192", "--api-key", "sekret") as url:
        env = {"MYCODE_LOCAL_SERVERS": ""}
        args = ["-p", "hi", "--base-url", url, "--api-key", "sekret"]
        done = run_cli(args, tmp_path, tmp_path / "home", env)
        assert done.rc == 2 and f"your server at {url}" in done.stderr
        assert "tiny-text.gguf" in done.stderr


def test_thinking_that_fills_the_reply_cap_names_the_cap(tmp_path: Path) -> None:
    _cap_replies(tmp_path, 30)
    with llama("ponder", "-c", "8192") as url:
        done = _run(tmp_path, url)
        _model_error(done, "thinking filled the reply cap (30 tokens)")
        assert done.of_type("reasoning_delta")


def test_a_server_still_loading_its_model_is_waited_for_and_named(tmp_path: Path) -> None:
    # a model read from a FIFO nobody writes never finishes loading: llama-server answers
    # every request (/health, /v1/models, chat) with 503 "Loading model"
    fifo = tmp_path / "loading.gguf"
    os.mkfifo(fifo)
    with llama(fifo, "-c", "8192") as url:
        args = ["-p", "hi", "--base-url", url]
        done = run_cli(args, tmp_path, tmp_path / "home", {"MYCODE_LOCAL_SERVERS": ""})
        assert done.rc == 2 and f"your server at {url} is still loading its model" in done.stderr
        # retries paced fast; a wait for the model is not one of the max_retries
        config = "retry_max_delay = 0.01\nmax_retries = 1\n"
        (tmp_path / "home" / "config.toml").write_text(config, encoding="utf-8")
        done = _run(tmp_path, url)
        assert done.rc == 1 and done.result["stop_reason"] == "model_error"
        assert done.result["error"].endswith("(the server is still loading its model)")
        retries = done.of_type("retry")
        assert len(retries) == 150 and {r["reason"] for r in retries} == {"loading"}
