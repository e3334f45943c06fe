"""`mycode sessions show ID`: a readable timeline, and `--html FILE`, checked in a real browser."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
from pathlib import Path

import pytest

from mycode_core.cli.session_html import session_page
from mycode_core.cli.session_view import build_timeline, recap_lines
from mycode_core.testing import requires_plugin, run_cli, write_script
from mycode_core.testing.host import find_chromium, headless_chromium

needs_builtin_tools = requires_plugin("builtin_tools")
TURNS = [
    {
        "content": "Reading first.",
        "tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}],
    },
    {
        "tool_calls": [
            {
                "name": "edit_file",
                "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"},
            }
        ]
    },
    {"tool_calls": [{"name": "run_command", "arguments": {"command": "ls nowhere"}}]},
    {"content": "Fixed <add> & done."},
]


@pytest.fixture
def session(tmp_path: Path) -> tuple[Path, str]:
    if importlib.util.find_spec("mycode_builtin_tools") is None:
        pytest.skip("needs mycode-builtin-tools")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "calc.py").write_text("def add(a, b):\n    return a - b\n", encoding="utf-8")
    home = tmp_path / "home"
    model = write_script(tmp_path / "turns.json", TURNS)
    run = run_cli(
        ["-p", "fix add", "--model", model, "--output-format", "stream-json"]
        + ["--permission-mode", "accept-edits"],
        workspace,
        home,
        {"MYCODE_LOAD_PLUGINS": "builtin_tools"},
    )
    assert run.rc == 0, run.stderr
    return home, run.events[0]["session_id"]


def test_show_prints_a_timeline(tmp_path: Path, session: tuple[Path, str]) -> None:
    home, session_id = session
    run = run_cli(["sessions", "show", session_id], tmp_path, home, {"COLUMNS": "120"})
    assert run.rc == 0, run.stderr
    out = run.stdout
    assert f"session {session_id}" in out
    assert "task 1: fix add" in out
    for needle in ("step 1", "step 4", "read_file(calc.py)", "edit_file(calc.py)"):
        assert needle in out
    assert "+    return a + b" in out and "-    return a - b" in out
    assert "ls nowhere" in out and "(exit 2)" in out  # the failed command and its error line
    assert "completed · verdict pass · 4 steps" in out
    assert "token" in out


def test_show_names_a_missing_session(tmp_path: Path) -> None:
    run = run_cli(["sessions", "show", "NO-SUCH-ID"], tmp_path, tmp_path / "home", {})
    assert run.rc == 2
    assert "'NO-SUCH-ID'" in run.stderr and "Traceback" not in run.stderr


def test_sessions_list_still_works(tmp_path: Path, session: tuple[Path, str]) -> None:
    home, session_id = session
    run = run_cli(["sessions", "--all"], tmp_path, home, {})
    assert run.rc == 0 and session_id in run.stdout


def test_recap_of_a_session(session: tuple[Path, str]) -> None:
    from mycode_core.sessions import SessionStore

    home, session_id = session
    timeline = build_timeline(session_id, SessionStore(home).read_events(session_id))
    lines = recap_lines(timeline)
    assert lines[0].startswith(f"Resuming session {session_id} (1 turn")
    assert "fix add → completed" in lines[1]
    assert "changed: calc.py" in lines[2]
    assert "Fixed <add> & done." in lines[3]


def test_the_page_is_self_contained(session: tuple[Path, str]) -> None:
    from mycode_core.sessions import SessionStore

    home, session_id = session
    html = session_page(build_timeline(session_id, SessionStore(home).read_events(session_id)))
    assert "<script" not in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing fetched
    assert "Fixed &lt;add&gt; &amp; done." in html  # escaped


def test_html_page_renders_in_a_headless_browser(tmp_path: Path, session: tuple[Path, str]) -> None:
    browser = find_chromium()
    if browser is None:
        pytest.skip("no chromium installed (apt-get install chromium); .ci/run installs it")
    home, session_id = session
    target = tmp_path / "page.html"
    run = run_cli(["sessions", "show", session_id, "--html", str(target)], tmp_path, home, {})
    assert run.rc == 0, run.stderr
    assert target.is_file()
    profile = tmp_path / "chromium-profile"
    try:
        done = headless_chromium(browser, ["--dump-dom", target.as_uri()], profile)
    except subprocess.TimeoutExpired:
        pytest.fail("chromium did not finish within 180 s")
    if done.returncode != 0 and not done.stdout.strip():
        pytest.skip(f"chromium cannot run here: {done.stderr.strip()[:300]}")
    dom = done.stdout
    assert f"Session {session_id}" in dom
    assert "Task 1: fix add" in dom
    assert '<span class="add">+    return a + b</span>' in dom
    assert '<span class="del">-    return a - b</span>' in dom
    assert "completed · verdict pass · 4 steps" in dom
    assert dom.count('class="step"') == 4


def _png(width: int, height: int, rgb: bytes) -> bytes:
    """A real PNG of one colour."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = zlib.crc32(kind + data) & 0xFFFFFFFF
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)

    rows = b"".join(b"\0" + rgb * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows))


