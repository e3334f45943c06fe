"""The arguments typed after a slash command (or a skill invoked as one), filled into its text as
Claude Code fills them in.

``$ARGUMENTS`` is the argument string as typed; ``$ARGUMENTS[N]`` the N-th argument from 0
(split like a shell, quotes removed); ``$N`` the same, except that a text using neither ``$0``
nor ``$ARGUMENTS[N]`` counts ``$1`` as the first argument, as command files written before
Claude Code's 0-based form do (``legacy/$1``); ``$name`` an argument named in the front
matter's ``arguments``. A placeholder with no argument stays as written (``awk '{print $2}'``),
``\\$1`` is a literal ``$1``, and an argument is never expanded again.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_PLACEHOLDER = r"\\\$(?=\d)|\$ARGUMENTS\[\d+\]|\$ARGUMENTS|\$\d+(?!\w)"


def fill_arguments(text: str, arguments: str, names: Sequence[str] = ()) -> tuple[str, bool]:
    """``text`` with its placeholders filled from ``arguments``, and whether it had any."""
    try:
        words = shlex.split(arguments)
    except ValueError:  # unpaired quotes: split on whitespace
        words = arguments.split()
    first = 0 if re.search(r"\$0(?!\d)|\$ARGUMENTS\[\d+\]", text) else 1
    slots = {"$ARGUMENTS": arguments} | dict(zip([f"${n}" for n in names], words, strict=False))
    for index, word in enumerate(words):
        slots |= {f"$ARGUMENTS[{index}]": word, f"${index + first}": word}
    valid = sorted((n for n in names if re.fullmatch(r"[A-Za-z_][\w-]*", n)), key=len)
    pattern = re.compile(_PLACEHOLDER + "".join(f"|\\${n}(?![\\w-])" for n in reversed(valid)))
    found = any(match.group(0) != "\\$" for match in pattern.finditer(text))
    return pattern.sub(lambda m: "$" if m[0] == "\\$" else slots.get(m[0], m[0]), text), found
