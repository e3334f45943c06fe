"""Start-up, list_changed, crashes, hangs, shutdown: the run goes on, nothing is orphaned."""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest
from mcp_helpers import (
    PYTHON,
    assert_not_imported,
    feature,
    free_port,
    http_test_server,
    start_http_server,
)
from mycode_mcp_bridge.transports import server_group

from mycode_core.testing.host import process_alive, wait_until


def _pids(marker: Path) -> list[int]:
    return [int(line) for line in marker.read_text().split()] if marker.exists() else []


def test_register_returns_at_once_and_servers_start_concurrently(make_run, tmp_path: Path) -> None:
    # Each server takes SLOW s to start: one after the other would take 3 × SLOW. The margins
    # are whole multiples of SLOW, so a loaded machine cannot make the test fail (issue 14).
    slow = 10.0
    servers = {f"s{i}": feature("--slow-start", str(slow), startup_timeout=60) for i in range(3)}
    started = time.monotonic()
    run = make_run(servers, start=False)
    import mycode_mcp_bridge

    mycode_mcp_bridge.register_tools(register=lambda tool: None, context=run.context)
    assert time.monotonic() - started < slow / 2  # nothing waited for the servers
    assert run.context.tools.names() == []  # tools arrive with the startup task
    for task in run.context.startup_tasks:
        task()
    elapsed = time.monotonic() - started
    assert {f"mcp__s{i}__echo" for i in range(3)} <= set(run.context.tools.names())
    assert elapsed < 2.5 * slow, elapsed  # concurrent: ≈ slow; in turn: ≥ 3 × slow


def test_failures_at_start_are_reported_once_and_the_run_goes_on(make_run) -> None:
    run = make_run(
        {
            "good": feature(),
            "broken": feature("--crash-on-start"),
            "missing": {"command": "/nonexistent/bin/mcp-nothing"},
            "stuck": feature("--hang-on-start", startup_timeout=1),
        }
    )
    names = run.context.tools.names()
    assert "mcp__good__echo" in names
    resource_tools = {"list_mcp_resources", "read_mcp_resource"}  # good's resources
    assert not [n for n in names if not n.startswith("mcp__good__") and n not in resource_tools]
    notices = run.notices()
    assert len(notices) == 3
    by_server = {n.split("'")[1]: n for n in notices}
    assert "exited before completing the MCP handshake" in by_server["broken"]
    assert "missing API token FOO_TOKEN" in by_server["broken"]  # the tail of its stderr
    assert "command not found: '/nonexistent/bin/mcp-nothing'" in by_server["missing"]
    assert "did not start within 1 s" in by_server["stuck"]
    assert "features: starting" in by_server["stuck"]  # its stderr so far
    assert all(e.level == "warning" and e.source == "mcp_bridge" for e in run.of_type("notice"))
    assert run.call("mcp__good__echo", {"text": "still fine"}).content == "still fine"


def test_list_changed_adds_and_removes_tools(make_run) -> None:
    run = make_run({"feat": feature()})
    assert run.call("mcp__feat__grow", {"tool_name": "fresh"}).content == "added fresh"
    assert wait_until(lambda: "mcp__feat__fresh" in run.context.tools.names())
    assert run.call("mcp__feat__fresh", {"x": 7}).content == "fresh says 7"
    assert run.call("mcp__feat__shrink", {"tool_name": "fresh"}).content == "removed fresh"
    assert wait_until(lambda: "mcp__feat__fresh" not in run.context.tools.names())
    assert run.call("mcp__feat__shrink", {"tool_name": "peek"}).content == "removed peek"
    assert wait_until(lambda: "mcp__feat__peek" not in run.context.tools.names())


