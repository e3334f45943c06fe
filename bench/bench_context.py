"""The context engine at session lengths of 20, 300 and 2,000 steps (issue 9).

An in-process :class:`~mycode_core.runtime.loop.AgentRunner` with the real built-in tools and
the ``context_engine`` plugin, a context window of 8,000 tokens and a model that reads a
different 40-line file every step (summaries, asked without tools, get a fixed answer), so
compaction is active all along. Figures:

* per-step wall time (mean over the last 100 steps, and over the whole run; median of
  ``--repeat`` interleaved rounds) at 20 / 300 / 2,000 steps — goal: 2,000 ≤ 1.3× 20;
* prefix reuse over the 300-step run: the share of consecutive agent requests where the
  earlier request's messages are exactly the start of the later one's, compaction points
  excluded — goal ≥ 95%;
* tokens sent over the 300-step run (our count of every request), engine vs. the core's plain
  truncation (the engine plugin left out);
* token-count calibration: our count of the completion text of recorded real OpenAI SSE
  streams vs. the ``completion_tokens`` the provider reported (read at run time from
  ``--sse-dir``, default the conformance kit's folder; nothing is copied).

* (``--strategies``) over the realistic session of :mod:`context_session` (grep, reads,
  commands, edits, a line of reasoning a turn; the same for every strategy): input tokens
  (messages + tool schemas, summary requests included) per ``[context] strategy``
  (``mask+summary``, ``summary``, ``mask``) and the core's plain truncation, at 63 steps with
  a 6,000-token window (the long task) and 300 steps with 8,000, 32,768 and 128,000 (the
  default); summary requests; compactions by stage; the share of request pairs between two
  compactions, prefix reuse between them, and the share of input a prompt cache could serve.

    uv run python bench/bench_context.py [--lengths 20,300,2000] [--repeat 3] [--sse-dir DIR]
    uv run python bench/bench_context.py --strategies
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import context_session
from common import medians

GOAL_RATIO = 1.3
GOAL_PREFIX = 0.95
DEFAULT_SSE = Path("/work/shared/conformance/provider/sse")
STRATEGY_RUNS = ((63, 6_000), (300, 8_000), (300, 32_768), (300, 128_000))
"""(steps, window) of ``--strategies``: the long task, and 300 steps at a small, a mid-size
and the default window."""
SUMMARY = "## Goal\nRead the files.\n## Progress\nRead many files.\n## Next steps\nRead more."


class ReadingModel(context_session.SessionModel):
    """Reads file ``f{i}.py`` at step ``i``; answers summaries; stops after ``steps``
    (the counters of :class:`context_session.SessionModel`, a simpler session)."""

    model_id = "bench:reader"

    def complete(self, messages: Any, tools: Any, on_text: Any) -> Any:
        from mycode_core.providers.base import ModelReply, ReplyToolCall
        from mycode_core.tokens import count_message

        if not tools:
            self.side_tokens += sum(count_message(m) for m in messages)
            return ModelReply(content=SUMMARY, usage={"input_tokens": 0, "output_tokens": 20})
        self.stamps.append(time.perf_counter())
        self.requests.append(list(messages))
        self.sent_tokens += sum(count_message(m) for m in messages)
        if self.step >= self.steps:
            return ModelReply(content="All done.", finish_reason="stop")
        call = ReplyToolCall(
            id=f"c{self.step}", name="read_file", arguments=json.dumps({"path": f"f{self.step}.py"})
        )
        self.step += 1
        return ModelReply(tool_calls=[call], finish_reason="tool_calls")


def _plugin(model: ReadingModel) -> object:
    from mycode_core import hookimpl
    from mycode_core.records import ModelProvider

    class Provider:
        @hookimpl
        def register_models(self, register: Any) -> None:
            register(ModelProvider(prefix="bench", factory=lambda _id, _settings: model))

    return Provider()


def run_session(
    steps: int,
    root: Path,
    *,
    engine: bool = True,
    strategy: str = "mask+summary",
    window: int = 8_000,
    realistic: bool = False,
) -> tuple[Any, list[Any]]:
    """Run ``steps`` steps (reading, or the realistic session of :mod:`context_session`);
    return the model (stamps, requests) and the events."""
    import mycode_builtin_tools
    import mycode_context_engine.plugin as context_engine

    from mycode_core.config import Settings
    from mycode_core.plugins import get_plugin_manager
    from mycode_core.runtime.child import run_child
    from mycode_core.runtime.loop import AgentRunner

    workspace = root / "workspace"
    workspace.mkdir(parents=True, exist_ok=True)
    model: Any
    if realistic:
        workspace = root / f"workspace-{steps}-{engine}-{strategy.replace('+', '_')}-{window}"
        context_session.make_project(workspace)
        model = context_session.SessionModel(steps)
    else:
        _write_files(workspace, steps)
        model = ReadingModel(steps)
    home = root / f"home-{steps}-{engine}-{strategy.replace('+', '_')}-{window}"
    home.mkdir(parents=True, exist_ok=True)
    plugins = [mycode_builtin_tools, _plugin(model)]
    if engine:
        plugins.append(context_engine)
    pm = get_plugin_manager(extra_plugins=plugins, load_entry_points=False)
    settings = Settings.model_validate(
        {
            "model": "bench:reader",
            "context_window": window,
            "context": {"strategy": strategy},
            "max_steps": steps + 5,
            "permission_mode": "bypass",
            "stagnation": {"enabled": False},  # in case the stagnation plugin is added
        }
    )
    runner = AgentRunner(
        spawn_child=run_child,
        pm=pm,
        settings=settings,
        workspace=workspace.resolve(),
        home=home,
        session_id=f"b{steps}",
    )
    gc.collect()
    try:
        events = list(runner.run("Read every file in order and report what you find."))
    finally:
        runner.close()
    return model, events


def _write_files(workspace: Path, steps: int) -> None:
    for i in range(steps):
        path = workspace / f"f{i}.py"
        if not path.exists():
            lines = [
                f"def function_{i}_{n}(value):  return value * {n}  # line {n}" for n in range(40)
            ]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def per_step(model: ReadingModel) -> tuple[float, float]:
    """(mean of the last 100 steps, mean of the whole run) in milliseconds; a step is the
    time between two agent requests (tools, view, compaction and summary included)."""
    gaps = [b - a for a, b in zip(model.stamps, model.stamps[1:], strict=False)]
    return 1000 * statistics.mean(gaps[-100:]), 1000 * statistics.mean(gaps)


def prefix_reuse(requests: list[list[dict[str, Any]]]) -> tuple[float, int]:
    """Share of consecutive requests that extend the previous one, compaction points excluded
    (a point is a request whose view was rebuilt: its second message is a new summary)."""
    kept = points = 0
    for before, after in zip(requests, requests[1:], strict=False):
        if len(before) <= len(after) and after[: len(before)] == before:
            kept += 1
        elif "[mycode: context summary]" in str(after[1].get("content", "")) or (
            "earlier messages were left out" in json.dumps(after[:4])
        ):
            points += 1
        else:
            pass
    pairs = len(requests) - 1 - points
    return (kept / pairs if pairs else 1.0), points


def calibration(sse_dir: Path) -> dict[str, tuple[float, int]]:
    """Our count of each recorded stream's completion vs its reported ``completion_tokens``:
    ``{"text": (mean |error| %, streams), "tool calls": (…)}``. Tool calls are counted as
    ``count_message`` does (name + arguments + ``TOOL_CALL_OVERHEAD``)."""
    from mycode_core.providers.sse import accumulate_sse
    from mycode_core.tokens import TOOL_CALL_OVERHEAD, count_text

    errors: dict[str, list[float]] = {"text": [], "tool calls": []}
    for path in sorted(sse_dir.glob("*.sse")) if sse_dir.is_dir() else []:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        if "multiple_choices" in path.name:
            continue  # n > 1: the usage counts every choice, the reply holds one
        try:
            reply = accumulate_sse(iter(lines), lambda _text: None)
        except Exception:  # noqa: BLE001 - a stream we cannot parse is not a sample
            continue
        reported = int(reply.usage.get("output_tokens", 0) or 0)
        text = reply.content or reply.refusal or ""
        ours = count_text(text) + sum(
            TOOL_CALL_OVERHEAD + count_text(c.name) + count_text(c.arguments)
            for c in reply.tool_calls
        )
        if reported < 5 or not ours:
            continue
        kind = "tool calls" if reply.tool_calls else "text"
        errors[kind].append(abs(ours - reported) / reported * 100)
    return {k: (statistics.mean(v) if v else 0.0, len(v)) for k, v in errors.items()}


def cache_figures(requests: list[list[dict[str, Any]]]) -> tuple[float, float]:
    """``(pairs, cached)``: the share of consecutive agent requests where the later one
    extends the earlier one exactly (what a server's prompt cache can use whole), and the
    share of all input tokens that are such a shared prefix (message by message)."""
    from mycode_core.tokens import count_message

    extended = shared = total = 0
    for before, after in zip(requests, requests[1:], strict=False):
        common = 0
        for old, new in zip(before, after, strict=False):
            if old != new:
                break
            common += 1
        extended += common == len(before)
        shared += sum(count_message(m) for m in after[:common])
        total += sum(count_message(m) for m in after)
    pairs = max(1, len(requests) - 1)
    return extended / pairs, (shared / total if total else 1.0)


def strategies(root: Path, steps: int, window: int) -> dict[str, int]:
    """Input tokens (agent requests + summary requests) per strategy and for the core's
    plain truncation, over the realistic session of :mod:`context_session`; summary
    requests; compactions by stage; the share of request pairs that fall between two
    compactions (each compaction breaks one pair), prefix reuse between compactions, and the
    share of input tokens a prompt cache could serve (issue 21)."""
    figures: dict[str, int] = {}
    for strategy in ("mask+summary", "summary", "mask", "plain"):
        engine = strategy != "plain"
        model, events = run_session(
            steps,
            root,
            engine=engine,
            strategy=strategy if engine else "mask+summary",
            window=window,
            realistic=True,
        )
        compactions = [e for e in events if e.type == "compaction"]
        stages = Counter(str(e.stage) for e in compactions)
        pairs = max(1, len(model.requests) - 1)
        between = 1 - len(compactions) / pairs
        extended, cached = cache_figures(model.requests)
        reuse = min(1.0, extended / between) if between > 0 else 0.0
        figures[strategy] = model.sent_tokens + model.side_tokens
        per_request = model.sent_tokens // max(1, len(model.requests))
        print(
            f"{strategy:>12} ({steps} steps, window {window:,}): "
            f"{figures[strategy]:,} input tokens ({per_request:,}/request), "
            f"{len(model.requests)} main + {model.side_requests} summary requests, "
            f"{len(compactions)} compactions ({', '.join(f'{k} {v}' for k, v in stages.items())}),"
            f" {100 * between:.0f}% of pairs between two, prefix reuse between "
            f"{100 * reuse:.0f}%, cacheable input {100 * cached:.0f}%, "
            f"stop {events[-1].stop_reason}"
        )
    ratio = figures["mask+summary"] / max(1, figures["summary"])
    plain = figures["mask+summary"] / max(1, figures["plain"])
    print(
        f"  mask+summary / summary = {ratio:.2f} (goal ≤ 0.6); "
        f"mask+summary / plain truncation = {plain:.2f}"
    )
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lengths", default="20,300,2000")
    parser.add_argument("--sse-dir", type=Path, default=DEFAULT_SSE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--strategies", action="store_true", help="only compare the [context] strategies"
    )
    args = parser.parse_args()
    if args.strategies:
        with tempfile.TemporaryDirectory(prefix="mycode-bench-context-") as tmp:
            for steps, window in STRATEGY_RUNS:
                strategies(Path(tmp), steps, window)
        return 0
    lengths = [int(x) for x in args.lengths.split(",")]
    with tempfile.TemporaryDirectory(prefix="mycode-bench-context-") as tmp:
        root = Path(tmp)
        run_session(30, root / "warm-up")  # imports, tokenizer, caches: not part of a step
        walls: dict[int, tuple[float, float]] = {}
        samples: dict[int, list[tuple[float, float]]] = {n: [] for n in lengths}
        for _round in range(args.repeat):  # lengths interleaved, so load spikes hit all
            for steps in lengths:
                model, events = run_session(steps, root)
                samples[steps].append(per_step(model))
                compactions = sum(1 for e in events if e.type == "compaction")
                if _round == 0:
                    print(
                        f"{steps:>5} steps: {compactions} compactions, "
                        f"stop {events[-1].stop_reason}"
                    )
        for steps in lengths:
            lasts, wholes = zip(*samples[steps], strict=True)
            figures = medians({"last": lasts, "whole": wholes})
            walls[steps] = (figures["last"], figures["whole"])
            print(
                f"{steps:>5} steps: {walls[steps][0]:.2f} ms/step (last 100 steps), "
                f"{walls[steps][1]:.2f} ms/step (whole run); median of {args.repeat}"
            )
        if 300 in lengths:
            model, _events = run_session(300, root)
            reuse, points = prefix_reuse(model.requests)
            plain, plain_events = run_session(300, root, engine=False)
            plain_reuse, plain_points = prefix_reuse(plain.requests)
            print(
                f"prefix reuse (300 steps): {100 * reuse:.1f}% of request pairs "
                f"({points} compaction points excluded) — goal ≥ {100 * GOAL_PREFIX:.0f}%"
            )
            print(
                f"tokens sent (300 steps): engine {model.sent_tokens:,} (+ {model.side_tokens:,} "
                "in summary requests); plain truncation "
                f"{plain.sent_tokens:,} (its prefix reuse {100 * plain_reuse:.1f}%, "
                f"{plain_points} cut points, stop {plain_events[-1].stop_reason})"
            )
        first, last = walls[lengths[0]][0], walls[lengths[-1]][0]
        ratio = last / first if first else 0.0
        verdict = "ok" if ratio <= GOAL_RATIO else "OVER GOAL"
        print(
            f"per-step ratio {lengths[-1]} vs {lengths[0]} steps: {ratio:.2f} "
            f"(goal ≤ {GOAL_RATIO}) {verdict}"
        )
    for kind, (error, streams) in calibration(args.sse_dir).items():
        print(
            f"token count vs reported completion tokens, {kind}: mean |error| {error:.1f}% "
            f"over {streams} recorded streams ({args.sse_dir})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
