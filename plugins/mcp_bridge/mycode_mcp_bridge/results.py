"""Turning an MCP ``CallToolResult`` into the compact :class:`ToolResult` the model sees.

* text blocks → text; structured content → compact JSON (unless a text block already says it)
* images → ``{"type": "image", "mime_type", "data"}`` blocks plus a short text note
* audio, blobs → a note; resource links → one text line each; embedded text resources (and
  blobs of a text type) → text, embedded image blobs → images
* ``is_error`` → an error result
* more than ``max_chars`` of text → cut, with a note; the full text saved as an artifact
"""

from __future__ import annotations

import base64
import json
import time
import uuid
from pathlib import Path
from typing import Any

from mycode_core.records import RunContext, ToolResult

CONTENT_TYPES = {"text", "image", "audio", "resource_link", "resource"}
SCHEMA_PROBLEM = "mycode/outputSchemaMismatch"
"""Key of a result's ``_meta`` the bridge sets when the result does not match the tool's output
schema (its value says how); the model gets it as a note after the result."""


def compact_json(value: Any) -> str:
    """JSON without spaces or indentation."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _size(b64: str) -> int:
    return len(b64) * 3 // 4


def _field(block: Any, name: str, default: Any = None) -> Any:
    if isinstance(block, dict):
        return block.get(name, default)
    return getattr(block, name, default)


_NOT_JSON = object()


def _parsed(text: str) -> Any:
    """A text block's JSON value when it holds an object or array, else ``_NOT_JSON``."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return _NOT_JSON
    try:
        return json.loads(stripped)
    except ValueError:
        return _NOT_JSON


def _says(text: str, value: Any) -> bool:
    """Whether a text block says ``value``: the value itself, its JSON (pretty or compact)."""
    if isinstance(value, str):
        return text.strip() == value.strip()
    return text.strip() in (compact_json(value), str(value).strip()) or _parsed(text) == value


def _structured_shown(structured: Any, texts: list[str]) -> tuple[bool, int | None, Any]:
    """Whether the text blocks already carry the structured content, and which block to show
    as compact JSON instead, of which value (index ``None``: leave the blocks as they are)."""
    for index, text in enumerate(texts):
        if _parsed(text) == structured:
            return True, index, structured
    if isinstance(structured, dict) and len(structured) == 1:
        # one key wrapping what the blocks say: FastMCP's {"result": …}, {"content": text},
        # server-memory's {"entities": [...]} beside the same list as pretty JSON
        inner = next(iter(structured.values()))
        if (
            isinstance(inner, list)
            and inner
            and all(isinstance(item, dict) and item.get("type") in CONTENT_TYPES for item in inner)
        ):
            return True, None, None  # the content blocks themselves, echoed as structured
        for index, text in enumerate(texts):
            if _says(text, inner):
                # a JSON text is shown compact: its value, never the text itself as a JSON
                # string (server-filesystem's directory_tree: {"content": "<pretty JSON>"})
                parsed = _parsed(text)
                return True, (None if parsed is _NOT_JSON else index), parsed
        if (
            isinstance(inner, list)
            and inner
            and len(inner) == len(texts)
            and all(_says(text, item) for text, item in zip(texts, inner, strict=True))
        ):
            return True, None, None  # FastMCP (mcp 1.x): a list as one text block per item
    return False, None, None


def _link_line(block: Any) -> str:
    name = _field(block, "title") or _field(block, "name") or ""
    line = f"resource link: {name} <{_field(block, 'uri')}>".replace(":  <", ": <")
    mime = _field(block, "mime_type")
    if mime:
        line += f" ({mime})"
    description = _field(block, "description")
    if description:
        line += f" — {description}"
    return line


_TEXT_TYPES = ("application/json", "application/xml", "application/javascript", "application/yaml")


def _blob_text(blob: str, mime: str) -> str | None:
    """A blob's bytes as text when its type says text (``text/*``, JSON, XML, YAML, …) and
    they are UTF-8: server-everything's and server-filesystem's text files come base64."""
    kind = mime.split(";")[0].strip().lower()
    if not (kind.startswith("text/") or kind in _TEXT_TYPES or kind.endswith(("+json", "+xml"))):
        return None
    try:
        return base64.b64decode(blob, validate=True).decode("utf-8")
    except ValueError:  # not base64, or not UTF-8
        return None


