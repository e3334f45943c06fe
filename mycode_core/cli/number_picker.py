"""A list picked by the numbers its rows already carry (``/rewind``'s turns, ``/resume``'s
sessions): each row shows one number, its own, and the user types it in full and presses Enter
— or moves with ↑/↓ and presses Enter.

A digit never picks at once (``1`` may be the start of ``12``): typed digits move the
highlight to the row of that number, and Enter takes the highlighted row; a number no row has
highlights nothing and Enter does nothing. Esc or Ctrl-C is the way out (the last option).
Where a full-screen prompt cannot run (``TERM=dumb``) the rows are printed and a line is read.

Used for a question whose options (all but the last) start with distinct numbers (``13. go
on``): :func:`numbered` tells such a question from a plain one.
"""

from __future__ import annotations

import re
from typing import Any

import click

from mycode_core.cli.prompts import wrapped

_ROW = re.compile(r"(\d+)\. ")
HINT = "type a number and Enter, or ↑/↓ and Enter; Esc cancels"


def numbered(options: list[str]) -> list[int] | None:
    """The numbers ``options[:-1]`` start with (``13. go on`` → 13), or ``None`` unless each
    has one and no two the same (the last option is the way out, ``cancel``)."""
    found = [_ROW.match(option) for option in options[:-1]]
    numbers = [int(match.group(1)) for match in found if match is not None]
    if not numbers or len(numbers) < len(found) or len(set(numbers)) < len(numbers):
        return None
    return numbers


class Picker:
    """The state of one question: the highlighted row and the digits typed so far."""

    def __init__(self, options: list[str]) -> None:
        self.options = options
        self.numbers = numbered(options) or []
        self.selected: int | None = 0
        """The highlighted row (``len(numbers)``: the way out; ``None``: no row has the
        number typed)."""
        self.typed = ""

    def digit(self, key: str) -> None:
        """A digit typed: the highlight goes to the row of the number typed so far."""
        self.typed = (self.typed + key)[-9:]
        self._follow()

    def erase(self) -> None:
        """Backspace: one digit less (none left: the highlight stays where it is)."""
        if self.typed:
            self.typed = self.typed[:-1]
            self._follow()

    def move(self, step: int) -> None:
        """↑/↓: the next row up or down (the typed number is dropped)."""
        self.typed = ""
        current = self.selected if self.selected is not None else 0
        self.selected = max(0, min(len(self.options) - 1, current + step))

    def chosen(self) -> str | None:
        """What Enter takes: the highlighted row, or ``None`` (no row has the number)."""
        return None if self.selected is None else self.options[self.selected]

    def _follow(self) -> None:
        if not self.typed:
            self.selected = self.selected if self.selected is not None else 0
            return
        number = int(self.typed)
        self.selected = self.numbers.index(number) if number in self.numbers else None

    def lines(self, question: str) -> list[tuple[str, str]]:
        """The question, the rows (the highlighted one marked) and the number typed."""
        title, _, detail = question.partition("\n")
        out: list[tuple[str, str]] = [("bold fg:ansiyellow", wrapped(title, "? ") + "\n")]
        if detail.strip():
            out.append(("fg:ansibrightblack", wrapped(detail.strip(), "  ") + "\n"))
        for index, option in enumerate(self.options):
            mark, style = ("❯ ", "reverse") if index == self.selected else ("  ", "")
            out.append((style, f"{mark}{option}"))
            out.append(("", "\n"))
        if self.typed and self.selected is None:
            note = f"no row {self.typed}"
        else:
            note = HINT
        out.append(("bold", f"  number: {self.typed}"))
        out.append(("fg:ansibrightblack", f"   ({note})"))
        return out


def pick(
    question: str, options: list[str], *, app_input: Any = None, app_output: Any = None
) -> str:
    """Ask ``question``; the row picked, or ``options[-1]`` (Esc, Ctrl-C, end of input)."""
    from mycode_core.cli.prompts import _fancy_terminal

    if app_input is not None or _fancy_terminal():
        try:
            return _pick_fancy(question, options, app_input, app_output)
        except (KeyboardInterrupt, EOFError):
            return options[-1]
        except Exception:  # noqa: BLE001 - a terminal prompt_toolkit cannot drive: plain list
            if app_input is not None:
                raise
    return _pick_plain(question, options)


def _pick_fancy(question: str, options: list[str], app_input: Any, app_output: Any) -> str:
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import FormattedText
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import Layout, Window
    from prompt_toolkit.layout.controls import FormattedTextControl

    state = Picker(options)
    bindings = KeyBindings()

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("<sigint>")
    def _cancel(event: Any) -> None:
        event.app.exit(result=options[-1])

    @bindings.add("enter")
    def _enter(event: Any) -> None:
        answer = state.chosen()
        if answer is not None:
            event.app.exit(result=answer)

    @bindings.add("up")
    def _up(event: Any) -> None:
        state.move(-1)

    @bindings.add("down")
    def _down(event: Any) -> None:
        state.move(1)

    @bindings.add("backspace")
    def _erase(event: Any) -> None:
        state.erase()

    for key in "0123456789":

        @bindings.add(key)
        def _digit(event: Any, key: str = key) -> None:
            state.digit(key)

    control = FormattedTextControl(lambda: FormattedText(state.lines(question)))
    app: Application[str] = Application(
        layout=Layout(Window(control, dont_extend_height=True)),
        key_bindings=bindings,
        full_screen=False,
        input=app_input,
        output=app_output,
    )
    return str(app.run())


def _pick_plain(question: str, options: list[str]) -> str:
    """The rows printed, then a number read (an empty line, Ctrl-C, end of input: cancel)."""
    numbers = numbered(options) or []
    title, _, detail = question.partition("\n")
    click.echo(click.style("\n" + wrapped(title, "? "), fg="yellow"), err=True)
    if detail.strip():
        click.echo(wrapped(detail.strip(), "  "), err=True)
    for option in options[:-1]:
        click.echo(f"  {option}", err=True)
    while True:
        try:
            typed = click.prompt(
                f"number (Enter alone: {options[-1]})", default="", show_default=False, err=True
            ).strip()
        except (click.Abort, EOFError, KeyboardInterrupt):
            return options[-1]
        if not typed:
            return options[-1]
        if typed.isdigit() and int(typed) in numbers:
            return options[numbers.index(int(typed))]
        click.echo(f"no row {typed}", err=True)
