"""Cost and context (SPEC §4 ``cost_usd``/``context``, §2 ``--max-budget-usd``, §5 prices)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mycode_core.pricing import cost_usd, price_for
from mycode_core.testing import FakeOpenAIServer, http_error, turn

USAGE = {"prompt_tokens": 100, "completion_tokens": 20}


def test_price_table_matches_provider_prefixes_and_dates() -> None:
    gpt = price_for("openai/gpt-4o-mini-2024-07-18")
    assert gpt is not None and gpt.input == 0.15
    assert price_for("gpt-4o") != gpt  # the longest matching name wins
    sonnet = price_for("anthropic/claude-sonnet-4.5")
    assert sonnet is not None and sonnet.output == 15.0
    assert price_for("my-local-llama") is None
    assert cost_usd(None, {"input_tokens": 5}) is None


def test_config_prices_win_and_cached_tokens_are_cheaper() -> None:
    models = {"gpt-4o": {"input_per_mtok": 10, "output_per_mtok": 20, "cached_input_per_mtok": 1}}
    price = price_for("gpt-4o", models)
    usage = {"input_tokens": 1_000_000, "cached_input_tokens": 500_000, "output_tokens": 0}
    assert cost_usd(price, usage) == 10 * 0.5 + 1 * 0.5


def _price_m(home: Path, per_mtok: int) -> None:
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[models."m"]\ninput_per_mtok = {per_mtok}\noutput_per_mtok = {per_mtok}\n')


def _tool_turn() -> Any:
    return turn(None, [{"name": "read_note", "arguments": {"path": "a.txt"}}], usage=USAGE)


def test_result_has_cost_and_context(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _price_m(home, 1000)
    server.enqueue(_tool_turn(), turn("done", usage=USAGE))
    run = cli(["-p", "go", *server_args])
    result = run.of_type("result")[0]
    assert run.rc == 0, run.stderr
    assert abs(result["cost_usd"] - 2 * 120 * 1000 / 1e6) < 1e-9
    assert result["context"]["used"] == 100 and result["context"]["window"] > 0
    assert result["context"]["percent"] == round(100 * 100 / result["context"]["window"], 1)


def test_unknown_price_is_null(cli: Any, server: FakeOpenAIServer, server_args: list[str]) -> None:
    server.enqueue(turn("done", usage=USAGE))
    run = cli(["-p", "go", *server_args])
    assert '"cost_usd":null' in run.stdout and run.of_type("result")[0]["cost_usd"] is None


def test_max_budget_usd_ends_the_run_like_the_token_budget(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _price_m(home, 1000)  # 0.12 USD per reply
    server.enqueue(_tool_turn(), _tool_turn(), _tool_turn(), turn("done", usage=USAGE))
    run = cli(["-p", "go", *server_args, "--max-budget-usd", "0.2"])
    result = run.of_type("result")[0]
    assert run.rc == 1
    assert result["stop_reason"] == "token_budget" and result["steps"] == 2
    assert "0.2" in result["error"]


def test_negative_price_is_a_config_error(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    _price_m(home, -1)
    run = cli(["-p", "go", *server_args])
    assert run.rc == 2 and "input_per_mtok" in run.stderr and "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def _priced_tokens(result: dict[str, Any], per_mtok: int) -> float:
    """The run's tokens as its cost says (one price for input and output)."""
    return round(result["cost_usd"] * 1e6 / per_mtok)


def test_requests_without_tools_cost_but_do_not_tell_the_context_fill(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    # the step-limit checkpoint: asked without the tool schemas, so its prompt is far smaller
    # than the agent's last request; the context reading stays the agent's
    _price_m(home, 1000)
    notes = turn("notes", usage={"prompt_tokens": 7, "completion_tokens": 3})
    server.enqueue(_tool_turn(), _tool_turn(), notes)
    run = cli(["-p", "go", *server_args, "--max-steps", "2"])
    result = run.of_type("result")[0]
    assert result["stop_reason"] == "max_steps" and run.of_type("checkpoint")
    assert result["usage"] == {"input_tokens": 207, "output_tokens": 43}
    assert result["context"]["used"] == 100
    assert _priced_tokens(result, 1000) == 250

    # a compaction summary is a request of the run like any other: its tokens are paid for
    server.side_responder = lambda body: (
        None if body.get("tools") else turn("SUMMARY", usage={"prompt_tokens": 50})
    )
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("\ncontext_window = 6000\nmax_output_tokens = 1000\n")
    big = "lorem ipsum " * 250
    for i in range(4):
        echo = {"id": f"c{i}", "name": "echo", "arguments": {"text": big}}
        server.enqueue(turn(None, [echo], usage=USAGE))
    server.enqueue(http_error(400, "This model's maximum context length is 4096 tokens."))
    server.enqueue(turn("fits now", usage=USAGE))
    run = cli(["-p", "go", *server_args], {"MYCODE_LOAD_PLUGINS": "coretools,context_engine"})
    result = run.of_type("result")[0]
    assert run.rc == 0 and run.of_type("compaction")[-1]["summary"] == "SUMMARY", run.stderr
    assert result["context"]["used"] == 100
    tokens = result["usage"]["input_tokens"] + result["usage"]["output_tokens"]
    assert tokens == 5 * 120 + 50 and _priced_tokens(result, 1000) == tokens


def test_a_cost_budget_no_price_can_enforce_is_named_once(
    cli: Any, server: FakeOpenAIServer, server_args: list[str], home: Path
) -> None:
    """A local model has no price: ``--max-budget-usd`` silently never ended the run. It is
    named once, by the main agent (a child agent repeated every configuration notice)."""
    with (home / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("\nbogus_key = 1\n")
    server.enqueue(turn(None, [{"name": "delegate_task", "arguments": {"task": "child-task"}}]))
    server.route("child-task", turn("child done"))
    env = {"MYCODE_LOAD_PLUGINS": "coretools,subagents"}
    run = cli(["-p", "go", *server_args, "--max-budget-usd", "0.5"], env)
    assert run.rc == 0, run.stderr
    notices = [(n.get("agent_id"), n["message"]) for n in run.of_type("notice")]
    unpriced = "--max-budget-usd 0.5 is not enforced: the price of model 'm' is unknown"
    assert [m for a, m in notices if m.startswith(unpriced)] and '[models."m"]' in str(notices)
    assert [m for a, m in notices if "bogus_key" in m]
    assert all(a is None for a, _ in notices), notices  # none repeated by the child
    assert len(server.chat_requests) == 3  # the child did run

    _price_m(home, 1000)
    run = cli(["-p", "go", *server_args, "--max-budget-usd", "0.5"])
    assert not [n for n in run.of_type("notice") if "max-budget-usd" in n["message"]]
