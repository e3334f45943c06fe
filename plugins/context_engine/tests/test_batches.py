"""Issue 21: old results masked in batches as they age, below the threshold, so the view stays
small and its prefix stable; a summary only when masking cannot keep it under the threshold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mycode_context_engine.compaction import compact_view, is_summary_message
from mycode_context_engine.masking import is_masked
from mycode_context_engine.settings import EngineSettings
from view_helpers import read_turns

from mycode_core.testing import FakeOpenAIServer, make_context, tool_pairing_problems
from mycode_core.tokens import count_message

TASK = "TASK-4411: read the files"


def _no_call(older: list[dict[str, Any]], previous: str | None) -> tuple[str | None, str | None]:
    raise AssertionError("no summary below the threshold")


def _whole(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "tool" and not is_masked(m))


def test_a_batch_offer_below_the_threshold_only_masks(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    messages = read_turns(20)
    budget = sum(map(count_message, messages)) * 2  # far below the threshold
    settings = EngineSettings(keep_recent_results=5)
    view, problem = compact_view(messages, budget, context, "proactive", settings, _no_call)
    assert view is not None and problem is None and view.stage == "mask"
    assert len(view.messages) == len(messages)  # every turn stays; only old results shrank
    assert _whole(view.messages) == 5
    assert view.messages[-1] is messages[-1] and view.messages[2] is messages[2]
    again, _ = compact_view(view.messages, budget, context, "proactive", settings, _no_call)
    assert again is None  # nothing more to mask: declined, the view stays as it is
    for strategy in ("summary", "off"):
        other = EngineSettings(keep_recent_results=5, strategy=strategy)
        assert compact_view(messages, budget, context, "proactive", other, _no_call)[0] is None


def test_after_a_summary_a_masking_strategy_keeps_the_turns_of_the_last_results(
    tmp_path: Path,
) -> None:
    context = make_context(tmp_path)
    messages = read_turns(40)
    masked, _ = compact_view(
        messages, 10**6, context, "proactive", EngineSettings(keep_recent_results=4), _no_call
    )
    assert masked is not None  # a long, mostly masked session …
    body = masked.messages
    budget = int(sum(map(count_message, body)) / 0.85)  # … past the threshold

    def summary(older: list[dict[str, Any]], previous: str | None) -> tuple[str, None]:
        return "SUMMARY", None

    settings = EngineSettings(keep_recent_results=4)
    view, _ = compact_view(body, budget, context, "proactive", settings, summary)
    assert view is not None and view.stage == "summary" and is_summary_message(view.messages[1])
    kept = [m for m in view.messages if m.get("role") == "tool"]
    assert 1 <= len(kept) <= 4  # the masking window, not every cheap masked turn
    assert sum(map(count_message, view.messages)) <= budget * 0.5


def _workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for i in range(10):
        lines = [f"line {n} of file {i}: value = {n * i} # filler text" for n in range(40)]
        (root / f"f{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def _run(tmp_path: Path, config: str, reads: int) -> tuple[FakeOpenAIServer, Any]:
    from mycode_core.testing import run_cli, turn

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(config, encoding="utf-8")
    turns = [
        turn(None, [{"id": f"r{i}", "name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}])
        for i in range(reads)
    ]
    server = FakeOpenAIServer(turns, side_responder=lambda body: None)
    with server:
        result = run_cli(
            [
                *server.cli_args(TASK, output_format="stream-json"),
                *("--permission-mode", "bypass", "--max-steps", "100"),
            ],
            cwd=_workspace(tmp_path),
            home=home,
            env={"MYCODE_LOAD_PLUGINS": "builtin_tools,context_engine"},
            timeout=240,
        )
    return server, result


def test_a_long_session_in_a_big_window_masks_in_batches(tmp_path: Path) -> None:
    """keep_recent_results = 5: a batch every 5 results; between batches each request
    extends the previous one exactly; never more than 10 results whole, never a summary."""
    config = "context_window = 128000\n[context]\nkeep_recent_results = 5\n"
    server, result = _run(tmp_path, config, 30)
    assert result.rc == 0, result.stderr
    compactions = result.of_type("compaction")
    assert [c["stage"] for c in compactions] == ["mask"] * 5  # at 10, 15, 20, 25, 30 results
    assert all(c["after_tokens"] < c["before_tokens"] for c in compactions)
    assert [c["steps_since_last"] for c in compactions[1:]] == [5, 5, 5, 5]
    assert all(r.body.get("tools") for r in server.chat_requests)  # no summary request
    for event in compactions:  # the transcript names unchanged messages by history index
        literal = [ref for ref in event["view"] if not isinstance(ref, int)]
        assert literal and all(ref["content"].startswith("[masked result of ") for ref in literal)
        assert len(literal) < len(event["view"]) / 2
    requests = [r.messages for r in server.chat_requests]
    broken = 0
    for before, after in zip(requests, requests[1:], strict=False):
        extends = json.dumps(after[: len(before)]) == json.dumps(before)
        broken += not extends
        results = [m for m in after if m.get("role") == "tool"]
        whole = [m for m in results if not m["content"].startswith("[masked result of ")]
        assert len(whole) <= 10 and (len(results) < 5 or len(whole) >= 5)
        assert tool_pairing_problems(after) == []
        assert TASK in json.dumps(after[:2])
    assert broken == len(compactions)  # only at the batches


def test_the_summary_strategy_does_not_mask_below_the_threshold(tmp_path: Path) -> None:
    config = 'context_window = 128000\n[context]\nkeep_recent_results = 5\nstrategy = "summary"\n'
    server, result = _run(tmp_path, config, 20)
    assert result.rc == 0, result.stderr
    assert result.of_type("compaction") == []
    assert "[masked result of " not in json.dumps(server.chat_requests[-1].messages)
