"""A stored session as people read it: turns, steps, tool calls, diffs, guidance, tokens.

:func:`build_timeline` turns a transcript's events (the dicts ``SessionStore.read_events``
returns) into a :class:`Timeline`; :func:`render_timeline` prints it with rich (``mycode
sessions show ID``); :func:`recap_lines` is the short recap printed when a session is resumed.
The HTML page of the same timeline is :mod:`mycode_core.cli.session_html`.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from mycode_core.cli.output import neutralise
from mycode_core.cli.richtext import content_text, diff_lines, plural, result_line, retry_text
from mycode_core.sessions import user_words


@dataclass
class ToolStep:
    """One tool call and its result."""

    id: str
    name: str
    arguments: dict[str, Any]
    result: str = ""
    is_error: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)
    decision: str | None = None
    answered: bool = False
    images: list[str] = field(default_factory=list)
    """The images of the result (a screenshot, an image file read), as ``data:`` URLs."""

    @property
    def summary(self) -> str:
        """The call in one line: ``name(command or path)``."""
        for key in ("command", "path", "pattern", "url", "task", "name"):
            value = self.arguments.get(key)
            if isinstance(value, str):
                return f"{self.name}({_one_line(value, 90)})"
        return f"{self.name}({_one_line(json.dumps(self.arguments, ensure_ascii=False), 90)})"

    @property
    def result_summary(self) -> str:
        """The telling line of the result."""
        if not self.answered:
            return "(no result: the run stopped during this call)"
        return result_line(self.result, self.metadata)

    @property
    def diff(self) -> str:
        """The unified diff an edit or write recorded, or ``""``."""
        value = self.metadata.get("diff")
        return value if isinstance(value, str) else ""


@dataclass
class Step:
    """One model turn and what it led to."""

    number: int
    text: str = ""
    tools: list[ToolStep] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    """``(kind, text)``: guidance, retries, notices, compactions, checkpoints."""
    tokens: int = 0


@dataclass
class Turn:
    """One task the user gave, its steps and how it ended."""

    prompt: str
    steps: list[Step] = field(default_factory=list)
    notes: list[tuple[str, str]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    after: list[str] = field(default_factory=list)
    """What happened once the task ended: ``/rewind`` cutting the conversation back."""


@dataclass
class Timeline:
    """A whole session."""

    session_id: str
    model: str = ""
    cwd: str = ""
    started: float | None = None
    tools: list[str] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        """Tokens over every turn (from the results)."""
        return sum(_tokens(t.result) for t in self.turns if t.result)

    @property
    def changed_files(self) -> list[str]:
        """Files the session's tools reported changing, in order."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            for step in turn.steps:
                for tool in step.tools:
                    for path in tool.metadata.get("mutated") or ():
                        seen.setdefault(str(path), None)
        return list(seen)


SHOWN_LINES = 12
"""Lines of a model answer the text timeline shows (the rest is counted, not dropped silently)."""


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _tokens(result: dict[str, Any] | None) -> int:
    usage = _mapping((result or {}).get("usage"))
    return _number(usage.get("input_tokens")) + _number(usage.get("output_tokens"))


def _number(value: Any) -> int:
    """A count a transcript holds (0 for anything a hand-edited transcript may hold there)."""
    try:
        return int(value or 0)
    except (TypeError, ValueError, OverflowError):
        return 0


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


SHOWN_IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")


def image_urls(content: Any) -> list[str]:
    """``data:`` URLs of a result's image blocks (PNG, JPEG, GIF, WebP only: nothing a page
    could run)."""
    blocks = content if isinstance(content, list) else []
    return [
        f"data:{block['mime_type']};base64,{block['data']}"
        for block in blocks
        if isinstance(block, dict)
        and block.get("type") == "image"
        and block.get("mime_type") in SHOWN_IMAGES
        and isinstance(block.get("data"), str)
        and re.fullmatch(r"[A-Za-z0-9+/=\s]*", block["data"])
    ]


