"""Claude Code's ``{"type": "http"}`` hooks: the hook input is POSTed as JSON to ``url`` and
the answer is read as a command hook's stdout (exit code 0).

A status outside 2xx, a connection that fails and a timeout are non-blocking errors, as in
Claude Code (to block, answer 2xx with ``{"decision": "block", ...}``). A header value's
``$NAME`` / ``${NAME}`` takes the environment variable only when ``allowedEnvVars`` lists it
(else nothing), so a hook file cannot send the environment's secrets where it likes.
"""

from __future__ import annotations

import os
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from mycode_claude_compat.names import claude_json
from mycode_claude_compat.sources import CommandHook

MAX_BODY = 1_000_000
_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")


def header_value(value: str, allowed: tuple[str, ...]) -> str:
    """``value`` with each ``$NAME`` replaced by that variable when ``allowed`` lists it."""

    def variable(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        return os.environ.get(name, "") if name in allowed else ""

    return _VARIABLE.sub(variable, value)


def post_hook(
    hook: CommandHook, payload: dict[str, Any], run: Any, parse: Callable[[Any], None]
) -> Any:
    """POST ``payload`` to the hook's URL; ``run`` (a ``HookRun``) filled in as a command's."""
    assert hook.url is not None
    headers = {"Content-Type": "application/json"}
    headers.update({name: header_value(value, hook.allowed_env) for name, value in hook.headers})
    request = urllib.request.Request(
        hook.url, data=claude_json(payload).encode(), headers=headers, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=hook.timeout) as response:  # noqa: S310
            body = response.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        run.code = 1
        run.stderr = f"HTTP {exc.code} {exc.reason}"
        return run
    except TimeoutError:
        run.timed_out = True
        return run
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        run.error = f"cannot reach {hook.url}: {reason}"
        return run
    run.code = 0
    run.truncated = len(body) > MAX_BODY
    run.stdout = body[:MAX_BODY].decode("utf-8", "replace")
    parse(run)
    return run
