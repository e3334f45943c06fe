"""The tokenizer loads lazily in a run (issue 24): a byte bound until it is there, exact counts
before the bound could change a decision. Each check runs in a fresh interpreter (the
encoding, once loaded, stays loaded for the process)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_bound_counts_until_the_tokenizer_is_loaded() -> None:
    out = _run(
        """
        import json, sys
        from mycode_core import tokens
        tokens.defer_loading()
        text = "héllo wörld, " * 20
        bound = tokens.count_text(text, bound=True)
        loaded_before = "tiktoken" in sys.modules
        exact_before = tokens.exact()
        plain = tokens.count_text(text)  # a plugin's count: always exact (loads now)
        after = tokens.count_text(text, bound=True)
        print(json.dumps({"bound": bound, "bytes": len(text.encode()), "plain": plain,
                          "after": after, "loaded_before": loaded_before,
                          "exact_before": exact_before, "exact_after": tokens.exact()}))
        """
    )
    assert out["bound"] == out["bytes"]
    assert not out["loaded_before"] and not out["exact_before"]
    assert out["plain"] < out["bytes"] and out["after"] == out["plain"]
    assert out["exact_after"]


def test_the_view_counts_exactly_before_the_bound_nears_the_budget() -> None:
    out = _run(
        """
        import json
        from mycode_core import tokens
        from mycode_core.runtime.context import ModelView
        from mycode_core.runtime.history import History
        tokens.defer_loading()
        history = History()
        view = ModelView("system prompt", 4000, lambda *a: None)
        history.append({"role": "user", "content": "word " * 500})  # 2,500 bytes
        bounded = view.bounded
        messages, change = view.build(history)
        exact = sum(tokens.count_message(m) for m in messages) + view.tool_tokens
        print(json.dumps({"bounded": bounded, "after": view.bounded, "raw": view.raw_tokens(),
                          "exact": exact, "compacted": change is not None}))
        """
    )
    assert out["bounded"] and not out["after"]
    assert out["raw"] == out["exact"]  # counted again with the tokenizer
    assert not out["compacted"]  # the bound (2,500 > 4,000 × 0.5) did not compact


def test_a_small_view_keeps_the_bound_and_skips_the_tokenizer() -> None:
    out = _run(
        """
        import json, sys
        from mycode_core import tokens
        from mycode_core.runtime.context import ModelView
        from mycode_core.runtime.history import History
        tokens.defer_loading()
        history = History()
        view = ModelView("system prompt", 128000, lambda *a: None)
        history.append({"role": "user", "content": "hi"})
        view.build(history)
        print(json.dumps({"bounded": view.bounded, "loaded": "tiktoken" in sys.modules}))
        """
    )
    assert out == {"bounded": True, "loaded": False}


def test_a_long_sessions_texts_are_tokenized_once() -> None:
    """Counting the texts of a 2,000-step session again (as each compaction check does) hits
    the cache: nothing is tokenized a second time."""
    from mycode_core import tokens

    texts = [f"result of step {i}: " + "x" * (i % 50) for i in range(6000)]
    for text in texts:
        tokens.count_text(text)
    misses = tokens._cached_count.cache_info().misses
    for text in texts:
        tokens.count_text(text)
    assert tokens._cached_count.cache_info().misses == misses


def test_a_message_is_counted_once_and_again_when_its_content_is_replaced() -> None:
    out = _run(
        """
        import json
        from mycode_core import tokens
        tokens.defer_loading()
        message = {"role": "tool", "tool_call_id": "c1", "content": "wörd " * 50}
        bound = tokens.count_message(message, bound=True)  # the byte bound: not kept
        exact = tokens.count_message(message)
        again = tokens.count_message(message, bound=True)  # exact now, from the memo
        message["content"] = "short"
        replaced = tokens.count_message(message)
        same_text = tokens.count_message(dict(message))
        print(json.dumps({"bound": bound, "exact": exact, "again": again,
                          "replaced": replaced, "same_text": same_text}))
        """
    )
    assert out["bound"] > out["exact"] == out["again"]
    assert out["replaced"] == out["same_text"] < out["exact"]
