"""The picker of rows that carry their own numbers (``/rewind``'s turns, ``/resume``)."""

from __future__ import annotations

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from mycode_core.cli.number_picker import Picker, numbered, pick

TURNS = [f"{n}. turn {n}" for n in range(13, 0, -1)] + ["cancel"]


def _pick(keys: str, options: list[str] = TURNS) -> str:
    with create_pipe_input() as keyboard:
        keyboard.send_text(keys)
        return pick("Rewind?\nwhat it does", options, app_input=keyboard, app_output=DummyOutput())


@pytest.mark.parametrize(
    ("keys", "picked"),
    [
        ("12\r", "12. turn 12"),  # a whole number, then Enter
        ("1\r", "1. turn 1"),  # a one-digit number is its own row, not the first of the list
        ("\r", "13. turn 13"),  # Enter alone: the highlighted row (the newest)
        ("\x1b[B\x1b[B\r", "11. turn 11"),  # arrows
        ("13\x7f2\r", "12. turn 12"),  # Backspace edits the number
        ("99\r\x1b", "cancel"),  # no row 99: Enter does nothing; Esc leaves
        ("1\x03", "cancel"),  # Ctrl-C leaves
    ],
)
def test_keys_pick_the_row_of_the_number_typed(keys: str, picked: str) -> None:
    assert _pick(keys) == picked


def test_a_digit_only_moves_the_highlight() -> None:
    state = Picker(TURNS)
    state.digit("1")
    assert state.chosen() == "1. turn 1"
    state.digit("2")
    assert state.chosen() == "12. turn 12"
    state.digit("0")
    assert state.chosen() is None  # no row 120
    shown = "".join(text for _style, text in state.lines("Rewind?"))
    assert "no row 120" in shown
    assert shown.count("12. turn 12") == 1 and "1. 12." not in shown


def test_only_rows_with_distinct_numbers_are_numbered() -> None:
    assert numbered(TURNS) == list(range(13, 0, -1))
    assert numbered(["allow once", "allow for this session", "deny"]) is None
    assert numbered(["1. a", "1. b", "cancel"]) is None
    assert numbered(["1. a", "b", "cancel"]) is None
    assert numbered(["cancel"]) is None


def test_the_plain_list_reads_a_whole_number(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dumb terminal: the rows printed, a number read (a wrong one asked again)."""
    from click.testing import CliRunner

    import mycode_core.cli.prompts as prompts

    monkeypatch.setattr(prompts, "_fancy_terminal", lambda: False)
    import click

    @click.command()
    def ask() -> None:
        click.echo("picked: " + pick("Rewind?", TURNS))

    result = CliRunner().invoke(ask, input="99\n12\n")
    assert "picked: 12. turn 12" in result.stdout
    assert "no row 99" in result.stderr
    assert "  13. turn 13" in result.stderr
    result = CliRunner().invoke(ask, input="\n")
    assert "picked: cancel" in result.stdout
