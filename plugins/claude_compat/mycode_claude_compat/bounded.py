"""Hook output too long for the model's context: saved, and a preview in its place.

What a hook adds to the conversation (``additionalContext``, a block's reason, plain stdout for
``SessionStart`` and ``UserPromptSubmit``) may be up to 1 MB; as in Claude Code, text over
:data:`MAX_CHARS` is saved to the session's artifacts folder (under ``MYCODE_HOME``, never the
workspace) and the model gets its first :data:`PREVIEW_CHARS` characters and the path, which
``read_file`` opens.
"""

from __future__ import annotations

import os
from typing import Any

from mycode_core.api import replace_atomically

MAX_CHARS = 50_000
PREVIEW_CHARS = 2_000


def bounded(text: str, event: str, context: Any) -> str:
    """``text``, or when longer than :data:`MAX_CHARS` its preview and where the rest is."""
    if len(text) <= MAX_CHARS:
        return text
    try:
        path = context.artifacts_dir / f"hook-{event}-{os.urandom(4).hex()}.txt"
        replace_atomically(path, text.encode("utf-8", "replace"))
    except (OSError, AttributeError) as exc:
        where = f"it could not be saved ({getattr(exc, 'strerror', None) or exc})"
    else:
        where = f"the whole of it is saved at {path} (read it with read_file)"
    return (
        f"{text[:PREVIEW_CHARS]}\n… [the {event} hook's output is {len(text):,} characters; "
        f"{where}]"
    )
