"""Issue 21: masking as the first stage, the compaction target, reachable artifacts."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from mycode_context_engine.compaction import compact_view, is_summary_message
from mycode_context_engine.masking import MASK_PREFIX, mask_results
from mycode_context_engine.settings import EngineSettings
from view_helpers import read_turns

from mycode_core.runtime.messages import image_message
from mycode_core.testing import FakeOpenAIServer, make_context, run_cli, turn
from mycode_core.tokens import count_message


def _summary(older: list[dict[str, Any]], previous: str | None) -> tuple[str | None, str | None]:
    return f"SUMMARY of {len(older)} messages", None


def test_old_results_become_placeholders_naming_tool_arguments_size_and_a_readable_path(
    tmp_path: Path,
) -> None:
    context = make_context(tmp_path)
    messages = read_turns(5)
    masked, count = mask_results(messages, 2, lambda: context.artifacts_dir)
    assert count == 3
    tools = [m for m in masked if m["role"] == "tool"]
    for i, message in enumerate(tools[:3]):
        text = message["content"]
        assert text.startswith(MASK_PREFIX + f"read_file(path=f{i}.py)")
        assert "40 lines" in text and f"{len(messages[3 + 2 * i]['content'])} chars" in text
        path = re.search(r"full output at (\S+) —", text)
        assert path and "read_file it (offset=N" in text
        saved = Path(path.group(1))
        assert saved.parent == context.artifacts_dir
        assert saved.read_text(encoding="utf-8") == messages[3 + 2 * i]["content"]
    assert tools[3] is messages[9] and tools[4] is messages[11]  # the recent ones, untouched
    assert masked[2] is messages[2]  # the model's reasoning and calls stay, same objects
    again, count = mask_results(masked, 2, lambda: context.artifacts_dir)
    assert count == 0 and again == masked  # masked once: the prefix stays stable


def _with_screenshots(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` with the core's image message after every tool result (a vision model)."""
    shot = [{"type": "image", "mime_type": "image/png", "data": "A" * 4000}]
    out: list[dict[str, Any]] = []
    for message in messages:
        out.append(message)
        if message["role"] == "tool":
            out.append(image_message(message["tool_call_id"], shot) or {})
    return out


