"""``headersHelper``: a command whose output is an HTTP MCP server's headers (Claude Code's).

For a token that expires (a cloud login, a short-lived JWT), an HTTP or SSE entry may name a
shell command instead of, or besides, fixed ``headers``. It runs each time the connection
opens (a reconnect runs it again), in the workspace, for at most :data:`HELPER_TIMEOUT`
seconds, its whole process group ended with it; its standard output must be a JSON object of
text values, laid over the entry's ``headers``. It is told ``CLAUDE_CODE_MCP_SERVER_NAME`` and
``CLAUDE_CODE_MCP_SERVER_URL``, as in Claude Code. It runs only when its server may start (a
project's server once approved), and a project's helper gets the environment without its
secrets (what ``run_command`` gets), as Claude Code runs a project's helper.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from mycode_core.api import scrub_env, unwatch_group, watch_group

HELPER_TIMEOUT = 10.0


class HelperFailed(Exception):
    """The helper did not give headers; the message says why, in one line."""


def helper_headers(spec: Any, workspace: Path) -> dict[str, str]:
    """Run ``spec.headers_helper`` and return the headers it printed (:class:`HelperFailed`
    when it fails, times out or prints anything but a JSON object of text values)."""
    env = dict(os.environ) if spec.trusted else scrub_env(os.environ)
    env.update(
        CLAUDE_CODE_MCP_SERVER_NAME=spec.name,
        CLAUDE_CODE_MCP_SERVER_URL=spec.url,
        CLAUDE_PROJECT_DIR=str(workspace),
    )
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", spec.headers_helper],
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as exc:
        raise HelperFailed(f"headersHelper could not run: {exc.strerror or exc}") from None
    watch_group(process.pid)  # gone with mycode, even a SIGKILLed one
    try:
        out, err = process.communicate(timeout=HELPER_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise HelperFailed(f"headersHelper did not finish in {HELPER_TIMEOUT:g} s") from None
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # what it left running goes with it
        process.wait()
        unwatch_group(process.pid)
    if process.returncode != 0:
        last = (err.strip().splitlines() or [""])[-1]
        why = f": {last[:200]}" if last else ""
        raise HelperFailed(f"headersHelper exited with {process.returncode}{why}")
    try:
        headers = json.loads(out)
    except ValueError:
        headers = None
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise HelperFailed("headersHelper must print a JSON object of text values")
    return {str(name): value for name, value in headers.items()}
