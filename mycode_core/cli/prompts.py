"""Questions to the user in the terminal: a prompt_toolkit choice (arrow keys, 1/2/3, Enter),
or a numbered list read line by line where a full-screen prompt cannot run (``TERM=dumb``).

Esc and Ctrl-C pick the last option, which callers make the safe one ("deny").
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from collections.abc import Sequence
from typing import Any

import click


def _fancy_terminal() -> bool:
    term = os.environ.get("TERM", "")
    return (
        sys.stdin.isatty()
        and sys.stdout.isatty()
        and term not in ("", "dumb", "unknown")
        and "MYCODE_PLAIN_PROMPTS" not in os.environ
    )


def wrapped(text: str, indent: str = "", width: int | None = None) -> str:
    """``text`` wrapped at word boundaries to the terminal's width, each line after ``indent``
    (a word longer than a line — a path, a command — stays whole on its own line)."""
    columns = width or shutil.get_terminal_size((100, 24)).columns
    out = []
    for paragraph in text.splitlines() or [""]:
        out.append(
            textwrap.fill(
                paragraph,
                width=max(20, columns - 1),
                initial_indent=indent,
                subsequent_indent="  " if indent.startswith("?") else indent,
                break_long_words=False,
                break_on_hyphens=False,
            )
            or indent
        )
    return "\n".join(out)


def choose(question: str, options: list[str], preview: Sequence[str] = ()) -> str:
    """Ask ``question`` (its first line is the title, the rest shown dimmed) and return the
    option picked; Esc / Ctrl-C / end of input return ``options[-1]``. ``preview`` lines (a
    diff: ``-`` red, ``+`` green) are shown as they are, under the question."""
    if not options:
        raise ValueError("choose() needs at least one option")
    if _fancy_terminal():
        try:
            return _choose_fancy(question, options, list(preview))
        except (KeyboardInterrupt, EOFError):
            return options[-1]
        except Exception:  # noqa: BLE001 - a terminal prompt_toolkit cannot drive: plain list
            pass
    return _choose_plain(question, options, list(preview))


def _diff_colour(line: str) -> str | None:
    """The colour of a preview line: removed red, added green, the rest (dim) none."""
    return {"-": "red", "+": "green"}.get(line[:1])


def read_line(question: str) -> str:
    """One line typed after ``question``; Ctrl-C raises ``KeyboardInterrupt``, Ctrl-D (end of
    input) ``EOFError``. On a terminal prompt_toolkit reads the keys, so a Ctrl-C is a key, never
    a signal racing the read."""
    if _fancy_terminal():
        from prompt_toolkit import prompt

        return str(prompt(question))
    return input(question)


def _choose_fancy(question: str, options: list[str], preview: list[str]) -> str:
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.shortcuts import choice

    title, _, detail = question.partition("\n")
    message: list[tuple[str, str]] = [("bold fg:ansiyellow", wrapped(title, "? "))]
    if detail.strip():
        message.append(("", "\n"))
        message.append(("fg:ansibrightblack", wrapped(detail.strip(), "  ")))
    for line in preview:
        message.append(("", "\n"))
        message.append((f"fg:ansi{_diff_colour(line) or 'brightblack'}", f"  {line}"))
    bindings = KeyBindings()

    @bindings.add("escape", eager=True)
    def _deny(event: Any) -> None:
        event.app.exit(result=options[-1])

    for number, option in enumerate(options[:9], 1):

        @bindings.add(str(number), eager=True)
        def _pick(event: Any, picked: str = option) -> None:
            event.app.exit(result=picked)

    answer: str = choice(
        message=FormattedText(message),
        options=[(option, f"{option}") for option in options],
        default=options[0],
        key_bindings=bindings,
    )
    return answer


def _choose_plain(question: str, options: list[str], preview: list[str]) -> str:
    title, _, detail = question.partition("\n")
    click.echo(click.style("\n" + wrapped(title, "? "), fg="yellow"), err=True)
    if detail.strip():
        click.echo(wrapped(detail.strip(), "  "), err=True)
    for line in preview:
        colour = _diff_colour(line)
        click.echo(click.style(f"  {line}", fg=colour, dim=colour is None), err=True)
    for number, option in enumerate(options, 1):
        click.echo(f"  {number}) {option}", err=True)
    choices = [str(n) for n in range(1, len(options) + 1)]
    try:
        picked = click.prompt(
            "choose", type=click.Choice(choices), default=choices[-1], err=True, show_choices=False
        )
    except (click.Abort, EOFError, KeyboardInterrupt):
        return options[-1]
    return options[int(picked) - 1]
