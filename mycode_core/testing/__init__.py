"""Helpers for testing mycode and its plugins, the way ``llm`` gives plugin authors a mock model.

* :class:`FakeOpenAIServer` — a local OpenAI-compatible chat-completions endpoint (stdlib
  ``http.server`` on 127.0.0.1, random port) that answers from a queue of scripted responses
  and records every request; with ``context_window=N`` it rejects oversized requests in a real
  server's phrasing (``mycode_core.testing.server.OPENAI_OVERFLOW``, ``LLAMA_CPP_OVERFLOW``,
  ``OPENROUTER_OVERFLOW``, ``NO_LIMIT_OVERFLOW``) and reports counted prompt tokens; it can
  serve ``/v1/models`` metadata and llama.cpp's ``/props``. Build responses with
  :func:`turn`, :func:`completion`, :func:`sse_stream`, :func:`raw_sse`, :func:`http_error`,
  :func:`dropped_connection`, :func:`cut_stream` and :func:`delayed`.
* :func:`write_script` — write a scripted-model file (SPEC §6) and get its ``--model`` id;
  :func:`script_turn` is one of its turns calling one tool.
* :func:`run_cli` — run ``mycode`` as a real subprocess and parse its stream-json output
  (:func:`start_cli` starts one a test signals; ``FakeOpenAIServer.cli_args`` gives the flags
  that point a run at the server);
  :func:`write_plugin_dist` makes a real entry-point plugin in a folder for ``PYTHONPATH``,
  :func:`write_user_plugin` a single-file plugin in ``MYCODE_HOME/plugins``.
* In-process: :func:`make_context`, :func:`make_plugin_manager`, :func:`collect_tools`,
  :func:`call_tool` (call a tool the way the core does), :class:`TurnsModel` (a recording
  scripted model), :func:`model_plugin`, :func:`tools_plugin`, :func:`make_runner`
  (:func:`child_runner`: one whose main agent starts a child agent), :func:`run_events`,
  :func:`tool_pairing_problems` to check a ``compact_context``, and :func:`installed_plugin`
  (another installed plugin, by entry-point name, for tests that run beside it) and
  :func:`requires_plugin` (a ``skipif`` mark when such a plugin is missing).

* ``mycode_core.testing.host``: ``process_alive``, ``wait_until``, ``host_processes``,
  ``signal_when_ready`` (signal a run at a moment it marks with a file), ``find_chromium`` and
  ``headless_chromium``; ``mycode_core.testing.terminal.Terminal`` drives a child on a pty.
* :func:`assert_tool_contract` — the boundary, plan-mode and mutation checks every tool must
  pass; and pytest fixtures ``mycode_workspace``, ``mycode_context`` and ``mycode_run``
  (loaded automatically through the ``pytest11`` entry point).

Nothing here imports ``openai`` or ``mcp``.

Example::

    from mycode_core.testing import FakeOpenAIServer, run_cli, turn

    with FakeOpenAIServer([turn("hello")]) as server:
        rc, events, out, err = run_cli(
            ["-p", "hi", "--model", "m", "--base-url", server.base_url, "--api-key", "x",
             "--output-format", "stream-json"], cwd=workspace, home=home)
    assert events[-1]["stop_reason"] == "completed"
"""

from mycode_core.testing.cli import (
    FAST_RETRY_CONFIG,
    ISOLATED_PREFIXES,
    CliResult,
    cli_env,
    interrupt_cli,
    mycode_command,
    run_cli,
    script_turn,
    signals_as_in_a_terminal,
    start_cli,
    write_plugin_dist,
    write_script,
    write_user_plugin,
)
from mycode_core.testing.contract import ToolContractError, assert_tool_contract
from mycode_core.testing.inprocess import (
    TurnsModel,
    call_tool,
    child_runner,
    collect_tools,
    installed_plugin,
    make_context,
    make_plugin_manager,
    make_runner,
    model_plugin,
    requires_plugin,
    run_events,
    run_prompt,
    system_prompt_for,
    tool_pairing_problems,
    tools_plugin,
)
from mycode_core.testing.responses import (
    DEFAULT_FINAL_TEXT,
    FakeResponse,
    completion,
    completion_body,
    cut_stream,
    delayed,
    dropped_connection,
    http_error,
    raw_sse,
    sse_stream,
    stalled_stream,
    stream_chunks,
    turn,
)
from mycode_core.testing.server import FakeOpenAIServer, RecordedRequest

__all__ = [
    "DEFAULT_FINAL_TEXT",
    "FAST_RETRY_CONFIG",
    "ISOLATED_PREFIXES",
    "CliResult",
    "FakeOpenAIServer",
    "FakeResponse",
    "RecordedRequest",
    "ToolContractError",
    "TurnsModel",
    "assert_tool_contract",
    "call_tool",
    "child_runner",
    "cli_env",
    "signals_as_in_a_terminal",
    "collect_tools",
    "completion",
    "completion_body",
    "cut_stream",
    "stalled_stream",
    "delayed",
    "dropped_connection",
    "http_error",
    "installed_plugin",
    "interrupt_cli",
    "make_context",
    "make_plugin_manager",
    "make_runner",
    "model_plugin",
    "mycode_command",
    "raw_sse",
    "requires_plugin",
    "run_cli",
    "run_events",
    "run_prompt",
    "sse_stream",
    "start_cli",
    "stream_chunks",
    "system_prompt_for",
    "tool_pairing_problems",
    "tools_plugin",
    "turn",
    "write_plugin_dist",
    "write_user_plugin",
    "script_turn",
    "write_script",
]