def build_timeline(session_id: str, events: list[dict[str, Any]]) -> Timeline:
    """The timeline of a transcript (events of subagents, with ``agent_id``, are left out)."""
    timeline = Timeline(session_id=session_id)
    turn: Turn | None = None
    step: Step | None = None
    calls: dict[str, ToolStep] = {}
    typed = ""  # the user's words of the next turn, when the model was sent more (/greet Marie)
    for event in events:
        if event.get("agent_id"):
            continue
        kind = event.get("type")
        if kind == "result":  # a turn that sent nothing (a blocked prompt) leaves no words
            typed = ""
        if kind == "typed":
            typed = str(event.get("text", ""))
        elif kind == "system" and not timeline.model:
            timeline.model = str(event.get("model", ""))
            timeline.cwd = str(event.get("cwd", ""))
            timeline.started = event.get("ts")
            tools = event.get("tools")
            timeline.tools = [str(tool) for tool in tools] if isinstance(tools, list) else []
        elif kind == "user":
            turn = Turn(prompt=typed or user_words(str(event.get("content", ""))))
            typed = ""
            images = event.get("images")  # attached, kept under MYCODE_HOME
            for image in images if isinstance(images, list) else ():
                if isinstance(image, dict):
                    turn.notes.append(
                        ("image", f"{image.get('name')} (saved: {image.get('path')})")
                    )
            timeline.turns.append(turn)
            step = None
        elif turn is None:
            continue
        elif kind == "step_start":
            step = Step(number=_number(event.get("step")) or len(turn.steps) + 1)
            turn.steps.append(step)
        elif kind == "assistant" and step is not None:
            if event.get("content"):
                step.text = (step.text + "\n\n" if step.text else "") + str(event["content"])
            step.tokens += _tokens(event)
        elif kind == "tool_call" and step is not None:
            tool = ToolStep(
                id=str(event.get("id")),
                name=str(event.get("name")),
                arguments=_mapping(event.get("arguments")),
            )
            calls[tool.id] = tool
            step.tools.append(tool)
        elif kind == "permission" and str(event.get("id")) in calls:
            calls[str(event["id"])].decision = event.get("decision")
        elif kind == "tool_result" and str(event.get("id")) in calls:
            tool = calls[str(event["id"])]
            tool.result = content_text(event.get("content", ""))
            tool.images = image_urls(event.get("content"))
            tool.is_error = bool(event.get("is_error"))
            tool.metadata = dict(_mapping(event.get("metadata")))
            tool.answered = True
        elif kind in ("guidance", "retry", "notice", "compaction", "checkpoint"):
            note = (kind, _note_text(event))
            (step.notes if step is not None else turn.notes).append(note)
        elif kind == "result":
            turn.result = event
        elif kind == "rewind":
            turn.after.append(rewind_text(event))
    return timeline


def _note_text(event: dict[str, Any]) -> str:
    kind = event.get("type")
    if kind == "guidance":
        return f"{event.get('source')}: {event.get('message', '')}"
    if kind == "retry":
        return retry_text(
            event.get("attempt"), event.get("delay"), event.get("reason"), event.get("message")
        )
    if kind == "compaction":
        before, after = event.get("before_tokens"), event.get("after_tokens")
        if before is not None and after is not None:
            return f"context compacted ({event.get('reason')}): {before} → {after} tokens"
        return f"context compacted ({event.get('reason', '')})"
    if kind == "checkpoint":
        return "checkpoint written: " + _one_line(str(event.get("text", "")), 200)
    return str(event.get("message", ""))


def rewind_text(event: dict[str, Any]) -> str:
    """The line of a ``rewind`` event (tasks are numbered as the transcript holds them)."""
    return (
        f"rewind: the conversation went back to before task {event.get('turn')}; "
        "the tasks from there up to here are not part of its history any more"
    )


def result_summary(result: dict[str, Any] | None) -> str:
    """``completed · verdict pass · 3 steps · 120 tokens · 4.2s`` (or ``unfinished``)."""
    if not result:
        return "unfinished (no result recorded)"
    seconds = _number(result.get("duration_ms")) / 1000
    return (
        f"{result.get('stop_reason')} · verdict {result.get('verdict')} · "
        f"{plural(_number(result.get('steps')), 'step')} · "
        f"{plural(_tokens(result), 'token')} · {seconds:.1f}s"
    )