def _embedded(block: Any) -> list[dict[str, Any]]:
    """An embedded resource: its text, a blob of text decoded, an image blob as an image;
    other blobs as a note."""
    resource = _field(block, "resource")
    uri = _field(resource, "uri")
    mime = _field(resource, "mime_type") or "unknown type"
    text = _field(resource, "text")
    blob = _field(resource, "blob") or ""
    if text is None:
        text = _blob_text(blob, mime)
    if text is not None:
        return [{"type": "text", "text": f"resource {uri} ({mime}):\n{text}"}]
    if mime.startswith("image/") and blob:
        return _image(blob, mime, f"resource {uri}: ")
    return [
        {
            "type": "text",
            "text": f"[embedded resource {uri} ({mime}), {_size(blob):,} bytes, not shown]",
        }
    ]


def _image(data: str, mime: str, what: str = "") -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": f"[{what}image: {mime}, {_size(data):,} bytes]"},
        {"type": "image", "mime_type": mime, "data": data},
    ]


def render(result: Any) -> tuple[list[dict[str, Any]], bool]:
    """The blocks of a ``CallToolResult`` as text/image dicts, and its ``is_error`` flag."""
    blocks: list[dict[str, Any]] = []
    for block in _field(result, "content", None) or []:
        kind = _field(block, "type")
        if kind == "text":
            blocks.append({"type": "text", "text": _field(block, "text") or ""})
        elif kind == "image":
            data, mime = _field(block, "data") or "", _field(block, "mime_type") or "image/png"
            blocks += _image(data, mime)
        elif kind == "audio":
            data, mime = _field(block, "data") or "", _field(block, "mime_type") or "audio"
            blocks.append(
                {"type": "text", "text": f"[audio: {mime}, {_size(data):,} bytes, not shown]"}
            )
        elif kind == "resource_link":
            blocks.append({"type": "text", "text": _link_line(block)})
        elif kind == "resource":
            blocks += _embedded(block)
        else:
            blocks.append({"type": "text", "text": f"[{kind} content, not shown]"})
    structured = _field(result, "structured_content")
    if structured is not None:
        texts = [b["text"] for b in blocks if b["type"] == "text"]
        shown, index, value = _structured_shown(structured, texts)
        if index is not None:
            position = [i for i, b in enumerate(blocks) if b["type"] == "text"][index]
            blocks[position] = {"type": "text", "text": compact_json(value)}
        elif not shown:
            blocks.append({"type": "text", "text": compact_json(structured)})
    problem = (_field(result, "meta") or {}).get(SCHEMA_PROBLEM)
    if problem:
        blocks.append({"type": "text", "text": f"[note: {problem}; shown as the server sent it]"})
    return blocks, bool(_field(result, "is_error", False))


def _merge_text(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    merged: list[dict[str, Any]] = []
    for block in blocks:
        if block["type"] == "text" and merged and merged[-1]["type"] == "text":
            merged[-1] = {"type": "text", "text": merged[-1]["text"] + "\n" + block["text"]}
        else:
            merged.append(dict(block))
    return merged


def save_artifact(context: RunContext, label: str, text: str) -> Path:
    """Save a full output under the session's artifacts folder; returns its path."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = context.artifacts_dir / f"{label}-{stamp}-{uuid.uuid4().hex[:6]}.txt"
    path.write_text(text, encoding="utf-8")
    return path


def to_tool_result(
    result: Any, *, context: RunContext, label: str, max_chars: int, server: str, tool: str
) -> ToolResult:
    """Convert an MCP ``CallToolResult``; ``label`` names the artifact file (the tool's name)."""
    blocks, is_error = render(result)
    blocks = _merge_text(blocks)
    text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
    metadata: dict[str, Any] = {"mcp_server": server, "mcp_tool": tool}
    if len(text) > max_chars:
        note = f"[output truncated: showing {max_chars:,} of {len(text):,} characters"
        try:
            path = save_artifact(context, label, text)
        except OSError as exc:
            note += f"; the full output could not be saved: {exc.strerror or exc}]"
        else:
            metadata["artifact"] = str(path)
            note += f"; full output saved to {path}]"
        blocks = [{"type": "text", "text": text[:max_chars] + "\n" + note}] + [
            b for b in blocks if b["type"] != "text"
        ]
    if is_error:
        message = text if len(text) <= max_chars else blocks[0]["text"]
        return ToolResult(
            content=message or "the MCP tool reported an error", is_error=True, metadata=metadata
        )
    if not blocks:
        return ToolResult(content="(no output)", metadata=metadata)
    if all(b["type"] == "text" for b in blocks):
        return ToolResult(content="\n".join(b["text"] for b in blocks), metadata=metadata)
    return ToolResult(content=blocks, metadata=metadata)