def test_the_page_shows_the_images_the_model_saw(tmp_path: Path) -> None:
    """A screenshot or image file a tool returned is on the page as an image (raster types
    only, from the transcript's own copy); the text view names it."""
    if importlib.util.find_spec("mycode_builtin_tools") is None:
        pytest.skip("needs mycode-builtin-tools")
    import base64

    from mycode_core.sessions import SessionStore

    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    shot = _png(40, 30, b"\xff\x00\x00")
    (workspace / "shot.png").write_bytes(shot)
    read = {"tool_calls": [{"name": "read_file", "arguments": {"path": "shot.png"}}]}
    model = write_script(tmp_path / "turns.json", [read, {"content": "a red box"}])
    run = run_cli(["-p", "look", "--model", model, "--output-format", "stream-json"],
                  workspace, home, {"MYCODE_LOAD_PLUGINS": "builtin_tools"})  # fmt: skip
    assert run.rc == 0, run.stderr
    session_id = run.events[0]["session_id"]
    events = SessionStore(home).read_events(session_id)
    html = session_page(build_timeline(session_id, events))
    url = "data:image/png;base64," + base64.b64encode(shot).decode()
    assert f'<img class="shot" src="{url}" alt="image of read_file">' in html
    shown = run_cli(["sessions", "show", session_id], tmp_path, home, {})
    assert "shot.png: image/png image" in shown.stdout and "base64" not in shown.stdout
    for event in events:  # a block of another type is never put on the page
        if event.get("type") == "tool_result":
            event["content"][1]["mime_type"] = "image/svg+xml"
    assert "<img" not in session_page(build_timeline(session_id, events))


EVIL_ANSWER = (
    "final \x1b]52;c;cHduZWQ=\x1b\\ \x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\ \x07done"
)
EVIL_PATH = "x\x1b[2Jy\x9bz.txt"
RAW = ("\x1b", "\x07", "\x9b")
"""Bytes that drive a terminal (ESC of OSC 52 / OSC 8 / CSI, BEL, the C1 CSI)."""


def test_sessions_and_show_never_print_terminal_escapes(tmp_path: Path) -> None:
    """A transcript's text (the prompt, a model's answer, a tool's path) is shown with its
    control characters as ``^[`` text: `sessions`, `sessions show` (text) and a resume's recap."""
    if importlib.util.find_spec("mycode_builtin_tools") is None:
        pytest.skip("needs mycode-builtin-tools")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    turns = [
        {
            "tool_calls": [
                {"name": "write_file", "arguments": {"path": EVIL_PATH, "content": "a\n"}}
            ]
        },
        {"content": EVIL_ANSWER},
    ]
    model = write_script(tmp_path / "turns.json", turns)
    env = {"MYCODE_LOAD_PLUGINS": "builtin_tools", "COLUMNS": "200"}
    flags = ["--model", model, "--permission-mode", "accept-edits", "--output-format", "json"]
    run = run_cli(["-p", "hi \x1b[31mred\x07", *flags], workspace, home, env)
    assert run.rc == 0, run.stderr
    session_id = run.events[0]["session_id"]
    listed = run_cli(["sessions"], workspace, home, env)
    assert listed.rc == 0 and session_id in listed.stdout
    assert "hi ^[[31mred^G" in listed.stdout
    shown = run_cli(["sessions", "show", session_id], workspace, home, env)
    assert shown.rc == 0, shown.stderr
    assert "^[]52;c;cHduZWQ=^[\\" in shown.stdout and "^[]8;;http://evil/" in shown.stdout
    assert "x^[[2Jy<U+009B>z.txt" in shown.stdout
    for raw in RAW:
        assert raw not in listed.stdout and raw not in shown.stdout
    as_json = run_cli(["sessions", "--json"], workspace, home, env)
    assert json.loads(as_json.stdout)[0]["prompt"] == "hi \x1b[31mred\x07"  # JSON escapes them
    again = write_script(tmp_path / "again.json", [{"content": "ok"}])
    resumed = run_cli(
        ["-p", "go on", "--resume", session_id, "--model", again], workspace, home, env
    )
    assert resumed.rc == 0 and "Resuming session" in resumed.stderr
    assert "^[]52" in resumed.stderr and not any(raw in resumed.stderr for raw in RAW)


def test_show_marks_a_call_the_run_was_killed_during(
    tmp_path: Path, session: tuple[Path, str]
) -> None:
    """A transcript that ends at a tool call (the run killed mid-command) showed that call
    with a green ✓ and "(no result)", as if it had worked."""
    home, session_id = session
    transcript = home / "sessions" / f"{session_id}.jsonl"
    lines = transcript.read_text(encoding="utf-8").splitlines()
    last_call = max(i for i, line in enumerate(lines) if json.loads(line)["type"] == "tool_call")
    transcript.write_text("\n".join(lines[: last_call + 1]) + "\n", encoding="utf-8")
    run = run_cli(["sessions", "show", session_id], tmp_path, home, {"COLUMNS": "120"})
    assert run.rc == 0, run.stderr
    shown = run.stdout.splitlines()
    at = next(i for i, line in enumerate(shown) if "run_command(ls nowhere)" in line)
    assert "✗ (no result: the run stopped during this call)" in shown[at + 1]
