"""Rendering the event stream: ``text`` (what a person watches), ``json`` and ``stream-json``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

from mycode_core.cli.output_lost import OutputLost
from mycode_core.cli.richtext import (
    MarkdownStream,
    content_text,
    diff_lines,
    line_count,
    plural,
    result_line,
    retry_text,
    safe_stream,
)
from mycode_core.cli.spinner import Spinner
from mycode_core.events import AgentEvent

__all__ = ["JsonRenderer", "StreamJsonRenderer", "TextRenderer", "describe_call", "result_line"]


def write_line(text: str) -> None:
    """Write ``text`` and a newline to stdout, all of it, now.

    Under ``PYTHONUNBUFFERED`` stdout's byte layer is the raw file, and a signal arriving while
    a write to a full pipe blocks makes the write return short; ``sys.stdout.write`` would drop
    the rest of the line. This writes the bytes until every one is out.
    """
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a replaced stdout (tests, embedding): a text stream only
        stream.write(text + "\n")
        stream.flush()
        return
    stream.flush()
    data = memoryview((text + "\n").encode(stream.encoding or "utf-8", stream.errors or "strict"))
    while data:
        written = buffer.write(data)
        if written is None:  # a non-blocking stdout that is full: wait until it drains
            import select

            select.select([], [stream.fileno()], [])
            continue
        data = data[written:]
    buffer.flush()


class StreamJsonRenderer:
    """One JSON event per line on stdout."""

    def handle(self, event: AgentEvent) -> None:
        """Print the event."""
        write_line(event.to_json())

    def close(self) -> None:
        """Nothing to release."""


class JsonRenderer:
    """Only the ``result`` object."""

    def handle(self, event: AgentEvent) -> None:
        """Print the result event; ignore the rest."""
        if event.type == "result":
            write_line(event.to_json())

    def close(self) -> None:
        """Nothing to release."""


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe_call(name: str, arguments: Any) -> str:
    """A one-line summary of a tool call for people."""
    if isinstance(arguments, dict):
        for key in ("command", "path", "pattern", "url"):
            if isinstance(arguments.get(key), str):
                return f"{name}({_short(arguments[key], 80)})"
        if name == "todo_write" and isinstance(arguments.get("todos"), list):
            return f"{name}({len(arguments['todos'])} items)"
        if name == "delegate_task" and isinstance(arguments.get("task"), str):  # issue 11
            what = arguments.get("description") or arguments["task"]
            return f"{name}({arguments.get('agent') or 'general'}: {_short(what, 70)})"
    return f"{name}({_short(arguments, 80)})"


class TextRenderer:
    """Live view for a person: streamed text, tool calls and short results, a spinner, a summary.

    The assistant's words stream to stdout when it is a terminal; otherwise only the final answer
    is printed there, and the live view goes to stderr.
    """

    def __init__(self, interactive: bool = False) -> None:
        self.out_tty = sys.stdout.isatty()
        self._view = sys.stdout if self.out_tty else sys.stderr
        self._console: Any = None
        self._stdout: Any = None
        self._markdown: MarkdownStream | None = None
        self.interactive = interactive
        self.spinner = Spinner()
        self.streaming = False
        self.thinking = False
        """The text streaming now is the model's thinking (shown dim, ended by its answer)."""
        self.calls: dict[str, str] = {}
        self.last_call: str | None = None

    # rich costs tens of ms to import: made at the first line shown, not before the first request
    @property
    def console(self) -> Any:
        """The live view's rich console (stdout on a terminal, else stderr)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=safe_stream(self._view), highlight=False)
            self._console.soft_wrap = not self._console.is_terminal  # wrap words on terminals
            dumb = os.environ.get("TERM", "") in ("dumb", "unknown")
            if self._console.is_terminal and not dumb:
                self._markdown = MarkdownStream(self._console)
        return self._console

    @property
    def stdout(self) -> Any:
        """A rich console on stdout, for the final answer."""
        if self._stdout is None:
            from rich.console import Console

            self._stdout = Console(file=safe_stream(sys.stdout), highlight=False, soft_wrap=True)
        return self._stdout

    @property
    def markdown(self) -> MarkdownStream | None:
        """The streaming Markdown view on a terminal (``None`` in a log or a dumb terminal)."""
        return self._markdown if self.console is not None else None

    def _surely_no_terminal(self) -> bool:
        """The view is no terminal and nothing asks rich to treat it as one (so no spinner)."""
        forced = ("FORCE_TERMINAL", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
        return not self._view.isatty() and not any(os.environ.get(name) for name in forced)

    def _spin(self, message: str) -> None:
        if self._console is None and self._surely_no_terminal():
            return
        if not self.console.is_terminal:
            return
        if self._markdown is not None:
            self._markdown.hide()  # one live region at a time: the preview comes back with text
        self.spinner.show(self.console, message)

    def show_queued(self, note: str) -> None:
        """Keys typed during the turn (told from the keyboard's thread): after the spinner's
        words, so the user sees them kept and does not type them again."""
        self.spinner.show_queued(note)

    def _unspin(self) -> None:
        self.spinner.stop()

    def _end_stream(self) -> None:
        if self.markdown is not None and self.markdown.active:
            self.markdown.flush()
            self.streaming = False
        if self.streaming:
            self.console.file.write("\n\n" if self.thinking else "\n")
            self.console.file.flush()
            self.streaming = False
        self.thinking = False

    def handle(self, event: AgentEvent) -> None:
        """Show one event."""
        data: Any = event
        kind = event.type
        if event.agent_id is not None:
            self._child_event(data)
            return
        if kind == "step_start":
            self._spin("thinking…")
        elif kind == "reasoning_delta":
            if self.out_tty or self.interactive:
                self._unspin()
                if not self.thinking:
                    self._end_stream()
                text = neutralise(data.text)
                self.console.print(text, style="dim italic", end="", markup=False, soft_wrap=True)
                self.streaming = self.thinking = True
        elif kind == "text_delta":
            self._unspin()
            if self.thinking:
                self._end_stream()
            if self.markdown is not None and (self.out_tty or self.interactive):
                self.markdown.feed(neutralise(data.text))
            elif self.out_tty or self.interactive:
                self.console.file.write(neutralise(data.text))
                self.console.file.flush()
                self.streaming = True
        elif kind == "tool_call":
            self._unspin()
            self._end_stream()
            line = describe_call(data.name, data.arguments)
            self.calls[data.id] = line
            self.last_call = data.id
            self._say(f"[cyan]●[/cyan] {_escape(line)}")
            self._spin(f"running {data.name}…")
        elif kind == "tool_result":
            self._unspin()
            text = content_text(data.content)
            first = _short(result_line(text, data.metadata), 110)
            mark = "[red]✗[/red]" if data.is_error else "[green]⎿[/green]"
            lines = line_count(text)  # a command's real count, not what the model was shown
            diff = data.metadata.get("diff") if isinstance(data.metadata, dict) else None
            if isinstance(diff, str) and diff.strip():
                lines = 1  # the diff below says what changed
            more = f" [dim](+{plural(lines - 1, 'line')})[/dim]" if lines > 1 else ""
            # in a parallel batch the results follow all the calls: say which call this answers
            owner = self.calls.get(data.id, data.name)
            label = f"[dim]{_escape(owner)}:[/dim] " if data.id != self.last_call else ""
            self._say(f"  {mark} {label}{_escape(first)}{more}")
            if isinstance(diff, str) and diff.strip() and not data.is_error:
                self._show_diff(diff)
        elif kind == "progress":  # a long tool call reporting how far it got (MCP progress)
            self._spin(progress_line(data))
        elif kind == "guidance":
            self._end_stream()
            self._say(f"[yellow]↻ {data.source}:[/yellow] {_escape(_short(data.message, 200))}")
        elif kind == "retry":  # with the server's words: the status and its message
            self._unspin()
            line = retry_text(data.attempt, data.delay, data.reason, data.message)
            head, _, rest = line.partition(": ")
            self._say(f"[yellow]{_escape(head)}:[/yellow] {_escape(rest)}")
        elif kind == "notice" and not _on_stderr_already(data):
            self._unspin()
            self._say(f"[yellow]mycode: {_escape(data.message)}[/yellow]")
        elif kind == "compaction":
            self._unspin()
            self.console.print(f"[dim]{_escape(compaction_line(data))}[/dim]", markup=True)
        elif kind == "assistant":
            self._end_stream()
        elif kind == "result":
            self._finish(data)

    def _say(self, markup: str) -> None:
        """Print rich markup (its values escaped already), nothing highlighted."""
        self.console.print(markup, markup=True, highlight=False)

    def _show_diff(self, diff: str) -> None:
        from rich.text import Text

        for style, line in diff_lines(diff):
            self.console.print(Text("    " + line, style=style), soft_wrap=True)

    def _child_event(self, event: Any) -> None:
        """Issue 11: a subagent's progress, collapsed to one live line under its call on a
        terminal (one indented line per call in a log); its words are never streamed."""
        kind = event.type
        if kind == "tool_call":
            line = f"{event.agent_id}: {describe_call(event.name, event.arguments)}"
            if self.console.is_terminal:
                self._spin(f"  ⎿ {line}")
            else:
                self.console.print(f"    [dim]⎿ {_escape(line)}[/dim]", markup=True)
        elif kind == "step_start" and self.console.is_terminal:
            self._spin(f"  ⎿ {event.agent_id}: thinking… (step {event.step})")
        elif kind == "notice":
            self._unspin()
            self._say(f"    [yellow]{_escape(event.agent_id)}: {_escape(event.message)}[/yellow]")

    def _finish(self, result: Any) -> None:
        self._unspin()
        self._end_stream()
        if not (self.out_tty or self.interactive) and result.final_text:
            self.stdout.file.write(neutralise(result.final_text.rstrip()) + "\n")
            self.stdout.file.flush()
        tokens = result.usage.get("input_tokens", 0) + result.usage.get("output_tokens", 0)
        seconds = result.duration_ms / 1000
        colour = "green" if result.stop_reason == "completed" else "red"
        summary = (
            f"[{colour}]{result.stop_reason}[/{colour}] · verdict {result.verdict} · "
            f"{plural(result.steps, 'step')} · {plural(tokens, 'token')} · {seconds:.1f}s"
            f"{cost_and_context(result)}"
        )
        if result.error and result.stop_reason != "completed":
            summary += f"\n[red]{_escape(result.error)}[/red]"
        self._say(summary)

    def pause(self) -> None:
        """Give the terminal to someone else (a question): stop the spinner, end the line."""
        self._unspin()
        self._end_stream()

    def close(self) -> None:
        """Stop the spinner."""
        self._unspin()


def progress_line(event: Any) -> str:
    """The spinner's text for a ``progress`` event: ``running SOURCE… MESSAGE (3/10)``."""
    done, total = event.progress, event.total
    count = ""
    if isinstance(done, int | float):
        count = f"{done:g}/{total:g}" if isinstance(total, int | float) and total else f"{done:g}"
    message = _short(" ".join(str(event.message or "").split()), 80)
    parts = [part for part in (message, f"({count})" if count else "") if part]
    return " ".join([f"running {event.source}…", *parts])


_CONTROL = {c: f"^{chr(c + 64)}" for c in range(32) if chr(c) not in "\n\t"}
_CONTROL.update({0x7F: "^?", **{c: f"<U+{c:04X}>" for c in range(0x80, 0xA0)}})


def neutralise(text: str) -> str:
    """Control characters shown as ``^[``-style text, so escape sequences in tool output or
    model text can never drive the user's terminal (issue 13)."""
    text = text.encode("utf-8", "replace").decode("utf-8")  # unpaired surrogates -> "?"
    return text.replace("\r\n", "\n").translate(_CONTROL)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(neutralise(text))


def render_turn(
    runner: Any,
    prompt: str,
    renderer: Any,
    cancel_requested: Callable[[], bool] | None = None,
    request: str | None = None,
    typed: str | None = None,
) -> Any:
    """Run one turn, showing each event; Ctrl-C cancels the turn. Returns the ``result`` event.
    ``request``: the line the user typed, when a slash command expanded it to ``prompt``;
    ``typed`` (default: ``request``), recorded ahead of the turn as the user's own words.

    A ``KeyboardInterrupt`` while an event is shown cancels the turn like one while waiting, so
    the loop always drains the turn to its ``result``. ``cancel_requested`` tells of a stop
    asked for before the turn began (a signal handler's), which the turn's start would clear.
    """
    from mycode_core.cli.typed_words import record

    result = None
    typed = request if typed is None else typed
    if typed:
        record(runner, typed)
    events = runner.run(prompt) if request is None else runner.run(prompt, request=request)
    lost: OSError | None = None
    try:
        while True:
            try:
                event = next(events)
            except StopIteration:
                break
            except KeyboardInterrupt:
                runner.cancel()
                continue
            if event.type == "result":
                result = event
            try:
                if cancel_requested is not None and cancel_requested():
                    runner.cancel()
                if lost is None:
                    renderer.handle(event)
            except KeyboardInterrupt:
                runner.cancel()
            except OSError as exc:  # nowhere to show the turn: stop it, drain it to its result
                lost = exc
                runner.cancel()
    finally:
        try:
            renderer.close()
        except OSError as exc:
            lost = lost or exc
    if lost is not None:
        raise OutputLost(lost, str(runner.session_id))
    return result


def make_renderer(output_format: str, interactive: bool = False) -> Any:
    """The renderer for an ``--output-format``."""
    if output_format == "stream-json":
        return StreamJsonRenderer()
    if output_format == "json":
        return JsonRenderer()
    return TextRenderer(interactive=interactive)


def compaction_line(data: Any) -> str:
    """The one-line notice of a ``compaction`` event (issue 9)."""
    line = (
        f"context compacted ({data.reason or 'proactive'}): ~{data.before_tokens} → "
        f"~{data.after_tokens} tokens"
    )
    if data.context_window:
        line += f", window {data.context_window} ({data.window_source or 'default'})"
    if getattr(data, "stage", None):
        line += f"; {data.stage}, #{data.count}"
    return line


def cost_and_context(result: Any) -> str:
    """`` · $0.0123 · context 15.4k/128k (12%)`` for the summary line: the cost is left out
    when the model's price is unknown, the context when the window is."""
    cost = getattr(result, "cost_usd", None)
    text = f" · ${cost:.4f}" if cost is not None else ""
    context = getattr(result, "context", None) or {}
    if context.get("window") and context.get("percent") is not None:
        used, window = _kilo(int(context.get("used") or 0)), _kilo(int(context["window"]))
        text += f" · context {used}/{window} ({context['percent']:g}%)"
    return text


def _kilo(tokens: int) -> str:
    """``950``, ``15.4k``, ``128k``: a token count in a few characters."""
    if tokens < 1000:
        return str(tokens)
    return f"{tokens / 1000:.1f}".removesuffix(".0") + "k"


def _on_stderr_already(notice: Any) -> bool:
    """Notices printed on stderr when they happened (observers, plugins that failed to load and
    plugin files skipped while the plugin manager was built): the text view does not print
    them twice."""
    return getattr(notice, "hook", None) in ("on_event", "load") or notice.source == "plugin_files"
