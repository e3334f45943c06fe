"""``list_mcp_resources`` / ``read_mcp_resource``: the resources a server offers, found and
read by the model (a resource link in a tool's result can be followed), as Claude Code and
Codex offer them. Against the test feature server and a real server without resources."""

from __future__ import annotations

from pathlib import Path

from mcp_helpers import BIN, Run, feature


def test_resources_are_listed_and_read(make_run, workspace: Path) -> None:
    run: Run = make_run({"notes": feature()})
    for name in ("list_mcp_resources", "read_mcp_resource"):
        tool = run.context.tools.get(name)
        assert tool is not None and tool.read_only and tool.concurrency_safe, name
    listed = run.call("list_mcp_resources")
    assert not listed.is_error
    text = str(listed.content)
    assert "notes: today <notes://today> (text/plain) — Today's notes" in text
    assert "notes: logo <notes://logo> (image/png)" in text
    assert "notes: template day <notes://day/{day}> (text/plain) — The notes of one day" in text
    assert str(run.call("list_mcp_resources", {"server": "notes"}).content) == text
    unknown = run.call("list_mcp_resources", {"server": "nope"})
    assert unknown.is_error and "notes" in str(unknown.content)

    read = run.call("read_mcp_resource", {"server": "notes", "uri": "notes://today"})
    assert not read.is_error and "buy milk" in str(read.content)
    assert "buy milk" not in text  # listing is not reading
    templated = run.call("read_mcp_resource", {"server": "notes", "uri": "notes://day/monday"})
    assert "notes of monday" in str(templated.content)
    image = run.call("read_mcp_resource", {"server": "notes", "uri": "notes://logo"})
    assert isinstance(image.content, list) and any(b["type"] == "image" for b in image.content)
    missing = run.call("read_mcp_resource", {"server": "notes", "uri": "notes://nothing"})
    assert missing.is_error and "notes://nothing" in str(missing.content)


def test_a_file_uri_outside_the_workspace_asks(make_run, workspace: Path) -> None:
    run: Run = make_run({"notes": feature()})
    tool = run.context.tools.get("read_mcp_resource")
    assert tool is not None and tool.approval_for is not None
    outside = tool.approval_for({"server": "notes", "uri": "file:///etc/passwd"}, run.context)
    assert outside is not None and "/etc/passwd" in outside.reason
    inside = (workspace / "a.txt").as_uri()
    assert tool.approval_for({"server": "notes", "uri": inside}, run.context) is None
    assert tool.approval_for({"server": "notes", "uri": "notes://today"}, run.context) is None
    # a URI's scheme is read whatever its case (as servers' URL parsers read it): "FILE:" and
    # " file:" got through unasked
    for uri in ("FILE:///etc/passwd", " file:///etc/passwd", "File://localhost/etc/passwd"):
        asked = tool.approval_for({"server": "notes", "uri": uri}, run.context)
        assert asked is not None and "/etc/passwd" in asked.reason, uri


def test_a_file_uri_in_a_tools_arguments_is_a_path(make_run, workspace: Path) -> None:
    """A ``file:`` URI handed to a tool names a path as much as ``/etc/passwd`` does: under
    an argument called ``uri`` it was not looked at, under ``path`` it was skipped as a URL."""
    run: Run = make_run({"notes": feature()})
    tool = run.context.tools.get("mcp__notes__echo")
    assert tool is not None and tool.approval_for is not None
    for arguments in (
        {"text": "file:///etc/passwd"},
        {"uri": "FILE:///etc/passwd"},
        {"path": "file://localhost/etc/passwd"},
    ):
        asked = tool.approval_for(arguments, run.context)
        assert asked is not None and "'/etc/passwd'" in asked.reason, arguments
    inside = {"uri": (workspace / "notes.txt").as_uri()}
    assert tool.approval_for(inside, run.context) is None
    assert tool.approval_for({"url": "https://example.com/etc/passwd"}, run.context) is None


def test_no_resource_tools_without_a_server_offering_resources(make_run) -> None:
    run: Run = make_run({"time": {"command": str(BIN / "mcp-server-time")}})
    names = run.context.tools.names()
    assert "mcp__time__get_current_time" in names
    assert "list_mcp_resources" not in names and "read_mcp_resource" not in names


def test_an_unknown_server_is_answered_with_those_that_have_resources(make_run) -> None:
    """``mcp-server-time`` declares the resources capability and has none: it was listed."""
    time_server = {"command": str(BIN / "mcp-server-time")}
    run: Run = make_run({"notes": feature(), "time": time_server})
    assert run.bridge.connections["time"].offers("resources")
    unknown = run.call("read_mcp_resource", {"server": "nope", "uri": "notes://today"})
    assert unknown.is_error
    assert str(unknown.content).endswith("offers resources here (servers: notes).")
