"""The context window: limits read from real error texts, discovery from server metadata."""

from __future__ import annotations

import pytest

from mycode_core.providers.discovery import discover_context_window
from mycode_core.runtime.window import ContextWindow, parse_context_error
from mycode_core.testing import FakeOpenAIServer

# Phrasings collected from public issue threads of each server (see the context_engine README).
REAL_ERRORS = [
    (  # OpenAI / vLLM (vllm-project/vllm#20409)
        "This model's maximum context length is 16384 tokens. However, you requested 122946 "
        "tokens (112946 in the messages, 10000 in the completion). Please reduce the length of "
        "the messages or completion.",
        16384,
        112946,
    ),
    (  # older OpenAI wording
        "This model's maximum context length is 4097 tokens, however you requested 4231 tokens "
        "(3975 in your prompt; 256 for the completion). Please reduce your prompt; or "
        "completion length.",
        4097,
        None,
    ),
    (  # llama.cpp server (and Ollama's runner)
        "request (5584 tokens) exceeds the available context size (4096 tokens), try increasing it",
        4096,
        5584,
    ),
    (  # OpenRouter (musistudio/claude-code-router#252)
        "This endpoint's maximum context length is 65536 tokens. However, you requested about "
        "92208 tokens (60833 of text input, 10042 of tool input, 21333 in the output). Please "
        'reduce the length of either one, or use the "middle-out" transform to compress your '
        "prompt automatically.",
        65536,
        60833,
    ),
    ("prompt is too long: 210000 tokens > 200000 maximum", 200000, 210000),  # Anthropic-style
    (  # Gemini's OpenAI endpoint
        "The input token count (582632) exceeds the maximum number of tokens allowed (131072).",
        131072,
        582632,
    ),
    (  # vLLM, newer
        "'max_tokens' or 'max_completion_tokens' is too large: 1000. This model's maximum "
        "context length is 4096 tokens and your request has 3500 input tokens "
        "(1000 > 4096 - 3500).",
        4096,
        3500,
    ),
    (  # LM Studio
        "Trying to keep the first 5000 tokens when context the overflows. However, the model "
        "is loaded with context length of only 4096 tokens, which is not enough.",
        4096,
        None,
    ),
    (  # llama-server, when the prompt cannot be split (recurrent or multimodal models)
        "input (3000 tokens) is larger than the max context size (2048 tokens). skipping",
        2048,
        3000,
    ),
    (
        '{"code":400,"type":"exceed_context_size_error","n_prompt_tokens":9000,"n_ctx":8192}',
        8192,
        9000,
    ),
]


@pytest.mark.parametrize(("text", "limit", "requested"), REAL_ERRORS)
def test_limits_are_read_from_real_error_texts(
    text: str, limit: int, requested: int | None
) -> None:
    info = parse_context_error(text)
    assert info.limit == limit
    if requested is not None:
        assert info.requested == requested


def test_an_error_naming_no_limit_gives_none() -> None:
    info = parse_context_error("Input is too long for requested model.")
    assert (info.limit, info.requested) == (None, None)


def test_the_strongest_source_wins_and_a_learned_limit_sticks() -> None:
    window = ContextWindow(default=128_000)
    assert (window.limit, window.source) == (128_000, "default")
    window.discover(32_768)
    assert (window.limit, window.source) == (32_768, "server")
    assert window.learn(8_192) and (window.limit, window.source) == (8_192, "learned")
    assert not window.learn(16_000)  # a larger stated limit never raises the window
    assert window.limit == 8_192 and window.budget == 8_192 - 2_048
    window.halved = True
    assert window.budget == (8_192 - 2_048) // 2
    configured = ContextWindow(default=128_000, configured=20_000)
    configured.discover(64_000)
    assert configured.source == "config" and configured.limit == 20_000


def test_discovery_reads_vllm_metadata() -> None:
    with FakeOpenAIServer(model="m", model_metadata={"max_model_len": 12_288}) as server:
        assert discover_context_window(server.base_url, "m", timeout=5).window == 12_288


