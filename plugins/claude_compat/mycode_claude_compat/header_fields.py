"""HTTP header fields of an Agent Plugins remote MCP server (its §7.2.1): which are valid, and
which the client owns.

Valid is RFC 9110's grammar as mycode's HTTP client can send it: a name is a token; a value is
visible ASCII with spaces and tabs inside, none at either end (httpx sends ASCII only, and a
control character such as ``\\x01`` or ``\\x7f`` went out as it was). Headers the client
generates to implement HTTP or MCP take precedence over configured ones of the same
case-insensitive name: a configured ``Host`` or ``Transfer-Encoding`` was sent and broke the
connection, so such a header is dropped, with a warning. mycode sets no authorization header
(it does no OAuth for these servers), so a configured ``Authorization`` is sent as written.
"""

from __future__ import annotations

import re

_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x21-\x7e \t]*[\x21-\x7e])?)?")

OWNED = frozenset(
    {
        # HTTP's own framing and connection handling
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "upgrade",
        # what the MCP transports set on their requests
        "accept",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
    }
)
"""Lower-case names of the headers the client sets itself (configured ones are dropped)."""


def field_problem(name: str, value: str) -> str | None:
    """Why ``name: value`` is not a valid HTTP header field, or ``None``."""
    if not _NAME.fullmatch(name):
        return f"header name {name!r} is not a valid HTTP header name"
    if _VALUE.fullmatch(value):
        return None
    if value != value.strip(" \t"):
        why = "spaces or tabs at its start or end"
    else:
        bad = next(ch for ch in value if not (" " <= ch <= "~" or ch == "\t"))
        why = "a control character" if bad < " " or bad == "\x7f" else "a non-ASCII character"
        why += f" ({bad!r})"
    return f"header {name!r} has a value that is not a valid HTTP header value: {why}"
