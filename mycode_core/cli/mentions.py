"""``@path`` in a prompt (issue 20): the file's text is inlined, an image is attached.

A text file inside the workspace is inlined as a ``<mentioned-file path="…">`` block — at most
:data:`MAX_LINES` lines and :data:`MAX_BYTES` bytes, with a note saying what was left out. A
PNG, JPEG, GIF or WebP image (checked by its bytes, not its name) becomes an ``image_url`` content
part for a model that takes images (:func:`~mycode_core.pricing.accepts_images`), else a clear
line. In an interactive session a pasted absolute image path (a file dragged into the terminal)
counts too.
Paths go through the workspace boundary; a path that does not exist is left as typed (an
``@handle`` is not a file, nor an import alias ``@/components/x``, outside the workspace
too). Every refusal is one notice line. An attached image is also kept under the session's
artifacts (by its hash) and named in the transcript, for ``--resume``.

What the user types is the command line's to read: :func:`expand` is the
:data:`~mycode_core.runtime.runner_base.PromptExpander` the CLI (and the testing kit) hands
the runner; a child agent uses its parent's.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from mycode_core.paths import BoundaryError, resolve_in_workspace
from mycode_core.pricing import accepts_images
from mycode_core.runtime.messages import Expansion
from mycode_core.safeopen import open_read

MAX_LINES = 2000
MAX_BYTES = 100_000
MAX_IMAGE_BYTES = 20 * 1024 * 1024
"""The largest image a user message attaches."""
_MAGIC = {b"\x89PNG\r\n\x1a\n": "image/png", b"\xff\xd8\xff": "image/jpeg", b"GIF8": "image/gif"}
_AT_PATH = re.compile(r"(?<![\w@])@([\w./~-][\w./~-]*)")
_PASTED = re.compile(r"(?:^|(?<=\s))['\"]?((?:/|~/)[^\s'\"]+\.(?:png|jpe?g|gif|webp))['\"]?", re.I)
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")


def image_type(head: bytes) -> str | None:
    """The MIME type of PNG, JPEG, GIF or WebP bytes, else ``None``."""
    for magic, mime in _MAGIC.items():
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_part(mime: str, data: bytes) -> dict[str, Any]:
    """An ``image_url`` content part holding ``data``."""
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return {"type": "image_url", "image_url": {"url": url}}


def read_bytes(path: Path, limit: int) -> bytes:
    """At most ``limit`` bytes of ``path``, opened following no symlink."""
    fd = open_read(path)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(limit)


def _inline(name: str, path: Path, context: Any) -> tuple[str, str | None]:
    data = read_bytes(path, MAX_BYTES + 1)
    if b"\0" in data[:8192]:
        return f"[{name} is a binary file: not inlined]", f"@{name} is a binary file: not inlined"
    text = data[:MAX_BYTES].decode("utf-8", errors="replace")
    lines = text.splitlines()
    note = None
    if len(data) > MAX_BYTES or len(lines) > MAX_LINES:
        kept = lines[:MAX_LINES]
        if len(data) > MAX_BYTES:
            kept = kept[:-1] or kept  # the last line may be cut mid-way
        total = os.stat(path).st_size
        note = (
            f"@{name}: inlined the first {len(kept):,} lines ({MAX_LINES:,} lines / "
            f"{MAX_BYTES // 1000} KB at most) of a {total:,}-byte file"
        )
        text = "\n".join(kept) + f"\n[… cut here: read_file {name} with an offset for the rest]"
    else:  # the model has seen it whole: as good as a read_file of it
        context.shown_files[str(path)] = hashlib.sha256(data).hexdigest()
    return f'<mentioned-file path="{name}">\n{text.rstrip(chr(10))}\n</mentioned-file>', note


def _image(name: str, path: Path, allowed: bool, out: Expansion, context: Any) -> None:
    size = os.stat(path).st_size
    if size > MAX_IMAGE_BYTES:
        mb = size / (1024 * 1024)
        out.notes.append(f"@{name} is {mb:.0f} MB, over the {MAX_IMAGE_BYTES >> 20} MB image limit")
        return
    data = read_bytes(path, MAX_IMAGE_BYTES + 1)
    mime = image_type(data[:16])
    if mime is None:
        out.notes.append(f"@{name} is not a PNG, JPEG, GIF or WebP image: not attached")
        return
    if not allowed:
        out.notes.append(
            f"@{name} not attached: this model does not take images (set images = true, or "
            f'[models."NAME"] images = true, if it does)'
        )
        return
    out.images.append(image_part(mime, data))
    out.text += f"\n\n[image attached: {name}]"
    try:  # a copy under MYCODE_HOME, so a resumed session sends the image again
        copy = Path(context.artifacts_dir) / "images" / hashlib.sha256(data).hexdigest()[:32]
        copy.parent.mkdir(exist_ok=True)
        if not copy.exists():
            copy.write_bytes(data)
        out.kept.append({"name": name, "path": str(copy)})
    except OSError as exc:
        out.notes.append(f"@{name} is not kept for --resume: {exc.strerror or exc}")


def _names_a_file(raw: str, context: Any) -> bool:
    """Whether ``raw`` (refused by the workspace boundary) names something that exists, other
    than ``/`` itself: a path that does not exist is left as typed, outside the workspace too
    (``@/hooks/useA11y`` and ``"@/*"`` are TypeScript import aliases in a plugin's command)."""
    if not raw.strip("/"):
        return False
    return os.path.lexists(Path(context.workspace) / os.path.expanduser(raw))


def expand(prompt: str, context: Any) -> Expansion:
    """Inline the ``@path`` files of ``prompt`` and attach its images (see the module doc)."""
    out, images = Expansion(prompt), accepts_images(context.settings)
    blocks: list[str] = []
    seen: set[Path] = set()
    mentions = [m.group(1).rstrip(".,;:") for m in _AT_PATH.finditer(prompt)]
    pasted = [m.group(1) for m in _PASTED.finditer(prompt)] if context.interactive else []
    for raw in [*mentions, *pasted]:
        try:
            path = (
                Path(os.path.expanduser(raw)).resolve()
                if raw in pasted
                else resolve_in_workspace(raw, context)
            )
        except BoundaryError as exc:
            if _names_a_file(raw, context):  # else ``@/components/x``, an import alias: text
                out.notes.append(f"@{raw}: {exc}")
            continue
        if path in seen or not path.exists():
            continue
        seen.add(path)
        try:
            if path.is_dir():
                blocks.append(f"[The user referred to the folder {raw}]")
            elif path.suffix.lower() in IMAGE_SUFFIXES:
                _image(raw, path, images, out, context)
            else:
                block, note = _inline(raw, path, context)
                blocks.append(block)
                if note:
                    out.notes.append(note)
        except OSError as exc:
            out.notes.append(f"@{raw} cannot be read: {exc.strerror or exc}")
    if blocks:
        out.text = out.text + "\n\n" + "\n\n".join(blocks)
    return out
