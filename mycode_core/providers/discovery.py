"""Asking an OpenAI-compatible server for a model's context window and reply cap (stdlib, short
timeouts, any failure means unknown); answers are cached per server and model."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

MODEL_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")
OUTPUT_KEYS = ("max_completion_tokens", "max_output_tokens")


class Limits(NamedTuple):
    """A model's window and reply cap (``None``: not said)."""

    window: int | None
    output: int | None = None


def ask_json(url: str, api_key: str | None, timeout: float, body: Any = None) -> Any:
    """The JSON the server answers at ``url``, or ``None`` (any failure means unknown)."""
    import urllib.request

    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    headers.update({"Authorization": f"Bearer {api_key}"} if api_key else {})
    data = json.dumps(body).encode() if body is not None else None
    try:
        request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310 - http(s)
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            return json.loads(response.read(2_000_000))
    except (OSError, ValueError):  # URLError is an OSError
        return None


def _positive(value: Any) -> int | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
        return int(value)
    return int(value) if isinstance(value, str) and value.isdigit() and int(value) else None


def _first_positive(values: Iterable[Any]) -> int | None:
    return next(filter(None, map(_positive, values)), None)


def _dict(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _entries(data: Any, model: str) -> list[dict[str, Any]]:
    """``model``'s entries in a ``/v1/models`` answer (the only entry if just one)."""
    entries = _dict(data).get("data")
    entries = [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []
    return [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])


def from_models_list(data: Any, model: str) -> Limits:
    """``model``'s limits in a ``/v1/models`` answer (the only entry if just one)."""
    window = output = None
    for entry in _entries(data, model):
        provider, meta = _dict(entry.get("top_provider")), _dict(entry.get("meta"))
        told = (provider.get("context_length"), meta.get("n_ctx"), meta.get("n_ctx_train"))
        window = window or _first_positive((*map(entry.get, MODEL_KEYS), *told))
        capped = (*map(entry.get, OUTPUT_KEYS), provider.get("max_completion_tokens"))
        output = output or _first_positive(capped)
    return Limits(window, output)


def from_props(data: Any) -> Limits:
    """llama.cpp's running context size and reply cap (``n_predict``) from ``/props``."""
    settings = _dict(_dict(data).get("default_generation_settings"))
    params = settings.get("params")
    output = _positive((params if isinstance(params, dict) else settings).get("n_predict"))
    return Limits(_positive(settings.get("n_ctx")) or _positive(_dict(data).get("n_ctx")), output)


def from_ollama_show(data: Any) -> int | None:
    """Ollama's context from ``/api/show``: a ``num_ctx`` parameter, else the model's own."""
    if not isinstance(data, dict):
        return None
    if match := re.search(r"^\s*num_ctx\s+(\d+)", str(data.get("parameters") or ""), re.M):
        return int(match.group(1))
    info = _dict(data.get("model_info"))
    return _first_positive(v for k, v in info.items() if str(k).endswith(".context_length"))


NO_TOOLS = (
    "the server's chat template takes no tools (/props: chat_template_caps.supports_tools "
    "false), so the model's tool calls come back as text: start llama-server with --jinja and "
    "the model's own template (not a --chat-template without tools)"
)


def discover_context_window(
    base_url: str, model: str, api_key: str | None = None, timeout: float = 2.0, caps: Any = None
) -> Limits:
    """``model``'s limits from the server at ``base_url``; ``caps`` gets its template caps."""
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    listed = ask_json(f"{base}/models", api_key, timeout)
    found, output = from_models_list(listed, model)
    data = _dict(listed).get("data")
    first = data[0] if isinstance(data, list) and data else None
    owned = str(_dict(first).get("owned_by", ""))
    if found is None or owned == "llamacpp":
        props = ask_json(f"{root}/props", api_key, timeout)
        told = from_props(props)
        found, output = told.window or found, output or told.output
        if caps is not None:
            caps.update(_dict(_dict(props).get("chat_template_caps")))
    if found is None and owned in ("library", "ollama", ""):
        found = from_ollama_show(ask_json(f"{root}/api/show", api_key, timeout, {"model": model}))
    return Limits(found, output if found else None)


CACHE_FILE = ("cache", "windows.json")  # {"<url> <model>": n | [n, cap] | [n, cap, claimed]}


def _cache_key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"


def _cache(home: Path) -> dict[Any, Any]:
    try:
        return _dict(json.loads(home.joinpath(*CACHE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError):
        return {}


def _entry(home: Path, base_url: str, model: str) -> list[Any]:
    value = _cache(home).get(_cache_key(base_url, model))
    value = value if isinstance(value, list) and len(value) in (2, 3) else [value]
    return [_positive(item) for item in (*value, None, None)[:3]]


def cached_window(home: Path, base_url: str, model: str) -> Limits:
    """The limits an earlier run found for this server and model (``None``s if none)."""
    window, output, _ = _entry(home, base_url, model)
    return Limits(window, output)


def claimed_window(home: Path, base_url: str, model: str) -> int | None:
    """The bigger window the metadata claimed when the cached one was learned from an error."""
    window, _, claimed = _entry(home, base_url, model)
    return claimed if window else None


def remember_window(
    home: Path, base_url: str, model: str, window: Limits | int | None, claimed: int | None = None
) -> None:
    """Keep (``None``: forget) this server's limits and ``claimed`` window for later runs."""
    from mycode_core.safeopen import replace_atomically

    path, data = home.joinpath(*CACHE_FILE), _cache(home)
    limits = window if isinstance(window, tuple) else Limits(window)
    value: Any = list(limits) if limits.output else limits.window
    if claimed and limits.window:
        value = [*limits, claimed]
    if data.get(key := _cache_key(base_url, model)) == value:
        return
    data[key] = value
    text = json.dumps({k: v for k, v in data.items() if v}).encode()
    with contextlib.suppress(OSError):  # only a cache
        replace_atomically(path, text, 0o600, create_parents=True, follow_folder_links=True)
