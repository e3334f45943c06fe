"""Converting MCP CallToolResults into what the model sees."""

from __future__ import annotations

from pathlib import Path

import mcp_types as types
from mycode_mcp_bridge.results import to_tool_result

from mycode_core.config import Settings
from mycode_core.records import RunContext


def _context(tmp_path: Path) -> RunContext:
    return RunContext(
        workspace=tmp_path, home=tmp_path / "home", settings=Settings(), session_id="r"
    )


def _convert(tmp_path: Path, result: types.CallToolResult, max_chars: int = 1000):  # type: ignore[no-untyped-def]
    return to_tool_result(
        result,
        context=_context(tmp_path),
        label="mcp__s__t",
        max_chars=max_chars,
        server="s",
        tool="t",
    )


def test_text_blocks_join(tmp_path: Path) -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="a"), types.TextContent(type="text", text="b")]
    )
    out = _convert(tmp_path, result)
    assert out.content == "a\nb" and not out.is_error
    assert out.metadata == {"mcp_server": "s", "mcp_tool": "t"}


def test_structured_content_is_compact_and_not_duplicated(tmp_path: Path) -> None:
    pretty = '{\n  "x": 1,\n  "y": [1, 2]\n}'
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text=pretty)],
        structured_content={"x": 1, "y": [1, 2]},
    )
    assert _convert(tmp_path, result).content == '{"x":1,"y":[1,2]}'
    only = types.CallToolResult(content=[], structured_content={"ok": True})
    assert _convert(tmp_path, only).content == '{"ok":true}'
    extra = types.CallToolResult(
        content=[types.TextContent(type="text", text="summary")], structured_content={"n": 3}
    )
    assert _convert(tmp_path, extra).content == 'summary\n{"n":3}'
    wrapped = types.CallToolResult(
        content=[types.TextContent(type="text", text="42")], structured_content={"result": 42}
    )
    assert _convert(tmp_path, wrapped).content == "42"
    # server-filesystem's read_text_file: the text again, under an output schema's one key
    text = types.CallToolResult(
        content=[types.TextContent(type="text", text="hello\n")],
        structured_content={"content": "hello\n"},
    )
    assert _convert(tmp_path, text).content == "hello\n"
    # server-filesystem's directory_tree: pretty JSON text, the same text under one key: the
    # JSON compact, not the text re-encoded as one JSON string
    tree = '[\n  {\n    "name": "a.txt",\n    "type": "file"\n  }\n]'
    treed = types.CallToolResult(
        content=[types.TextContent(type="text", text=tree)], structured_content={"content": tree}
    )
    assert _convert(tmp_path, treed).content == '[{"name":"a.txt","type":"file"}]'
    # server-memory: the list as pretty JSON, and again under one key: shown once, compact
    listed = types.CallToolResult(
        content=[types.TextContent(type="text", text='[\n  {\n    "a": 1\n  }\n]')],
        structured_content={"entities": [{"a": 1}]},
    )
    assert _convert(tmp_path, listed).content == '[{"a":1}]'
    compact = types.CallToolResult(
        content=[types.TextContent(type="text", text="[1,2]")],
        structured_content={"result": [1, 2]},
    )
    assert _convert(tmp_path, compact).content == "[1,2]"
    # FastMCP of mcp 1.x: a returned list is one text block per item, and {"result": [...]}
    items = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="a"),
            types.TextContent(type="text", text='{\n  "b": 2\n}'),
        ],
        structured_content={"result": ["a", {"b": 2}]},
    )
    assert _convert(tmp_path, items).content == 'a\n{\n  "b": 2\n}'


def test_image_becomes_block_with_note(tmp_path: Path) -> None:
    result = types.CallToolResult(
        content=[
            types.TextContent(type="text", text="look"),
            types.ImageContent(type="image", data="aGVsbG8=", mime_type="image/png"),
        ]
    )
    out = _convert(tmp_path, result)
    assert isinstance(out.content, list)
    assert out.content[0] == {"type": "text", "text": "look\n[image: image/png, 6 bytes]"}
    assert out.content[1] == {"type": "image", "mime_type": "image/png", "data": "aGVsbG8="}
    assert "[image: image/png" in out.text()


