"""Recognising a secret in a note: ``remember`` refuses it, so no key reaches the memory store
(and from there every later session's prompt).

The patterns are the well-known credential shapes (cloud and API keys, tokens, private keys,
JWTs, passwords in URLs) and ``NAME = value`` assignments whose name says it is a secret. A
reference such as ``$OPENAI_API_KEY`` or ``<your token>`` is not a secret.
"""

from __future__ import annotations

import re

_SHAPES: tuple[tuple[str, str], ...] = (
    ("a private key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"),
    ("an AWS access key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
    ("an API key", r"\bsk-(?:[A-Za-z]+-)?[A-Za-z0-9_-]{20,}"),
    ("a GitHub token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{20,})"),
    ("a GitLab token", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("a Slack token", r"\bxox[abeprs]-[A-Za-z0-9-]{10,}"),
    ("a Google API key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("a Hugging Face token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("a Stripe key", r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("a JSON Web Token", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("a bearer token", r"\b[Bb]earer\s+[A-Za-z0-9._~+/-]{20,}=*"),
    ("a password in a URL", r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s/:@]+:[^\s/@$<{]+@"),
)
_SHAPE_RES = tuple((label, re.compile(pattern)) for label, pattern in _SHAPES)
_ASSIGNMENT = re.compile(
    r"""(?ix)
    \b(?P<name>[a-z0-9_.-]*(?:password|passwd|pwd|secret|token|api[_-]?key|apikey
        |access[_-]?key|private[_-]?key|client[_-]?secret|credentials?)[a-z0-9_.-]*)
    ["']?\s*(?:=|:)\s*["']?(?P<value>[^\s"',;]{6,})
    """
)
_REFERENCE = re.compile(r"^(?:\$|%|<|\{|\*{3}|x{4}|\.\.\.)", re.I)


def find_secret(text: str) -> str | None:
    """What kind of secret ``text`` holds (``"an AWS access key"``...), or ``None``."""
    for label, pattern in _SHAPE_RES:
        if pattern.search(text):
            return label
    for match in _ASSIGNMENT.finditer(text):
        value = match.group("value")
        if not _REFERENCE.match(value):
            return f"a value for {match.group('name')}"
    return None
