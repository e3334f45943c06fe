"""Tool names the model sees: ``mcp__<server>__<tool>``, sanitised, at most 64 characters.

Characters outside ``[A-Za-z0-9_-]`` become ``_``. A name that is too long, or that collides
with a name already given to another (server, tool) pair, is cut and given a suffix made from a
hash of the original pair, so the same configuration always yields the same names.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable

MAX_LEN = 64
PREFIX = "mcp"
_BAD = re.compile(r"[^A-Za-z0-9_-]")


def sanitize(text: str) -> str:
    """Replace every character outside ``[A-Za-z0-9_-]`` by ``_`` (empty becomes ``_``)."""
    return _BAD.sub("_", text) or "_"


def _digest(server: str, tool: str, salt: int = 0) -> str:
    blob = f"{server}\0{tool}\0{salt}".encode()
    return hashlib.sha256(blob).hexdigest()[:6]


def base_name(server: str, tool: str) -> str:
    """The preferred name for a tool, before collisions are considered."""
    name = f"{PREFIX}__{sanitize(server)}__{sanitize(tool)}"
    if len(name) > MAX_LEN:
        name = f"{name[: MAX_LEN - 7]}_{_digest(server, tool)}"
    return name


def allocation_order(pair: tuple[str, str]) -> tuple[bool, str, str]:
    """The order names are given in: a tool whose name needs no change first, so it keeps its
    own (``a_b`` stays ``mcp__s__a_b`` beside an ``a.b``, which gets the hash), then by name."""
    server, tool = pair
    return (sanitize(tool) != tool, server, tool)


class NameAllocator:
    """Gives each (server, tool) pair a unique, stable name for the lifetime of a run."""

    def __init__(self, is_taken: Callable[[str], bool] | None = None) -> None:
        self._by_pair: dict[tuple[str, str], str] = {}
        self._taken: set[str] = set()
        self._is_taken = is_taken or (lambda _name: False)

    def name_for(self, server: str, tool: str) -> str:
        """The name of a pair, allocating it on first use."""
        pair = (server, tool)
        if pair in self._by_pair:
            return self._by_pair[pair]
        name = base_name(server, tool)
        salt = 0
        while name in self._taken or self._is_taken(name):
            name = f"{base_name(server, tool)[: MAX_LEN - 7]}_{_digest(server, tool, salt)}"
            salt += 1
        self._by_pair[pair] = name
        self._taken.add(name)
        return name

    def allocate(self, pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """Allocate many pairs in a fixed order (:func:`allocation_order`), so the result does
        not depend on start order."""
        return {pair: self.name_for(*pair) for pair in sorted(pairs, key=allocation_order)}

    def release(self, server: str, tool: str) -> None:
        """Forget a pair (its tool disappeared); its name may be reused later by the same pair."""
        name = self._by_pair.pop((server, tool), None)
        if name is not None:
            self._taken.discard(name)
