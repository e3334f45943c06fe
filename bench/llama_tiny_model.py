"""Write tiny llama-architecture GGUF models that a real ``llama-server`` loads (no download).

    uv run --no-project --with gguf --with tokenizers python bench/llama_tiny_model.py OUT_DIR

writes ``OUT_DIR/tiny-{text,think,tool,loop,ponder}.gguf`` (about 23 MB each). Each is a
bigram table in disguise: its one layer adds nothing (zero output projections) and the
chain tokens have one-hot embeddings, so the next token depends only on the last one, and a
chain starting at ``"\\n"`` (the last token of the chat template's generation prompt) makes
every reply the same, whatever the sampler:

* ``text``:  ``Hello from llama``
* ``think``: ``<think>Pondering</think>Answer 42`` (llama-server sends ``reasoning_content``)
* ``tool``:  ``<tool_call>{"name": "read_file", "arguments": {"path": "README.md"}}</tool_call>``
* ``loop``:  ``ping pong`` forever (it ends at ``max_tokens``: ``finish_reason: length``)
* ``ponder``: ``<think>Pondering more Pondering more…`` — thinks until ``max_tokens``, never
  answers (``reasoning_content`` only, ``finish_reason: length``)

The tokenizer is a byte-level BPE (``gpt2`` in GGUF terms) trained on this repository's own
text, so prompts count about as many tokens as a real model's would; the chat template is a
ChatML one with tools (``<tool_call>`` JSON) and thinking (``<think>``), written here. See
``bench/README.md`` ("A real llama-server") for the whole recipe and
``tests/test_llama_server_live.py`` for the checks it feeds.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VOCAB = 8000
EMBED = 320
CONTEXT = 131_072
CHAT_TEMPLATE = """\
{%- if tools %}<|im_start|>system
{% if messages[0].role == 'system' %}{{ messages[0].content }}

{% endif %}# Tools

You may call the functions whose signatures are listed within <tools></tools>:
<tools>{% for tool in tools %}
{{ tool | tojson }}{% endfor %}
</tools>

To call one, answer with a JSON object within <tool_call></tool_call> tags:
<tool_call>
{"name": <function-name>, "arguments": <args-json-object>}
</tool_call><|im_end|>
{% elif messages[0].role == 'system' %}<|im_start|>system
{{ messages[0].content }}<|im_end|>
{% endif %}
{%- for message in messages %}
{%- if message.role == 'user' or (message.role == 'system' and not loop.first) %}\
<|im_start|>{{ message.role }}
{{ message.content }}<|im_end|>
{% elif message.role == 'assistant' %}<|im_start|>assistant
{% if message.reasoning_content %}<think>
{{ message.reasoning_content }}
</think>

