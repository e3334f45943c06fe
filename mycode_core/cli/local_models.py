"""Local model servers found when no model is configured (issue 20, SPEC §2).

With no model, ``mycode`` and ``mycode doctor`` ask the usual local servers — Ollama (11434),
llama.cpp (8080), LM Studio (1234), vLLM (8000), all on ``127.0.0.1`` — for ``/v1/models``, in
parallel, within :data:`BUDGET` seconds in all. Only then: a run with a model configured never
probes. A ``base_url`` you set without a model is asked first. ``MYCODE_LOCAL_SERVERS``
replaces the list (comma-separated base URLs, each optionally ``NAME=URL``; set but empty
probes nothing) — meant for tests and unusual set-ups. Your API key goes to "your server"
only (a ``llama-server --api-key`` asks for it even on ``/v1/models``), never to the others;
a server of yours that refuses the key is named as such.

An answer that is not an OpenAI-style model list (not JSON, no ``data`` list, no string ids)
is not a server to offer; nothing here raises.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mycode_core.safeopen import replace_atomically

BUDGET = 0.3
"""Seconds for the whole probe (every server at once)."""
PROBE_ENV = "MYCODE_LOCAL_SERVERS"
KNOWN = (("Ollama", 11434), ("llama.cpp", 8080), ("LM Studio", 1234), ("vLLM", 8000))
MAX_BODY = 1 << 20
MAX_MODELS = 50
YOURS = "your server"
"""The name of the ``base_url`` you set without a model, asked first."""


@dataclass(frozen=True)
class LocalServer:
    """A server that answered ``/v1/models`` with a model list."""

    name: str
    url: str
    """The base URL to pass as ``--base-url`` (ends in ``/v1``)."""
    models: list[str] = field(default_factory=list)
    refused: int | None = None
    """``401``/``403`` when your server refused the API key (sent or missing): it lists no
    model until it gets the right key."""
    loading: bool = False
    """The server answered llama-server's ``503 Loading model`` (to every request, until its
    model is in memory): it lists no model yet."""

    def as_json(self) -> dict[str, Any]:
        """``{name, url, models}`` (and ``refused`` or ``loading``) for ``mycode doctor``."""
        answer: dict[str, Any] = {"name": self.name, "url": self.url, "models": list(self.models)}
        if self.refused:
            answer["refused"] = self.refused
        if self.loading:
            answer["loading"] = True
        return answer


def candidates() -> list[tuple[str, str]]:
    """``(name, base_url)`` of every server to probe, from :data:`PROBE_ENV` or :data:`KNOWN`."""
    raw = os.environ.get(PROBE_ENV)
    if raw is None:
        return [(name, f"http://127.0.0.1:{port}/v1") for name, port in KNOWN]
    out = []
    for entry in raw.split(","):
        name, sep, url = entry.strip().partition("=")
        if not sep:
            name, url = "local server", name
        if url.strip().startswith(("http://", "https://")):
            out.append((name.strip() or "local server", url.strip().rstrip("/")))
    return out


def parse_models(data: Any) -> list[str] | None:
    """The model ids of a ``/v1/models`` answer, or ``None`` when it is not one."""
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    ids = []
    for entry in data["data"]:
        model = entry.get("id") if isinstance(entry, dict) else None
        if isinstance(model, str) and model.strip() and len(model) <= 200:
            ids.append(model.strip())
    if data["data"] and not ids:
        return None
    return list(dict.fromkeys(ids))[:MAX_MODELS]


def says_loading(error: urllib.error.HTTPError) -> bool:
    """Whether an error answer is llama-server's ``503 Loading model``."""
    try:
        return b"Loading model" in error.read(4096)
    except Exception:  # noqa: BLE001 - a broken answer is no server to name
        return False


def _ask(
    name: str, url: str, deadline: float, found: dict[str, LocalServer], api_key: str | None = None
) -> None:
    timeout = deadline - time.monotonic()
    if timeout <= 0:
        return
    try:
        request = urllib.request.Request(url + "/models", method="GET")
        if api_key:
            request.add_header("Authorization", f"Bearer {api_key}")
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            if response.status != 200:
                return
            data = json.loads(response.read(MAX_BODY))
    except urllib.error.HTTPError as exc:
        if name == YOURS and exc.code in (401, 403):
            found[url] = LocalServer(name, url, [], refused=exc.code)
        elif exc.code == 503 and says_loading(exc):
            found[url] = LocalServer(name, url, [], loading=True)
        return
    except Exception:  # noqa: BLE001 - refused, timed out, garbage: not a server to offer
        return
    models = parse_models(data)
    if models is not None:
        found[url] = LocalServer(name, url, models)


