"""Integration with real third-party MCP servers.

``mcp-server-time`` and ``mcp-server-git`` are dev dependencies (PyPI).
``@modelcontextprotocol/server-everything``, ``server-filesystem``, ``server-memory`` and
``@playwright/mcp`` come from npm: run
``tests/install_test_servers.sh DIR`` and set ``MYCODE_TEST_EVERYTHING_DIR`` to what it prints.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp_helpers import BIN, serve_folder

from mycode_core.testing.host import find_chromium, wait_until

EVERYTHING_DIR = os.environ.get("MYCODE_TEST_EVERYTHING_DIR", "")
EVERYTHING_JS = (
    Path(EVERYTHING_DIR)
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
needs_everything = pytest.mark.skipif(
    not (EVERYTHING_DIR and EVERYTHING_JS.is_file() and shutil.which("node")),
    reason="server-everything not installed: run "
    "plugins/mcp_bridge/tests/install_test_servers.sh DIR and set MYCODE_TEST_EVERYTHING_DIR "
    "(CI does)",
)


def test_time_server(make_run) -> None:
    run = make_run(
        {"time": {"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}}
    )
    tool = run.context.tools.get("mcp__time__get_current_time")
    assert tool is not None and tool.read_only and tool.concurrency_safe
    assert "timezone" in tool.input_schema["properties"]
    result = run.call("mcp__time__get_current_time", {"timezone": "Europe/Paris"})
    assert not result.is_error
    assert isinstance(result.content, str) and result.content.startswith(
        '{"timezone":"Europe/Paris"'
    )
    converted = run.call(
        "mcp__time__convert_time",
        {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"},
    )
    assert '"datetime":' in str(converted.content) and "21:00" in str(converted.content)
    bad = run.call("mcp__time__get_current_time", {"timezone": "Not/AZone"})
    assert bad.is_error and "Not/AZone" in str(bad.content)


def _repo_with_a_change(workspace: Path) -> None:
    """``workspace`` as a git repository: ``a.txt`` committed, then changed."""
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q", "."], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("one\n")
    subprocess.run([*git, "add", "a.txt"], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "first commit"], cwd=workspace, check=True)
    (workspace / "a.txt").write_text("one\ntwo\n")


def test_git_server(make_run, workspace: Path) -> None:
    _repo_with_a_change(workspace)
    run = make_run(
        {"git": {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(workspace)]}}
    )
    names = set(run.context.tools.names())
    assert {"mcp__git__git_status", "mcp__git__git_diff_unstaged", "mcp__git__git_log"} <= names
    status = run.call("mcp__git__git_status", {"repo_path": str(workspace)})
    assert not status.is_error and "modified:   a.txt" in str(status.content)
    diff = run.call("mcp__git__git_diff_unstaged", {"repo_path": str(workspace)})
    assert "+two" in str(diff.content)
    log = run.call("mcp__git__git_log", {"repo_path": str(workspace)})
    assert "first commit" in str(log.content)
    outside = run.call("mcp__git__git_status", {"repo_path": "/"})
    assert outside.is_error
    reset = run.context.tools.get("mcp__git__git_reset")
    assert reset is not None and reset.risk == "high"  # destructiveHint → the policy asks


@needs_everything
def test_everything_server(make_run, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-mcp-servers")
    run = make_run({"everything": {"command": "node", "args": [str(EVERYTHING_JS), "stdio"]}})
    names = set(run.context.tools.names())
    assert {
        "mcp__everything__echo",
        "mcp__everything__get-structured-content",
        "mcp__everything__trigger-long-running-operation",
        "mcp__everything__get-tiny-image",
        "mcp__everything__get-resource-links",
    } <= names
    # Tools that need MCP tasks cannot be called through tools/call: not offered.
    assert "mcp__everything__simulate-research-query" not in names
    (row,) = run.bridge.status()
    assert "simulate-research-query" not in row["tools"]
    assert {"name": "simulate-research-query", "reason": "it runs only as an MCP task"} in row[
        "left_out"
    ]

    # list_changed: the server registers tools that depend on client capabilities after
    # initialisation (we offer roots) and announces them with notifications/tools/list_changed.
    connection = run.bridge.connections["everything"]
    assert wait_until(lambda: connection.list_changes >= 1, 10)
    assert wait_until(lambda: "mcp__everything__get-roots-list" in run.context.tools.names(), 10)
    roots = run.call("mcp__everything__get-roots-list")
    assert workspace.resolve().as_uri() in str(roots.content)

    structured = run.call("mcp__everything__get-structured-content", {"location": "Chicago"})
    assert (
        structured.content == '{"temperature":36,"conditions":"Light rain / drizzle","humidity":82}'
    )

    before = len(run.of_type("progress"))
    done = run.call(
        "mcp__everything__trigger-long-running-operation", {"duration": 0.6, "steps": 3}
    )
    assert "Long running operation completed" in str(done.content)
    progress = run.of_type("progress")[before:]
    assert [(e.progress, e.total) for e in progress] == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]
    assert {e.source for e in progress} == {"mcp__everything__trigger-long-running-operation"}

    image = run.call("mcp__everything__get-tiny-image")
    assert isinstance(image.content, list)
    assert [b for b in image.content if b["type"] == "image"][0]["mime_type"] == "image/png"

    links = run.call("mcp__everything__get-resource-links", {"count": 2})
    assert str(links.content).count("resource link: ") == 2

    bad = run.call("mcp__everything__get-sum", {"a": "one", "b": 2})
    assert bad.is_error

    env = run.call("mcp__everything__get-env")
    assert "sk-not-for-mcp-servers" not in str(env.content)  # secrets are not inherited


@needs_everything
def test_everything_embedded_blob_of_text_reaches_the_model(make_run) -> None:
    """server-everything's odd-numbered resources come as base64 blobs of ``text/plain``: the
    model gets their text, not a note that something was not shown."""
    run = make_run({"everything": {"command": "node", "args": [str(EVERYTHING_JS), "stdio"]}})
    blob = run.call(
        "mcp__everything__get-resource-reference", {"resourceType": "Blob", "resourceId": 3}
    )
    assert not blob.is_error
    assert "resource demo://resource/dynamic/blob/3 (text/plain):\nResource 3: This is a base64 " \
        "blob" in str(blob.content)  # fmt: skip
    assert "not shown" not in str(blob.content)


def test_git_server_outside_paths_ask_unless_trusted(
    make_run, workspace: Path, tmp_path: Path
) -> None:
    """mcp-server-git acting on another repository asks (``repo_path`` named in the reason);
    inside the workspace it does not; ``trust_paths = true`` in a user-owned entry lifts it,
    and a project's own ``.mcp.json`` cannot trust itself."""
    from mycode_mcp_bridge.config import parse_server
    from mycode_mcp_bridge.outside import trusts_paths

    other = tmp_path / "other-repo"
    other.mkdir()
    subprocess.run(["git", "init", "-q", "."], cwd=other, check=True)
    subprocess.run(["git", "init", "-q", "."], cwd=workspace, check=True)
    entry = {"command": str(BIN / "mcp-server-git")}
    run = make_run({"git": entry})
    checkout = run.context.tools.get("mcp__git__git_checkout")
    status = run.context.tools.get("mcp__git__git_status")
    assert checkout is not None and status is not None
    asked = checkout.approval({"repo_path": str(other), "branch_name": "main"}, run.context)
    assert asked is not None and "'repo_path'" in asked.reason and str(other) in asked.reason
    assert "trust_paths = true" in asked.reason
    assert status.approval({"repo_path": str(workspace)}, run.context) is None
    assert status.approval({"repo_path": "."}, run.context) is None
    assert status.approval({"repo_path": "../other-repo"}, run.context) is not None
    trusted = make_run({"git": {**entry, "trust_paths": True}})
    tool = trusted.context.tools.get("mcp__git__git_status")
    assert tool is not None and tool.approval({"repo_path": str(other)}, trusted.context) is None
    project = parse_server("git", {**entry, "trust_paths": True}, "project", ".mcp.json")
    assert not trusts_paths(project)