{% endif %}{{ message.content or '' }}
{%- for call in message.tool_calls or [] %}{% set f = call.function or call %}
<tool_call>
{"name": "{{ f.name }}", "arguments": \
{% if f.arguments is string %}{{ f.arguments }}{% else %}{{ f.arguments | tojson }}{% endif %}}
</tool_call>{% endfor %}<|im_end|>
{% elif message.role == 'tool' %}<|im_start|>user
<tool_response>
{{ message.content }}
</tool_response><|im_end|>
{% endif %}
{%- endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""
TOOL_CALL = '\n{"name": "read_file", "arguments": {"path": "README.md"}}\n'
CHAINS = {
    "text": ["\n", "Hello", " from", " llama", "<|im_end|>"],
    "think": ["\n", "<think>", "Pondering", "</think>", "Answer", " 42", "<|im_end|>"],
    "tool": ["\n", "<tool_call>", TOOL_CALL, "</tool_call>", "<|im_end|>"],
    "loop": ["\n", "ping", " pong", "ping"],
    "ponder": ["\n", "<think>", "Pondering", " more", "Pondering"],
}
SPECIAL = {  # token: GGUF token type (3: control, 4: user-defined)
    "<|endoftext|>": 3,
    "<|im_start|>": 3,
    "<|im_end|>": 3,
    "<think>": 4,
    "</think>": 4,
    "<tool_call>": 4,
    "</tool_call>": 4,
    "<tool_response>": 4,
    "</tool_response>": 4,
}


def byte_alphabet() -> dict[int, str]:
    """Byte-level BPE's printable stand-in for each byte (as GPT-2 defined it)."""
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    others = [b for b in range(256) if b not in printable]
    table = {b: chr(b) for b in printable}
    table.update({b: chr(256 + n) for n, b in enumerate(others)})
    return table


def train_vocab() -> tuple[list[str], list[str]]:
    """A byte-level BPE vocabulary and its merges, learnt from this repository's text."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    files = sorted(
        str(p)
        for folder in ("mycode_core", "plugins", "docs")
        for p in (ROOT / folder).rglob("*")
        if p.suffix in (".py", ".md") and p.is_file()
    )
    files.append(str(ROOT / "README.md"))
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train(files, trainer)
    import json

    model = json.loads(tokenizer.to_str())["model"]
    tokens = [""] * len(model["vocab"])
    for token, index in model["vocab"].items():
        tokens[index] = token
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    return tokens, merges


def write_model(mode: str, out: Path, tokens: list[str], merges: list[str]) -> None:
    """One model whose replies follow ``CHAINS[mode]``."""
    import gguf
    import numpy as np

    alphabet = byte_alphabet()

    def encoded(text: str) -> str:
        return "".join(alphabet[b] for b in text.encode("utf-8"))

    tokens, types = list(tokens), [1] * len(tokens)
    for word in dict.fromkeys(w for chain in CHAINS.values() for w in chain):
        if word not in SPECIAL and encoded(word) not in tokens:
            tokens.append(encoded(word))
            types.append(1)
    for token, kind in SPECIAL.items():
        tokens.append(token)
        types.append(kind)
    ids = {token: i for i, token in enumerate(tokens)}

    def token_id(text: str) -> int:
        return ids[text] if text in SPECIAL else ids[encoded(text)]

    chain = CHAINS[mode]
    links = list(dict.fromkeys(chain))  # each gets a dimension of its own
    rng = np.random.default_rng(0)
    embed = rng.normal(0, 1, (len(tokens), EMBED)).astype(np.float32)
    embed[:, : len(links)] = 0.0
    output = np.zeros((len(tokens), EMBED), dtype=np.float32)
    for dim, word in enumerate(links):
        embed[token_id(word)] = 0.0
        embed[token_id(word), dim] = 1.0
    for here, after in zip(chain, chain[1:], strict=False):
        output[token_id(after), links.index(here)] = 3.0  # x sqrt(EMBED) after the norm

    writer = gguf.GGUFWriter(str(out), "llama")
    writer.add_name(f"tiny-{mode}")
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(1)
    writer.add_feed_forward_length(64)
    writer.add_head_count(4)
    writer.add_head_count_kv(4)
    writer.add_layer_norm_rms_eps(1e-6)
    writer.add_rope_dimension_count(EMBED // 4)
    writer.add_rope_freq_base(10000.0)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(types)
    writer.add_token_merges(merges)
    writer.add_eos_token_id(ids["<|im_end|>"])
    writer.add_bos_token_id(ids["<|endoftext|>"])
    writer.add_pad_token_id(ids["<|endoftext|>"])
    writer.add_add_bos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    def tensor(name: str, value: Any) -> None:
        writer.add_tensor(name, np.ascontiguousarray(value, dtype=np.float32))

    tensor("token_embd.weight", embed)
    tensor("output_norm.weight", np.ones(EMBED))
    tensor("output.weight", output)
    tensor("blk.0.attn_norm.weight", np.ones(EMBED))
    for name in ("attn_q", "attn_k", "attn_v"):
        tensor(f"blk.0.{name}.weight", rng.normal(0, 0.02, (EMBED, EMBED)))
    tensor("blk.0.attn_output.weight", np.zeros((EMBED, EMBED)))
    tensor("blk.0.ffn_norm.weight", np.ones(EMBED))
    tensor("blk.0.ffn_gate.weight", rng.normal(0, 0.02, (64, EMBED)))
    tensor("blk.0.ffn_up.weight", rng.normal(0, 0.02, (64, EMBED)))
    tensor("blk.0.ffn_down.weight", np.zeros((EMBED, 64)))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    tokens, merges = train_vocab()
    for mode in CHAINS:
        write_model(mode, out / f"tiny-{mode}.gguf", tokens, merges)
        print(out / f"tiny-{mode}.gguf")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