def test_old_screenshots_are_masked_with_the_results_they_belong_to(tmp_path: Path) -> None:
    """The images an old result showed (a browser's screenshots) are dropped from the view
    with it — one line says so — so a long browser session does not carry every screenshot in
    every request; the recent ones, and a picture the user sent, stay."""
    context = make_context(tmp_path)
    prompt = {"role": "user", "content": [
        {"type": "text", "text": "make the page look like this"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,BBBB"}},
    ]}  # fmt: skip
    turns = read_turns(4)
    messages = _with_screenshots([turns[0], prompt, *turns[2:]])
    masked, count = mask_results(messages, 2, lambda: context.artifacts_dir)
    assert count == 4  # two results, two screenshots
    images = [m for m in masked if isinstance(m["content"], list)]
    assert images == [prompt, *[m for m in messages[-5:] if isinstance(m["content"], list)]]
    notes = [m["content"] for m in masked if m["role"] == "user" and isinstance(m["content"], str)]
    assert notes[0].startswith("Images returned by tool call c0: [1 image no longer shown")
    assert len(notes) == 2 and notes[1].startswith("Images returned by tool call c1:")
    assert sum(count_message(m) for m in masked) < sum(count_message(m) for m in messages) - 3000
    again, count = mask_results(masked, 2, lambda: context.artifacts_dir)
    assert count == 0 and again == masked


def test_small_results_are_not_masked_and_a_cut_result_keeps_its_saved_path(
    tmp_path: Path,
) -> None:
    context = make_context(tmp_path)
    messages = read_turns(3, size="short")
    cut = "head\n… [9 lines elided; full output: /h/artifacts/s/command-1.log — read …] …\ntail"
    messages[3] = {**messages[3], "content": cut + "y" * 400}
    masked, count = mask_results(messages, 0, lambda: context.artifacts_dir)
    assert count == 1  # the two short ones stay as they are
    assert "full output at /h/artifacts/s/command-1.log" in masked[3]["content"]
    assert not list(context.artifacts_dir.glob("*"))  # nothing saved twice


def test_masking_alone_when_it_reaches_the_target(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    messages = read_turns(30)
    size = sum(map(count_message, messages))
    view, problem = compact_view(
        messages, int(size * 1.1), context, "proactive", EngineSettings(), _summary
    )
    assert view is not None and problem is None and view.stage == "mask"
    assert sum(map(count_message, view.messages)) <= int(size * 1.1 * 0.5)
    assert len(view.messages) == len(messages)  # every turn stays, only results shrank
    assert not any(is_summary_message(m) for m in view.messages)


def test_summary_second_when_masking_is_not_enough(tmp_path: Path) -> None:
    context = make_context(tmp_path)
    messages = read_turns(30)
    view, _ = compact_view(messages, 3_000, context, "proactive", EngineSettings(), _summary)
    assert view is not None and view.stage == "summary"
    assert is_summary_message(view.messages[1])
    assert sum(map(count_message, view.messages)) <= 3_000 * 0.5  # down to the target


@pytest.mark.parametrize(
    ("strategy", "stage"), [("mask", "truncate"), ("summary", "summary"), ("off", "truncate")]
)
def test_strategies(tmp_path: Path, strategy: str, stage: str) -> None:
    context = make_context(tmp_path)
    messages = read_turns(30)
    calls: list[int] = []

    def summary(older: list[dict[str, Any]], previous: str | None) -> tuple[str, None]:
        calls.append(len(older))
        return "S", None

    view, _ = compact_view(
        messages, 3_000, context, "proactive", EngineSettings(strategy=strategy), summary
    )
    assert view is not None and view.stage == stage
    assert bool(calls) == (strategy == "summary")
    assert "the task" in view.messages[1]["content"]  # the task is never lost
    assert sum(map(count_message, view.messages)) <= 3_000 * 0.5


def _long_run(
    tmp_path: Path, config: str, turns: list[Any], mode: str = "bypass", **server: Any
) -> Any:
    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    for i in range(10):
        lines = [f"line {n} of file {i}: value = {n * i} # filler text" for n in range(40)]
        (workspace / f"f{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(config, encoding="utf-8")
    fake = FakeOpenAIServer(turns, **server)
    with fake:
        result = run_cli(
            [
                *fake.cli_args("TASK-55: read the files", output_format="stream-json"),
                "--permission-mode",
                mode,
                "--max-steps",
                "400",
            ],
            cwd=workspace,
            home=home,
            env={"MYCODE_LOAD_PLUGINS": "builtin_tools,context_engine"},
            timeout=300,
        )
    return fake, result


def _reads(count: int) -> list[Any]:
    return [
        turn(None, [{"id": f"r{i}", "name": "read_file", "arguments": {"path": f"f{i % 10}.py"}}])
        for i in range(count)
    ]


def test_the_long_task_at_6000_tokens_does_not_thrash(tmp_path: Path) -> None:
    summaries: list[int] = []

    def side(body: dict[str, Any]) -> Any:
        if body.get("tools"):
            return None
        summaries.append(1)
        return turn("## Goal\nRead the files.\n## Progress\nRead several files.")

    fake, result = _long_run(tmp_path, "context_window = 6000\n", _reads(62), side_responder=side)
    assert result.rc == 0, result.stderr
    main = [r for r in fake.chat_requests if r.body.get("tools")]
    assert len(main) == 63
    compactions = result.of_type("compaction")
    assert len(summaries) <= 0.15 * len(main), (len(summaries), len(main))
    assert compactions
    for n, event in enumerate(compactions, start=1):
        assert event["count"] == n and event["stage"] in ("mask", "summary")
        assert event["after_tokens"] < event["before_tokens"]
        assert event["reason"] == "proactive"
    # a 700-token read per step against ~3,200 tokens of room: two steps at least between
    # compactions, and most compactions are the free masking
    assert all(e["steps_since_last"] >= 2 for e in compactions[1:])
    assert sum(e["stage"] == "mask" for e in compactions) > len(compactions) / 2
    assert all(r.body.get("max_tokens") == 1500 for r in fake.chat_requests)  # 6000 / 4


def test_the_model_reads_a_masked_result_back_in_every_permission_mode(tmp_path: Path) -> None:
    for mode in ("default", "plan", "accept-edits"):
        read_back: list[str] = []

        def side(body: dict[str, Any], read_back: list[str] = read_back) -> Any:
            text = json.dumps(body.get("messages"))
            found = re.search(r"full output at (\S+?) \\u2014", text)
            if not body.get("tools") or not found or read_back:
                return None
            read_back.append(found.group(1))
            arguments = {"path": found.group(1), "offset": 3, "limit": 2}
            return turn(None, [{"id": "back", "name": "read_file", "arguments": arguments}])

        config = "context_window = 4000\n[context]\nkeep_recent_results = 2\n"
        config += '[sandbox]\nmode = "auto"\n'
        fake, result = _long_run(tmp_path / mode, config, _reads(14), mode, side_responder=side)
        assert result.rc == 0, result.stderr
        assert read_back, f"{mode}: no placeholder named a path"
        (back,) = [e for e in result.of_type("tool_result") if e["id"] == "back"]
        assert not back["is_error"], (mode, back["content"])
        assert "line 2 of file" in back["content"], (mode, back["content"])


def test_the_view_composition_names_summary_recent_and_masked_tokens(tmp_path: Path) -> None:
    from mycode_core.runtime.context import ModelView

    context = make_context(tmp_path)
    messages = read_turns(12)
    view_result, _ = compact_view(messages, 3_000, context, "proactive", EngineSettings(), _summary)
    assert view_result is not None
    view = ModelView("SYSTEM", 10_000, lambda *a: None)
    view._prefix = view_result.messages[1:]
    parts = view.composition()
    assert view_result.stage == "mask"  # results masked, no summary written
    assert parts["summary"] == 0 and parts["masked"] > 0 and parts["recent"] > 0
    assert parts["system"] > 0 and parts["tools"] == 0  # no tool schemas set


def test_batch_offers_mask_new_results_as_a_fresh_pass_would(tmp_path: Path) -> None:
    """Below the threshold each offer masks the results that left the recent window; what
    earlier batches left as is is remembered (settled), and the view is the one a fresh pass
    over the same messages gives."""
    context = make_context(tmp_path)
    settings = EngineSettings(keep_recent_results=3)
    turns = read_turns(12)
    size = sum(map(count_message, turns))
    view, start = turns[:8], 8  # three results: nothing to mask yet
    result, _ = compact_view(view, size * 4, context, "proactive", settings, _summary, size)
    assert result is None
    for end in (14, 20, 26):
        view, start = [*view, *turns[start:end]], end
        result, _ = compact_view(view, size * 4, context, "proactive", settings, _summary, size)
        assert result is not None and result.stage == "mask"
        fresh, _ = mask_results(view[1:], 3, lambda: context.artifacts_dir)
        assert [m["content"] for m in result.messages[1:]] == [m["content"] for m in fresh]
        whole = [
            m for m in result.messages if m["role"] == "tool" and MASK_PREFIX not in m["content"]
        ]
        assert len(whole) == 3
        view = result.messages
    settled = context.store["context_engine.settled"][1]
    assert all(settled.get(id(m)) is m for m in view[1:-6])  # the masked past