def test_discovery_prefers_llama_cpp_running_context() -> None:
    meta = {"owned_by": "llamacpp", "meta": {"n_ctx_train": 131_072}}
    props = {"default_generation_settings": {"n_ctx": 8_192}}
    with FakeOpenAIServer(model="m", model_metadata=meta, props=props) as server:
        assert discover_context_window(server.base_url, "m", timeout=5).window == 8_192


def test_discovery_says_none_when_the_server_does_not_tell() -> None:
    with FakeOpenAIServer(model="m") as server:
        assert discover_context_window(server.base_url, "m", timeout=5) == (None, None)
    assert discover_context_window("http://127.0.0.1:9/v1", "m", timeout=1) == (None, None)


def test_discovery_reads_the_servers_reply_cap() -> None:
    meta = {"max_model_len": 32_768, "max_completion_tokens": 4_000}
    with FakeOpenAIServer(model="m", model_metadata=meta) as server:
        assert discover_context_window(server.base_url, "m", timeout=5) == (32_768, 4_000)
    openrouter = {"context_length": 200_000, "top_provider": {"max_completion_tokens": 8_192}}
    with FakeOpenAIServer(model="m", model_metadata=openrouter) as server:
        assert discover_context_window(server.base_url, "m", timeout=5) == (200_000, 8_192)
    meta = {"owned_by": "llamacpp", "meta": {"n_ctx_train": 131_072}}
    for settings, cap in (
        ({"n_ctx": 8_192, "n_predict": 512}, 512),
        ({"n_ctx": 8_192, "params": {"n_predict": 1_024}}, 1_024),
        ({"n_ctx": 8_192, "params": {"n_predict": -1}}, None),  # llama.cpp: unlimited
    ):
        props = {"default_generation_settings": settings}
        with FakeOpenAIServer(model="m", model_metadata=meta, props=props) as server:
            assert discover_context_window(server.base_url, "m", timeout=5) == (8_192, cap)


def test_the_reply_cap_is_the_smaller_of_ours_and_the_servers() -> None:
    window = ContextWindow(default=128_000)
    assert window.reserve == 16_384
    window.discover(32_768, 2_000)
    assert window.reserve == 2_000 and window.budget == 32_768 - 2_000
    window.discover(None, None)  # nothing new said: what was said stays
    assert (window.limit, window.reserve) == (32_768, 2_000)
    configured = ContextWindow(default=128_000, reserve=1_000)
    configured.discover(None, 4_000)
    assert configured.reserve == 1_000  # the configured cap is below the server's


def test_the_reply_reserve_gives_way_when_tool_schemas_fill_a_small_window() -> None:
    window = ContextWindow(default=128_000, configured=2_048)
    assert (window.reserve, window.floor, window.budget) == (512, 256, 1_536)
    assert window.budget_with(800) == 1_536  # the messages get more room than the reply
    assert window.budget_with(1_200) == 1_712  # the reply gives way ...
    assert window.budget_with(1_900) == 2_048 - 256  # ... down to its floor
    assert window.reply_cap(1_000) == 512 and window.reply_cap(1_700) == 348
    assert window.reply_cap(2_000) == 256  # never under the floor
    large = ContextWindow(default=128_000)
    assert large.budget_with(20_000) == large.budget  # a large window is as before
    window.halved = True
    assert window.budget == 768 and window.budget_with(100) == 768
    # halved never below the tool schemas plus the reply's floor, when the window holds them
    assert window.budget_with(800) == 800 + 256 and window.budget_with(1_900) == 2_048 - 256


def test_a_window_under_2048_tokens_still_leaves_the_reply_room() -> None:
    tiny = ContextWindow(default=128_000, configured=1_024)
    assert (tiny.reserve, tiny.floor) == (256, 128)
    assert tiny.budget == 1_024 - 128  # not the whole window: the reply keeps its floor
    assert ContextWindow(default=128_000, configured=1_300).budget == 1_024  # as before
