"""What ``mycode doctor`` checks for the core: model, base URL reachability, API key, home.

:func:`core_report` never prints a key and never raises: each problem is one line in
``problems`` that says what to fix.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

REACH_TIMEOUT = 5.0


def _key_source(settings: Any) -> str | None:
    """Where the API key comes from: ``flag`` (``--api-key``), the environment variable, or
    ``config``; ``None``: no key (the layer that won decides, flags over environment)."""
    env = next((n for n in ("MYCODE_API_KEY", "OPENAI_API_KEY") if os.environ.get(n)), None)
    for layer, data in reversed(getattr(settings, "layers", None) or []):
        if data.get("api_key"):
            return {"cli": "flag", "env": env}.get(layer) or "config"
    return env


def reachability(
    base_url: str, api_key: str | None, timeout: float = REACH_TIMEOUT
) -> dict[str, Any]:
    """``GET {base_url}/models``: ``reachable`` is true when the server answered at all."""
    url = base_url.rstrip("/") + "/models"
    request = urllib.request.Request(url, method="GET")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            answer: dict[str, Any] = {"url": url, "reachable": True, "status": response.status}
            entries = _model_entries(response.read(1 << 20))
            if entries is not None:
                answer["models"] = [
                    str(e["id"])
                    for e in entries
                    if isinstance(e, dict) and isinstance(e.get("id"), str)
                ]
                if _serves_any_name(entries):
                    answer["any_model"] = True
            return answer
    except urllib.error.HTTPError as exc:
        from mycode_core.cli.local_models import says_loading

        loading = {"loading": True} if exc.code == 503 and says_loading(exc) else {}
        return {"url": url, "reachable": True, "status": exc.code, **loading}
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return {"url": url, "reachable": False, "error": str(reason)}


def _model_entries(body: bytes) -> list[Any] | None:
    """The ``data`` entries of an OpenAI-style ``/models`` answer, ``None`` when it is not one."""
    import json

    try:
        data = json.loads(body)
    except ValueError:
        return None
    entries = data.get("data") if isinstance(data, dict) else None
    return entries if isinstance(entries, list) else None


def _serves_any_name(entries: list[Any]) -> bool:
    """Whether the ``/models`` entries are a single-model ``llama-server``'s: one entry owned
    by ``llamacpp`` with its ``meta`` (a router's entries carry a ``status`` instead). Such a
    server answers a request for any model name with the model it loaded."""
    if len(entries) != 1 or not isinstance(entries[0], dict):
        return False
    entry = entries[0]
    return entry.get("owned_by") == "llamacpp" and "meta" in entry and "status" not in entry


def _drops_tools(base_url: str, settings: Any) -> bool:
    """Whether llama.cpp's ``/props`` says its chat template cannot take tools (the tools a
    request offers are dropped: ``--chat-template chatml``)."""
    from mycode_core.providers.discovery import ask_json

    root = base_url.rstrip("/").removesuffix("/v1")
    props = ask_json(f"{root}/props", getattr(settings, "api_key", None), REACH_TIMEOUT)
    caps = props.get("chat_template_caps") if isinstance(props, dict) else None
    return isinstance(caps, dict) and caps.get("supports_tools") is False


def home_status(home: Path) -> dict[str, Any]:
    """Whether ``MYCODE_HOME`` is a folder mycode can write."""
    from mycode_core.config import ConfigError, ensure_home

    try:
        ensure_home(home)
    except ConfigError as exc:
        return {"path": str(home), "writable": False, "error": str(exc)}
    return {"path": str(home), "writable": True}


def core_report(settings: Any, home: Path) -> tuple[dict[str, Any], list[str]]:
    """The core's part of ``mycode doctor`` and the problems it found."""
    from mycode_core.pricing import accepts_images
    from mycode_core.providers.discovery import NO_TOOLS

    problems: list[str] = []
    model = getattr(settings, "model", None) if settings is not None else None
    scripted = bool(model) and str(model).startswith("scripted:")
    if not model:
        problems.append("no model configured: pass --model NAME or set MYCODE_MODEL")
    base_url = getattr(settings, "base_url", None) if settings is not None else None
    source = _key_source(settings)
    entry = (getattr(settings, "models", None) or {}).get(model) if model else None
    report: dict[str, Any] = {
        "model": {
            "name": model,
            "provider": "scripted" if scripted else "openai-compatible",
            "images": bool(model) and accepts_images(settings),  # sent to it (README: images)
            "request": dict(getattr(entry, "request", None) or {}),
        },
        "api_key": {"present": source is not None, "source": source},
        "home_folder": home_status(home),
    }
    if not report["home_folder"]["writable"]:
        problems.append(report["home_folder"]["error"])
    if scripted or not model:
        report["base_url"] = {"url": base_url, "checked": False}
        return report, problems
    if not base_url and source is None:
        problems.append(
            "no API key: set MYCODE_API_KEY or OPENAI_API_KEY (or pass --api-key), or point "
            "--base-url at a local server"
        )
    target = base_url or "https://api.openai.com/v1"
    reach = reachability(target, getattr(settings, "api_key", None))
    report["base_url"] = {"checked": True, **reach}
    if not reach["reachable"]:
        problems.append(f"cannot reach the model server at {target}: {reach.get('error')}")
    elif reach.get("models") and str(model) not in reach["models"] and not reach.get("any_model"):
        shown = ", ".join(reach["models"][:8]) + (", …" if len(reach["models"]) > 8 else "")
        problems.append(
            f"the server at {target} does not list the model {model!r} (it lists: {shown}); "
            "pass --model with one of them"
        )
    elif reach.get("loading"):
        problems.append(
            f"the server at {target} is still loading its model (HTTP 503 Loading model): "
            "a run waits for it (up to 5 minutes); check again once it is ready"
        )
    elif reach.get("any_model") and _drops_tools(target, settings):
        problems.append(f"the server at {target}: {NO_TOOLS}")
    elif reach.get("status") in (401, 403):
        problems.append(
            f"the server at {target} rejected the API key (HTTP {reach['status']}): pass "
            "--api-key or set MYCODE_API_KEY / OPENAI_API_KEY"
        )
    return report, problems