def test_git_server_does_not_run_what_an_untrusted_repository_configured(
    make_run, workspace: Path, tmp_path: Path
) -> None:
    """In an untrusted workspace, mcp-server-git's read-only tools (allowed unasked) must not
    run the programs the repository's own ``.git/config`` names (``core.fsmonitor``, a
    ``textconv`` driver), as mycode's own git commands do not (SPEC §8); they still work."""
    _repo_with_a_change(workspace)
    ran = tmp_path / "ran"
    ran.mkdir()
    for key, value in (
        ("core.fsmonitor", f"touch {ran}/fsmonitor; false"),
        ("diff.evil.textconv", f"sh -c 'touch {ran}/textconv; cat \"$1\"' -"),
    ):
        subprocess.run(["git", "config", key, value], cwd=workspace, check=True)
    (workspace / ".gitattributes").write_text("*.txt diff=evil\n")
    run = make_run({"git": {"command": str(BIN / "mcp-server-git"), "args": ["--repository", "."]}})
    status = run.call("mcp__git__git_status", {"repo_path": "."})
    assert not status.is_error and "modified:   a.txt" in str(status.content)
    diff = run.call("mcp__git__git_diff_unstaged", {"repo_path": "."})
    assert not diff.is_error and "+two" in str(diff.content)
    assert sorted(p.name for p in ran.iterdir()) == []


