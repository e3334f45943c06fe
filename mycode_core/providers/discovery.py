"""Asking an OpenAI-compatible server how big the model's context window is.

Servers that tell: vLLM (``/v1/models`` entries carry ``max_model_len``), llama.cpp
(``/props`` → ``default_generation_settings.n_ctx``, the running context; ``/v1/models``
→ ``meta.n_ctx_train``, the trained one), Ollama (``/api/show`` → ``num_ctx`` in its
parameters, else ``<arch>.context_length`` in ``model_info``), OpenRouter and others
(``context_length`` / ``context_window`` / ``max_context_length`` on the model entry).
Stdlib only, short timeouts, every failure means "unknown". What a server said is cached per
base URL and model under ``MYCODE_HOME`` (:func:`cached_window`), so a run knows its window
before it asks again — in the background, after the first request (issue 24).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MODEL_KEYS = ("max_model_len", "context_length", "context_window", "max_context_length")


def _get(url: str, api_key: str | None, timeout: float, body: Any = None) -> Any:
    import urllib.request

    headers = {"Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310 - http(s) only
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
        return json.loads(response.read(2_000_000))


def _positive(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float) and value > 0:
        return int(value)
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def from_models_list(data: Any, model: str) -> int | None:
    """The window of ``model`` in a ``/v1/models`` answer (the only entry if just one)."""
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return None
    entries = [e for e in entries if isinstance(e, dict)]
    chosen = [e for e in entries if e.get("id") == model] or (entries if len(entries) == 1 else [])
    for entry in chosen:
        for key in MODEL_KEYS:
            value = _positive(entry.get(key))
            if value:
                return value
        provider = entry.get("top_provider")
        if isinstance(provider, dict) and _positive(provider.get("context_length")):
            return _positive(provider.get("context_length"))
        meta = entry.get("meta")
        if isinstance(meta, dict):
            value = _positive(meta.get("n_ctx")) or _positive(meta.get("n_ctx_train"))
            if value:
                return value
    return None


def from_props(data: Any) -> int | None:
    """llama.cpp's running context size from ``/props``."""
    if not isinstance(data, dict):
        return None
    settings = data.get("default_generation_settings")
    if isinstance(settings, dict) and _positive(settings.get("n_ctx")):
        return _positive(settings.get("n_ctx"))
    return _positive(data.get("n_ctx"))


def from_ollama_show(data: Any) -> int | None:
    """Ollama's context from ``/api/show``: a ``num_ctx`` parameter, else the model's own."""
    if not isinstance(data, dict):
        return None
    parameters = data.get("parameters")
    if isinstance(parameters, str):
        match = re.search(r"^\s*num_ctx\s+(\d+)", parameters, re.M)
        if match:
            return int(match.group(1))
    info = data.get("model_info")
    if isinstance(info, dict):
        for key, value in info.items():
            if str(key).endswith(".context_length") and _positive(value):
                return _positive(value)
    return None


def discover_context_window(
    base_url: str, model: str, api_key: str | None = None, timeout: float = 2.0
) -> int | None:
    """Ask the server at ``base_url`` (``…/v1``) for ``model``'s window; ``None`` if it
    does not say. llama.cpp's running ``n_ctx`` wins over what ``/v1/models`` reports."""
    base = base_url.rstrip("/")
    root = base[: -len("/v1")] if base.endswith("/v1") else base
    found: int | None = None
    try:
        listed = _get(f"{base}/models", api_key, timeout)
    except (OSError, ValueError):  # URLError is an OSError
        listed = None
    found = from_models_list(listed, model) if listed is not None else None
    owned = ""
    if isinstance(listed, dict) and isinstance(listed.get("data"), list) and listed["data"]:
        first = listed["data"][0]
        owned = str(first.get("owned_by", "")) if isinstance(first, dict) else ""
    if found is None or owned == "llamacpp":
        try:
            props = from_props(_get(f"{root}/props", api_key, timeout))
        except (OSError, ValueError):  # URLError is an OSError
            props = None
        if props:
            return props
    if found is None and owned in ("library", "ollama", ""):
        try:
            found = from_ollama_show(_get(f"{root}/api/show", api_key, timeout, {"model": model}))
        except (OSError, ValueError):  # URLError is an OSError
            found = None
    return found


CACHE_FILE = ("cache", "windows.json")
"""Where discovered windows are kept, under ``MYCODE_HOME``: ``{"<base url> <model>": n}``."""


def _cache_key(base_url: str, model: str) -> str:
    return f"{base_url.rstrip('/')} {model}"


def cached_window(home: Path, base_url: str, model: str) -> int | None:
    """The window found for this server and model by an earlier run, or ``None``."""
    try:
        data = json.loads((home.joinpath(*CACHE_FILE)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(_cache_key(base_url, model)) if isinstance(data, dict) else None
    return _positive(value)


def remember_window(home: Path, base_url: str, model: str, window: int | None) -> None:
    """Keep (or, with ``None``, forget) this server's window for later runs; written
    atomically, failures ignored (it is only a cache)."""
    import os
    import tempfile

    path = home.joinpath(*CACHE_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    key = _cache_key(base_url, model)
    if data.get(key) == window:
        return
    if window:
        data[key] = int(window)
    else:
        data.pop(key, None)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".windows-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh)
        os.replace(tmp, path)
    except OSError:
        return