def when(ts: float | None) -> str:
    """A timestamp as local ``YYYY-MM-DD HH:MM``."""
    try:
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(ts)) if ts else "?"
    except (TypeError, ValueError, OverflowError, OSError):  # a hand-edited transcript's
        return "?"


def render_timeline(timeline: Timeline, console: Any) -> None:
    """Print the timeline for a terminal (rich ``console``); control characters of the
    transcript's text are shown as ``^[`` (never sent to the terminal)."""
    from rich.markup import escape as markup_escape
    from rich.text import Text

    def escape(text: str) -> str:
        return markup_escape(neutralise(text))

    def say(markup: str) -> None:
        console.print(markup, markup=True, highlight=False)

    say(f"[bold]session {escape(timeline.session_id)}[/bold]")
    say(
        f"[dim]{escape(timeline.model)} · {escape(timeline.cwd)} · started "
        f"{when(timeline.started)} · {plural(len(timeline.turns), 'turn')} · "
        f"{plural(timeline.tokens, 'token')}[/dim]"
    )
    for number, turn in enumerate(timeline.turns, 1):
        say("")
        say(f"[bold cyan]▶ task {number}:[/bold cyan] {escape(_one_line(turn.prompt, 300))}")
        for kind, text in turn.notes:
            say(f"  [yellow]{kind}:[/yellow] {escape(_one_line(text, 200))}")
        for step in turn.steps:
            tokens = f" · {plural(step.tokens, 'token')}" if step.tokens else ""
            say(f"[dim]step {step.number}{tokens}[/dim]")
            if step.text.strip():
                lines = step.text.strip().splitlines()
                for line in lines[:SHOWN_LINES]:
                    say(f"  {escape(line)}")
                if len(lines) > SHOWN_LINES:
                    cut = len(lines) - SHOWN_LINES
                    more = plural(cut, "more line")
                    say(f"  [dim]… {more} of {len(lines)} (--html shows all)[/dim]")
            for tool in step.tools:
                mark = "[green]✓[/green]" if tool.answered and not tool.is_error else "[red]✗[/red]"
                denied = " [red](denied)[/red]" if tool.decision == "deny" else ""
                say(f"  [cyan]●[/cyan] {escape(tool.summary)}{denied}")
                say(f"    {mark} {escape(_one_line(tool.result_summary, 160))}")
                for style, line in diff_lines(tool.diff, shown=20) if tool.diff else ():
                    console.print(Text("      " + neutralise(line), style=style), soft_wrap=True)
            for kind, text in step.notes:
                colour = "yellow" if kind in ("guidance", "retry") else "dim"
                say(f"  [{colour}]↻ {kind}:[/{colour}] {escape(_one_line(text, 200))}")
        colour = "green" if (turn.result or {}).get("stop_reason") == "completed" else "red"
        say(f"[{colour}]{escape(result_summary(turn.result))}[/{colour}]")
        error = (turn.result or {}).get("error")
        if error:
            say(f"[red]{escape(_one_line(str(error), 300))}[/red]")
        for text in turn.after:
            say(f"[yellow]⟲ {escape(text)}[/yellow]")


def recap_lines(timeline: Timeline, limit: int = 3) -> list[str]:
    """A short recap of a session being resumed: its last tasks, how they ended, what
    changed, and the last answer (control characters shown as ``^[``)."""
    lines = [
        f"Resuming session {timeline.session_id} ({plural(len(timeline.turns), 'turn')}, "
        f"started {when(timeline.started)}):"
    ]
    for turn in timeline.turns[-limit:]:
        outcome = (turn.result or {}).get("stop_reason") or "unfinished"
        lines.append(f"  • {_one_line(turn.prompt, 70)} → {outcome}")
    changed = timeline.changed_files
    if changed:
        shown = ", ".join(changed[:5]) + (
            f" and {len(changed) - 5} more" if len(changed) > 5 else ""
        )
        lines.append(f"  changed: {shown}")
    last = next((t.result for t in reversed(timeline.turns) if t.result), None)
    answer = str((last or {}).get("final_text") or "").strip()
    if answer:
        lines.append(f"  last answer: {_one_line(answer, 100)}")
    return [neutralise(line) for line in lines]