@needs_everything
def test_filesystem_server_works_in_the_roots_it_is_given(make_run, workspace: Path) -> None:
    """``server-filesystem`` with no folder argument serves the roots mycode gives it (the
    workspace); a text it returns twice (text block and structured copy) is shown once."""
    (workspace / "notes.txt").write_text("hello from the workspace\n")
    js = EVERYTHING_JS.parents[2] / "server-filesystem" / "dist" / "index.js"
    run = make_run({"fs": {"command": "node", "args": [str(js)]}})

    def roots_taken() -> bool:  # the server asks for the roots on its own, after start-up
        listing = run.call("mcp__fs__list_allowed_directories", {})
        return str(workspace.resolve()) in str(listing.content)

    assert wait_until(roots_taken, 30)
    read = run.call("mcp__fs__read_text_file", {"path": str(workspace / "notes.txt")})
    assert not read.is_error
    assert read.content == "hello from the workspace\n"
    tree = run.call("mcp__fs__directory_tree", {"path": str(workspace)})  # JSON, shown compact
    assert {"name": "notes.txt", "type": "file"} in json.loads(str(tree.content))
    outside = run.call("mcp__fs__read_text_file", {"path": "/etc/hostname"})
    assert outside.is_error and "outside allowed directories" in str(outside.content).lower()
    writer = run.context.tools.get("mcp__fs__write_file")
    assert writer is not None and not writer.read_only


@needs_everything
def test_memory_server_results_are_not_shown_twice(make_run, workspace: Path) -> None:
    """``server-memory`` answers with the list as pretty JSON text and the same list again as
    structured content under one key (``{"entities": [...]}``): the model gets it once,
    compact; complex nested array arguments pass validation; the server's errors are errors."""
    js = EVERYTHING_JS.parents[2] / "server-memory" / "dist" / "index.js"
    if not js.is_file():
        pytest.skip("server-memory not installed: rerun install_test_servers.sh")
    store = workspace / "memory.jsonl"
    run = make_run({"mem": {"command": "node", "args": [str(js)],
                            "env": {"MEMORY_FILE_PATH": str(store)}}})  # fmt: skip
    entities = [
        {"name": "Alice", "entityType": "person", "observations": ["likes tea"]},
        {"name": "Bob", "entityType": "person", "observations": []},
    ]
    created = run.call("mcp__mem__create_entities", {"entities": entities})
    assert not created.is_error
    assert created.content == json.dumps(entities, separators=(",", ":"))
    relation = {"from": "Alice", "to": "Bob", "relationType": "knows"}
    related = run.call("mcp__mem__create_relations", {"relations": [relation]})
    assert related.content == json.dumps([relation], separators=(",", ":"))
    graph = run.call("mcp__mem__read_graph")
    assert json.loads(str(graph.content)) == {"entities": entities, "relations": [relation]}
    nobody = {"entityName": "Nobody", "contents": ["x"]}
    missing = run.call("mcp__mem__add_observations", {"observations": [nobody]})
    assert missing.is_error and "Nobody" in str(missing.content)
    assert store.is_file()