def local_servers(
    budget: float = BUDGET, configured: str | None = None, api_key: str | None = None
) -> list[LocalServer]:
    """Every local server that answered within ``budget`` seconds, in :func:`candidates` order;
    ``configured`` (the ``base_url`` you set, with no model) is asked first, as "your server",
    with ``api_key`` (the key you set: for that server only)."""
    targets = candidates()
    if configured:
        url = configured.rstrip("/")
        targets = [(YOURS, url), *((n, u) for n, u in targets if u != url)]
    if not targets:
        return []
    deadline = time.monotonic() + budget
    found: dict[str, LocalServer] = {}
    threads = [
        threading.Thread(
            target=_ask,
            args=(name, url, deadline, found, api_key if name == YOURS else None),
            daemon=True,
        )
        for name, url in targets
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    snapshot = dict(found)
    return [snapshot[url] for _name, url in targets if url in snapshot]


def _shown(models: list[str], limit: int = 5) -> str:
    more = f", +{len(models) - limit} more" if len(models) > limit else ""
    return ", ".join(models[:limit]) + more


def no_model_line(servers: list[LocalServer]) -> str | None:
    """The ``-p`` error when no model is configured but local servers answered, else ``None``."""
    usable = [server for server in servers if server.models]
    if not servers:
        return None
    refused = next((s for s in servers if s.refused), None)
    if refused is not None and not usable:
        return (
            f"no model configured; {refused.name} at {refused.url} refused the API key "
            f"(HTTP {refused.refused}): pass the key it was started with (--api-key KEY or "
            "MYCODE_API_KEY) and --model NAME"
        )
    loading = [server for server in servers if server.loading]
    if loading and not usable:
        names = ", ".join(f"{s.name} at {s.url}" for s in loading)
        return (
            f"no model configured; {names} is still loading its model (HTTP 503): once it is "
            f"ready, use it with --model NAME --base-url {loading[0].url} (NAME as "
            f"{loading[0].url}/models lists it)"
        )
    if not usable:
        names = ", ".join(f"{s.name} at {s.url}" for s in servers)
        return f"no model configured; {names} answered but serves no model yet (e.g. `ollama pull`)"
    found = "; ".join(f"{s.name} at {s.url} ({_shown(s.models)})" for s in usable)
    first = usable[0]
    return (
        f"no model configured; found {found}: use it with "
        f"--model {first.models[0]} --base-url {first.url}"
    )


def remember(home: Path, model: str, base_url: str) -> Path:
    """Set ``model`` and ``base_url`` at the top of the user config (other settings kept)."""
    path = home / "config.toml"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        lines = []
    kept, in_table = [], False
    for line in lines:
        stripped = line.strip()
        in_table = in_table or stripped.startswith("[")
        key = stripped.split("=", 1)[0].strip()
        if not in_table and "=" in stripped and key in ("model", "base_url"):
            continue
        kept.append(line)
    head = [
        "# chosen from the local servers mycode found (issue 20)",
        f"model = {json.dumps(model)}",
        f"base_url = {json.dumps(base_url)}",
    ]
    text = "\n".join([*head, *kept]) + "\n"
    # atomically (a write cut short keeps the old file), through a symlink (a dotfiles repo)
    target = Path(os.path.realpath(path))
    replace_atomically(target, text.encode("utf-8"), create_parents=True, follow_folder_links=True)
    return path


def choose(servers: list[LocalServer], home: Path) -> tuple[str, str] | None:
    """Ask which local model to use (interactive); remember the answer; ``None`` if declined."""
    import click

    options = [(server, model) for server in servers for model in server.models[:10]]
    if not options:
        line = no_model_line(servers)
        if line:
            click.echo(f"mycode: {line}", err=True)
        return None
    click.echo("No model is configured. Local servers found:")
    for number, (server, model) in enumerate(options, 1):
        click.echo(f"  {number}. {model}  ({server.name}, {server.url})")
    click.echo("  0. none of them (configure a model yourself)")
    try:
        picked = click.prompt(
            "Use which one", type=click.IntRange(0, len(options)), default=1, show_default=True
        )
    except (click.Abort, EOFError):
        return None
    if not picked:
        return None
    server, model = options[picked - 1]
    try:
        where = remember(home, model, server.url)
    except OSError as exc:
        click.echo(f"mycode: could not save the choice: {exc.strerror or exc}", err=True)
    else:
        click.echo(f"Saved in {where}: model = {model!r}, base_url = {server.url!r}")
    return model, server.url