def test_crash_is_reported_and_restarted_once(make_run, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    run = make_run({"feat": feature("--marker", str(marker))})
    crashed = run.call("mcp__feat__crash")
    assert crashed.is_error and "crashed" in str(crashed.content)
    assert "restarted on the next call" in str(crashed.content)
    assert run.call("mcp__feat__echo", {"text": "back"}).content == "back"
    assert len(_pids(marker)) == 2  # restarted once
    again = run.call("mcp__feat__crash")
    assert again.is_error and "will not be restarted" in str(again.content)
    after = run.call("mcp__feat__echo", {"text": "gone"})
    assert after.is_error and "unavailable" in str(after.content)
    assert len(_pids(marker)) == 2  # not restarted a second time
    notices = run.notices()
    crash_notices = [n for n in notices if "crashed" in n]
    assert len(crash_notices) == 2
    assert "simulated crash" in crash_notices[0]  # stderr tail
    assert len(notices) == 2  # the "unavailable" call is not reported again


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
@pytest.mark.parametrize("pidfd", [True, False], ids=["pidfd", "poll"])
def test_crash_is_reported_at_once_while_a_helper_holds_stdout(
    make_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pidfd: bool
) -> None:
    """The server dies during a call, but the helper it started keeps the pipe open (no end of
    stream): the call fails as a crash long before its 600 s timeout,
    and the helper goes with the server's process group. Without a pidfd, the process is
    checked while the call is pending."""
    if pidfd and not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd_open on this system")
    if not pidfd:
        monkeypatch.delattr(os, "pidfd_open", raising=False)
    pid_file = tmp_path / "helper"
    run = make_run({"feat": feature(timeout=600, startup_timeout=60)})
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        pending = pool.submit(
            run.call, "mcp__feat__crash_leaving_helper", {"pid_file": str(pid_file)}
        )
        crashed = pending.result(timeout=120)  # not noticed, it would last the call timeout
        helper = int(pid_file.read_text())
        assert crashed.is_error and "crashed during the call" in str(crashed.content)
        assert "exited unexpectedly" in str(crashed.content)
        assert "restarted on the next call" in str(crashed.content)
        assert wait_until(lambda: not process_alive(helper), 30)
        assert run.call("mcp__feat__echo", {"text": "back"}).content == "back"
        notices = [n for n in run.notices() if "crashed" in n]
        assert len(notices) == 1 and "exited unexpectedly; it will be restarted" in notices[0]
        assert "fatal: crashed, leaving a helper behind" in notices[0]  # its stderr tail
    finally:
        pool.shutdown(wait=False)
        if pid_file.exists() and process_alive(helper := int(pid_file.read_text())):
            os.kill(helper, signal.SIGKILL)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_a_crash_at_the_handshake_is_noticed_while_a_helper_holds_stdout(
    make_run, tmp_path: Path
) -> None:
    """The server dies answering ``initialize`` and a helper it started keeps the pipe open:
    start-up fails at once as a crash (not at its 600 s start-up limit), and the helper goes
    with the server's process group."""
    pid_file = tmp_path / "helper"
    flags = ("--crash-at-handshake-leaving-helper", str(pid_file))
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        run = pool.submit(make_run, {"feat": feature(*flags, startup_timeout=600)}).result(120)
        [notice] = run.notices()
        assert "exited before completing the MCP handshake" in notice
        assert "fatal: crashed at the handshake" in notice  # its stderr tail
        assert wait_until(lambda: not process_alive(int(pid_file.read_text())), 30)
    finally:
        pool.shutdown(wait=False)
        if pid_file.exists() and process_alive(helper := int(pid_file.read_text())):
            os.kill(helper, signal.SIGKILL)


def test_idle_crash_is_noticed_and_next_call_restarts(make_run, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    run = make_run({"feat": feature("--marker", str(marker))})
    import os
    import signal

    os.kill(_pids(marker)[0], signal.SIGKILL)
    assert wait_until(lambda: any("crashed" in n for n in run.notices()))
    assert run.call("mcp__feat__echo", {"text": "revived"}).content == "revived"
    assert len(_pids(marker)) == 2


def test_timeout_and_hung_server(make_run, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    run = make_run({"feat": feature("--marker", str(marker), timeout=1.5)})
    slow = run.call("mcp__feat__nap", {"seconds": 5})
    assert slow.is_error and "timed out after 1.5 s" in str(slow.content)
    assert run.call("mcp__feat__echo", {"text": "alive"}).content == "alive"  # not hung
    started = time.monotonic()
    hung = run.call("mcp__feat__hang")
    assert hung.is_error and "timed out" in str(hung.content)
    assert time.monotonic() - started < 5
    assert wait_until(lambda: any("hung" in n for n in run.notices()), 10)
    first = _pids(marker)[0]
    assert run.call("mcp__feat__echo", {"text": "restarted"}).content == "restarted"
    assert wait_until(lambda: not process_alive(first), 10)
    notices = run.notices()
    assert any("did not answer 'nap' within 1.5 s" in n for n in notices)
    assert any("hanging now" in n for n in notices if "hung" in n)


def test_cancelled_turn_stops_waiting(make_run) -> None:
    run = make_run({"feat": feature()})
    threading.Timer(0.3, run.context.cancelled.set).start()
    started = time.monotonic()
    result = run.call("mcp__feat__nap", {"seconds": 20})
    assert result.is_error and "cancelled" in str(result.content)
    assert time.monotonic() - started < 5
    run.context.cancelled.clear()
    assert run.call("mcp__feat__echo", {"text": "next"}).content == "next"


def test_registering_twice_starts_once(make_run, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    run = make_run({"feat": feature("--marker", str(marker))})
    import mycode_mcp_bridge

    mycode_mcp_bridge.register_tools(register=lambda tool: None, context=run.context)
    time.sleep(0.5)
    assert len(_pids(marker)) == 1


def test_clean_shutdown_leaves_no_process(make_run, tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    run = make_run(
        {
            "a": feature("--marker", str(marker)),
            "b": feature("--marker", str(marker)),
            "stuck": feature("--marker", str(marker), "--hang-on-start", startup_timeout=1),
        }
    )
    pids = _pids(marker)
    assert len(pids) == 3
    started = time.monotonic()
    run.close()
    assert time.monotonic() - started < 10
    assert wait_until(lambda: not any(process_alive(p) for p in pids), 10)
    after = run.call("mcp__a__echo", {"text": "x"})
    assert after.is_error
    run.close()  # idempotent


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_what_a_server_started_in_its_group_is_stopped_with_it(make_run, tmp_path: Path) -> None:
    """The real mcp-server-time behind a wrapper that starts a helper in the background: the
    server exits when its stdin closes, and the helper it left in its process group is
    stopped too (it used to outlive mycode)."""
    marker = tmp_path / "helpers"
    time_server = str(Path(PYTHON).parent / "mcp-server-time")
    wrapper = f'sleep 600 & echo $! >> {marker}; exec "$0" --local-timezone UTC'
    run = make_run({"time": {"command": "sh", "args": ["-c", wrapper, time_server]}})
    assert not run.call("mcp__time__get_current_time", {"timezone": "UTC"}).is_error
    helpers = _pids(marker)
    assert len(helpers) == 1 and process_alive(helpers[0])
    assert server_group(run.bridge.connections["time"].log_path) is not None
    try:
        run.close()
        assert wait_until(lambda: not process_alive(helpers[0]), 20)
    finally:
        if process_alive(helpers[0]):
            os.kill(helpers[0], signal.SIGKILL)


def test_exit_without_cleanup_still_stops_servers(tmp_path: Path) -> None:
    marker = tmp_path / "pids"
    config = json.dumps({"mcpServers": {"a": feature("--marker", str(marker))}})
    script = textwrap.dedent(
        f"""
        import json
        from pathlib import Path
        from mycode_core.config import Settings
        from mycode_core.records import RunContext
        import mycode_mcp_bridge
        ctx = RunContext(workspace=Path({str(tmp_path)!r}), home=Path({str(tmp_path / "h")!r}),
                         settings=Settings(mcp_config_files=[{config!r}]), session_id="x")
        mycode_mcp_bridge.register_tools(register=lambda t: None, context=ctx)
        for task in ctx.startup_tasks:
            task()
        assert "mcp__a__echo" in ctx.tools.names()
        print("started")
        """
    )
    done = subprocess.run([PYTHON, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "started" in done.stdout
    pids = _pids(marker)
    assert pids and wait_until(lambda: not any(process_alive(p) for p in pids), 10)


def test_http_server_with_expanded_headers(make_run, monkeypatch) -> None:
    monkeypatch.setenv("MYCODE_TEST_TOKEN", "tok-123")
    with http_test_server() as port:
        run = make_run(
            {
                "web": {
                    "type": "http",
                    "url": f"http://127.0.0.1:{port}/mcp",
                    "headers": {"Authorization": "Bearer ${MYCODE_TEST_TOKEN}", "X-Team": "blue"},
                }
            }
        )
        assert run.call("mcp__web__whoami").content == "auth=Bearer tok-123 team=blue"
        add = run.context.tools.get("mcp__web__add")
        assert add is not None and add.read_only
        assert run.call("mcp__web__add", {"a": 2, "b": 3}).content == "5"


def test_a_headers_helper_lays_its_headers_over_the_entrys(make_run, workspace: Path) -> None:
    """Claude Code's ``headersHelper``: a command run in the workspace when the connection
    opens, told the server's name; the JSON object it prints wins over ``headers``. One that
    fails, or prints something else, is its server's start-up error, in one line."""
    helper = (
        'printf \'{"Authorization": "Bearer %s-%s"}\' '
        '"$CLAUDE_CODE_MCP_SERVER_NAME" "$(basename "$PWD")"'
    )
    static = {"Authorization": "Bearer static", "X-Team": "blue"}
    with http_test_server() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        run = make_run(
            {
                "web": {"type": "http", "url": url, "headers": static, "headersHelper": helper},
                "failing": {"type": "http", "url": url, "headersHelper": "echo no >&2; exit 4"},
                "chatty": {"type": "http", "url": url, "headersHelper": "echo hello"},
            }
        )
        whoami = run.call("mcp__web__whoami").content
        assert whoami == f"auth=Bearer web-{workspace.name} team=blue"
        notices = sorted(run.notices())
        assert len(notices) == 2, notices
        assert "'chatty' failed to start: headersHelper must print a JSON object" in notices[0]
        assert "'failing' failed to start: headersHelper exited with 4: no" in notices[1]


def test_sse_server(make_run) -> None:
    with http_test_server("sse") as port:
        run = make_run(
            {
                "old": {
                    "type": "sse",
                    "url": f"http://127.0.0.1:{port}/sse",
                    "headers": {"X-Team": "red"},
                }
            }
        )
        assert run.call("mcp__old__add", {"a": 40, "b": 2}).content == "42"
        assert "team=red" in str(run.call("mcp__old__whoami").content)


def test_secret_in_a_failing_url_is_not_shown(make_run, monkeypatch) -> None:
    """An SSE URL with ``${VAR}`` that the server refuses (404): the reason quotes the URL, but
    with ``${VAR}`` where the secret was, in the notice and in ``/mcp``'s status alike; so is
    the stderr of a stdio server that prints the token it was given."""
    monkeypatch.setenv("MYCODE_TEST_TOKEN", "tok-SECRET-42")
    with http_test_server("sse") as port:
        run = make_run(
            {
                "old": {
                    "type": "sse",
                    "url": f"http://127.0.0.1:{port}/nowhere?key=${{MYCODE_TEST_TOKEN}}",
                    "startup_timeout": 20,
                },
                "sh": {
                    "command": "sh",
                    "args": ["-c", 'echo "token $T refused" >&2; exit 3'],
                    "env": {"T": "${MYCODE_TEST_TOKEN}"},
                },
            }
        )
        notices = sorted(run.notices())
        assert len(notices) == 2 and "MCP server 'old' failed to start" in notices[0]
        assert "404" in notices[0] and "key=${MYCODE_TEST_TOKEN}" in notices[0]
        assert "token ${MYCODE_TEST_TOKEN} refused" in notices[1]
        assert not any("tok-SECRET-42" in notice for notice in notices)
        assert "tok-SECRET-42" not in json.dumps(run.bridge.status())


def test_unreachable_http_server_is_reported(make_run) -> None:
    port = free_port()
    run = make_run(
        {"web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "startup_timeout": 3}}
    )
    assert run.context.tools.names() == []
    notices = run.notices()
    assert len(notices) == 1 and "MCP server 'web' failed to start" in notices[0]


def test_module_import_stays_light() -> None:
    code = (
        "import sys, mycode_mcp_bridge, mycode_mcp_bridge.cli;"
        "import click; g = click.Group(); mycode_mcp_bridge.register_commands(cli=g);"
        "bad = [m for m in ('mcp', 'anyio', 'httpx2', 'openai', 'rich') if m in sys.modules];"
        "print(bad); assert not bad"
    )
    assert_not_imported(code)


def test_mcp_section_options(workspace: Path, home: Path, runs) -> None:
    from mcp_helpers import Run

    from mycode_core.config import load_settings

    (home / "config.toml").write_text("[mcp]\ncall_timeout = 1\nmax_output_chars = 50\n")
    (home / "mcp.json").write_text(json.dumps({"mcpServers": {"feat": feature()}}))
    run = Run(workspace, home, settings=load_settings(workspace, home)).start()
    runs.append(run)
    capped = run.call("mcp__feat__huge", {"chars": 500})
    assert str(capped.content).startswith(
        "0123456789" * 5 + "\n[output truncated: showing 50 of 500"
    )
    slow = run.call("mcp__feat__nap", {"seconds": 3})
    assert slow.is_error and "timed out after 1 s" in str(slow.content)


@pytest.mark.parametrize("when", ["mid-call", "between calls"])
def test_an_http_server_that_restarts_gets_a_new_session(make_run, when: str) -> None:
    """A streamable-HTTP server that ends (mid-call, or between calls) and comes back on the
    same port: the old session is dropped and a new one opened. Before, a call cut mid-way
    waited 5 s and reported "crashed: None", and every later call failed with the server's
    "Session not found"; a restart between calls failed each call the same way."""
    port = free_port()
    proc = start_http_server(port)
    try:
        run = make_run({"web": {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"}})
        assert run.call("mcp__web__add", {"a": 1, "b": 1}).content == "2"
        if when == "mid-call":
            died = run.call("mcp__web__die")
            assert died.is_error and "the connection closed during a call" in str(died.content)
            proc.wait(10)
        else:
            proc.terminate()
            proc.wait(10)
        proc = start_http_server(port)
        assert run.call("mcp__web__add", {"a": 2, "b": 3}).content == "5"
        assert run.call("mcp__web__add", {"a": 2, "b": 4}).content == "6"
        assert not [n for n in run.notices() if "None" in n], run.notices()
    finally:
        proc.terminate()
        proc.wait(10)


def test_an_sse_server_that_goes_away_is_a_closed_connection_not_a_process(make_run) -> None:
    """It was reported as "the server process exited unexpectedly"; mycode runs no process."""
    port = free_port()
    proc = start_http_server(port, "sse")
    try:
        run = make_run({"web": {"type": "sse", "url": f"http://127.0.0.1:{port}/sse"}})
        assert run.call("mcp__web__add", {"a": 1, "b": 1}).content == "2"
    finally:
        proc.terminate()
        proc.wait(10)
    assert wait_until(lambda: any("'web' crashed" in n for n in run.notices()), 10)
    (notice,) = run.notices()
    assert "crashed: the connection to the server closed; it will be" in notice, notice


def test_servers_whose_names_differ_only_in_punctuation_are_kept_apart(make_run) -> None:
    """``a.b`` and ``a_b`` shared one log file, which also tells mycode which process is the
    server's: a crash of one was reported as a crash of both, with both stderr mixed."""
    run = make_run({"a.b": feature("--name", "dotted"), "a_b": feature("--name", "plain")})
    crash = next(t for t in run.context.tools.all() if t.description.startswith("[MCP a_b] Crash"))
    assert run.call(crash.name).is_error
    assert wait_until(lambda: any("'a_b' crashed" in n for n in run.notices()), 10)
    notices = run.notices()
    assert not [n for n in notices if "'a.b'" in n], notices
    (plain,) = notices
    assert "plain: starting" in plain and "dotted" not in plain
    echo = next(t for t in run.context.tools.all() if t.description.startswith("[MCP a.b] Echo"))
    assert run.call(echo.name, {"text": "still here"}).content == "still here"