@pytest.fixture
def page_url(tmp_path: Path) -> Iterator[str]:
    """A page served on 127.0.0.1 for the browser to open."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<html><title>Local page</title><body>hi</body></html>")
    with serve_folder(site) as base:
        yield f"{base}/index.html"


def _playwright_config(tmp_path: Path, home: Path) -> Path:
    """An MCP config running Playwright MCP as ``pw`` (headless, on this machine's Chromium),
    its navigation allowed."""
    cli = EVERYTHING_JS.parents[3] / "@playwright" / "mcp" / "cli.js"
    args = [str(cli), "--headless", "--isolated", "--no-sandbox", "--executable-path",
            str(find_chromium()), "--output-dir", str(tmp_path / "pw-out")]  # fmt: skip
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"pw": {"command": "node", "args": args}}}))
    (home / "config.toml").write_text('[permissions]\nallow = ["mcp__pw__browser_navigate"]\n')
    return config


@needs_everything
@pytest.mark.skipif(find_chromium() is None, reason="no chromium here (CI installs it)")
def test_playwright_server_defaulted_arguments_may_be_left_out(
    workspace: Path, home: Path, tmp_path: Path, page_url: str
) -> None:
    """Playwright MCP marks properties with a default as required (``scale``, ``level``); a
    model that leaves them out, as the server allows, gets a screenshot, not a schema error."""
    config = _playwright_config(tmp_path, home)
    script = tmp_path / "script.json"
    calls = [
        [{"name": "mcp__pw__browser_navigate", "arguments": {"url": page_url}}],
        [{"name": "mcp__pw__browser_take_screenshot", "arguments": {}}],
        [{"name": "mcp__pw__browser_console_messages", "arguments": {}}],
    ]
    script.write_text(json.dumps([{"tool_calls": c} for c in calls] + [{"content": "seen"}]))
    done = subprocess.run(
        [str(BIN / "mycode"), "-p", "look at the page", "--model", f"scripted:{script}",
         "--mcp-config", str(config), "--output-format", "stream-json",
         "--completion-policy", "off"],
        cwd=workspace, env={**os.environ, "MYCODE_HOME": str(home)},
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    results = {e["name"]: e for e in events if e["type"] == "tool_result"}
    assert "Page Title: Local page" in results["mcp__pw__browser_navigate"]["content"]
    for name in ("mcp__pw__browser_take_screenshot", "mcp__pw__browser_console_messages"):
        assert results[name]["is_error"] is False, results[name]["content"]
    assert not (workspace / ".playwright-mcp").exists()


@needs_everything
@pytest.mark.skipif(find_chromium() is None, reason="no chromium here (CI installs it)")
def test_a_playwright_screenshot_reaches_a_vision_model(
    workspace: Path, home: Path, tmp_path: Path, page_url: str
) -> None:
    """A real browser's screenshot, asked for by a model that takes images (by its name), is
    in the next request as an image, not only as a note."""
    from mycode_core.testing import FakeOpenAIServer, turn

    config = _playwright_config(tmp_path, home)
    navigate = {"name": "mcp__pw__browser_navigate", "arguments": {"url": page_url}, "id": "n"}
    shot = {"name": "mcp__pw__browser_take_screenshot", "arguments": {}, "id": "s"}
    turns = [turn(tool_calls=[navigate]), turn(tool_calls=[shot]), turn("a page saying hi")]
    with FakeOpenAIServer(turns) as server:
        done = subprocess.run(
            [str(BIN / "mycode"), *server.cli_args("look at the page", model="gpt-4o"),
             "--mcp-config", str(config), "--completion-policy", "off"],
            cwd=workspace, env={**os.environ, "MYCODE_HOME": str(home)},
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        last = server.chat_requests[-1].messages
    assert done.returncode == 0, done.stderr
    images = [
        part["image_url"]["url"]
        for message in last
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]
    assert len(images) == 1 and images[0].startswith(("data:image/png;base64,iVBOR",
                                                      "data:image/jpeg;base64,/9j/"))  # fmt: skip


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def _everything_web(mode: str, port: int) -> Iterator[None]:
    """server-everything started on its own as a web service (``streamableHttp``, ``sse``)."""
    server = subprocess.Popen(
        ["node", str(EVERYTHING_JS), mode],
        env={**os.environ, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            with socket.socket() as sock:
                return sock.connect_ex(("127.0.0.1", port)) == 0

        assert wait_until(listening, 60)
        yield
    finally:
        server.terminate()
        server.wait(timeout=30)


@needs_everything
@pytest.mark.parametrize(("mode", "transport", "path"), [
    ("streamableHttp", "http", "/mcp"), ("sse", "sse", "/sse"),
])  # fmt: skip
def test_everything_server_over_the_network_transports(
    make_run, mode: str, transport: str, path: str
) -> None:
    """The same real server, started on its own as a web service: Streamable HTTP and SSE."""
    port = _free_port()
    with _everything_web(mode, port):
        url = f"http://127.0.0.1:{port}{path}"
        run = make_run({"ev": {"type": transport, "url": url}})
        assert run.call("mcp__ev__echo", {"message": "over the wire"}).content == (
            "Echo: over the wire"
        )
        assert "5" in str(run.call("mcp__ev__get-sum", {"a": 2, "b": 3}).content)


@needs_everything
def test_a_restarted_everything_http_server_gets_a_new_session(make_run) -> None:
    """server-everything restarted while mycode runs answers the old session's requests with
    HTTP 400 and a JSON-RPC error without an id ("Bad Request: No valid session ID
    provided"), which the SDK reports as -32603 "Server returned an error response": every
    later call failed. Now the refusal ends the session and the call is made in a new one."""
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    with _everything_web("streamableHttp", port):
        run = make_run({"ev": {"type": "http", "url": url}})
        assert run.call("mcp__ev__echo", {"message": "one"}).content == "Echo: one"
    with _everything_web("streamableHttp", port):
        again = run.call("mcp__ev__echo", {"message": "two"})
        assert again.content == "Echo: two", again.content
        assert run.call("mcp__ev__echo", {"message": "three"}).content == "Echo: three"


@needs_everything
def test_everything_long_running_operation_outlives_the_call_timeout(make_run) -> None:
    """server-everything's long-running operation, 7 s in 35 steps, with a 3 s timeout."""
    entry = {"command": "node", "args": [str(EVERYTHING_JS), "stdio"], "timeout": 3}
    run = make_run({"everything": entry})
    done = run.call("mcp__everything__trigger-long-running-operation", {"duration": 7, "steps": 35})
    assert not done.is_error, done.content
    assert "Long running operation completed" in str(done.content)
    progress = run.of_type("progress")
    assert [e.progress for e in progress][-1] == 35.0


@needs_everything
def test_everything_server_resources_can_be_listed_and_a_link_followed(make_run) -> None:
    run = make_run({"everything": {"command": "node", "args": [str(EVERYTHING_JS), "stdio"]}})
    listed = str(run.call("list_mcp_resources").content)
    assert "everything: architecture.md <demo://resource/static/document/architecture.md>" in listed
    doc = run.call(
        "read_mcp_resource",
        {"server": "everything", "uri": "demo://resource/static/document/architecture.md"},
    )
    assert not doc.is_error and "Architecture" in str(doc.content)
    links = str(run.call("mcp__everything__get-resource-links", {"count": 2}).content)
    uri = links.split("<", 1)[1].split(">", 1)[0]  # the first link, as the model would read it
    followed = run.call("read_mcp_resource", {"server": "everything", "uri": uri})
    assert not followed.is_error and f"resource {uri}" in str(followed.content)
    missing = "demo://resource/static/document/nothing.md"
    gone = run.call("read_mcp_resource", {"server": "everything", "uri": missing})
    assert gone.is_error and f"could not read {missing}: MCP error -32602: " in str(gone.content)
    assert str(gone.content).count("MCP error") == 1, gone.content  # its message has it already