def test_links_audio_and_embedded_resources(tmp_path: Path) -> None:
    result = types.CallToolResult(
        content=[
            types.ResourceLink(
                type="resource_link",
                uri="file:///r.txt",
                name="r",
                mime_type="text/plain",
                description="a file",
            ),
            types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
            types.EmbeddedResource(
                type="resource",
                resource=types.TextResourceContents(
                    uri="mem://a", text="inside", mime_type="text/plain"
                ),
            ),
            types.EmbeddedResource(
                type="resource",
                resource=types.BlobResourceContents(
                    uri="mem://b", blob="AAAA", mime_type="application/zip"
                ),
            ),
        ]
    )
    text = _convert(tmp_path, result).content
    assert isinstance(text, str)
    lines = text.splitlines()
    assert lines[0] == "resource link: r <file:///r.txt> (text/plain) — a file"
    assert lines[1] == "[audio: audio/wav, 3 bytes, not shown]"
    assert lines[2:4] == ["resource mem://a (text/plain):", "inside"]
    assert lines[4] == "[embedded resource mem://b (application/zip), 3 bytes, not shown]"


def test_is_error(tmp_path: Path) -> None:
    result = types.CallToolResult(
        content=[types.TextContent(type="text", text="nope")], is_error=True
    )
    out = _convert(tmp_path, result)
    assert out.is_error and out.content == "nope"
    empty = _convert(tmp_path, types.CallToolResult(content=[], is_error=True))
    assert empty.is_error and "reported an error" in str(empty.content)


def test_empty_output(tmp_path: Path) -> None:
    assert _convert(tmp_path, types.CallToolResult(content=[])).content == "(no output)"


def test_cap_saves_full_text_as_artifact(tmp_path: Path) -> None:
    big = "".join(f"line {i}\n" for i in range(5000))
    out = _convert(
        tmp_path, types.CallToolResult(content=[types.TextContent(type="text", text=big)])
    )
    assert isinstance(out.content, str)
    artifact = Path(out.metadata["artifact"])
    assert artifact.read_text() == big
    assert artifact.is_relative_to(tmp_path / "home" / "artifacts" / "r")
    assert out.content.startswith(big[:1000])
    assert f"showing 1,000 of {len(big):,} characters" in out.content
    assert str(artifact) in out.content


def test_defaulted_properties_are_not_required_at_any_depth() -> None:
    from mycode_mcp_bridge.tools import defaults_optional

    schema = {
        "type": "object",
        "properties": {
            "scale": {"type": "string", "default": "css"},
            "url": {"type": "string"},
            "box": {
                "type": "object",
                "properties": {"w": {"type": "integer", "default": 1}, "h": {"type": "integer"}},
                "required": ["w", "h"],
            },
        },
        "required": ["scale", "url", "box"],
    }
    out = defaults_optional(schema)
    assert out["required"] == ["url", "box"]
    assert out["properties"]["box"]["required"] == ["h"]
    assert out["properties"]["scale"]["default"] == "css"
    assert schema["required"] == ["scale", "url", "box"]  # the server's own schema untouched


def test_embedded_image_blob_is_an_image_and_a_binary_text_blob_a_note(tmp_path: Path) -> None:
    def embedded(blob: str, mime: str) -> types.EmbeddedResource:
        contents = types.BlobResourceContents(uri="mem://x", blob=blob, mime_type=mime)
        return types.EmbeddedResource(type="resource", resource=contents)

    out = _convert(tmp_path, types.CallToolResult(content=[embedded("aGVsbG8=", "image/png")]))
    assert out.content == [
        {"type": "text", "text": "[resource mem://x: image: image/png, 6 bytes]"},
        {"type": "image", "mime_type": "image/png", "data": "aGVsbG8="},
    ]
    not_utf8 = _convert(tmp_path, types.CallToolResult(content=[embedded("//79", "text/plain")]))
    assert not_utf8.content == "[embedded resource mem://x (text/plain), 3 bytes, not shown]"
