"""A small bash parser for permission checks: split a command line into simple commands.

It understands quoting, escapes, ``&&`` ``||`` ``;`` ``|`` ``&`` newlines, subshells and
groups, redirections (with heredocs), ``$(…)``, backticks, ``<(…)`` and ``${…}``. Command
substitutions are parsed too and returned as extra commands, so ``echo $(rm -rf /)`` is judged
by its inner ``rm``. It never executes anything and never raises on odd input: a command it
cannot parse is reported through :class:`ParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

MAX_DEPTH = 6
_OPERATORS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")", "\n")
_REDIRECTS = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<")
_PLAIN = re.compile(r"[^ \t\r\n\\'\"$`<>|&;()#]+")
"""A run of characters that are neither blanks, quotes, expansions nor operators."""
_KEYWORDS_DROP = {"if", "then", "else", "elif", "do", "while", "until", "!", "{"}
_KEYWORDS_SKIP = {"fi", "done", "esac", "}", "in"}


class ParseError(ValueError):
    """The command line could not be parsed (unbalanced quotes or parentheses)."""


@dataclass
class SimpleCommand:
    """One command of a command line: its words (quotes removed) and redirections."""

    words: list[str] = field(default_factory=list)
    redirects: list[tuple[str, str]] = field(default_factory=list)
    piped_in: bool = False
    pipeline: int = 0
    substitutions: list[str] = field(default_factory=list)
    nested: bool = False
    assignments: list[str] = field(default_factory=list)
    """``NAME=value`` words before the program (``LESSOPEN='|x' less``)."""

    @property
    def program(self) -> str:
        """The command name without its folder (``/usr/bin/rm`` → ``rm``)."""
        return self.words[0].rsplit("/", 1)[-1] if self.words else ""


@dataclass
class _Word:
    text: str = ""
    started: bool = False
    quoted: bool = False


class _Lexer:
    def __init__(self, source: str, depth: int) -> None:
        self.src = source
        self.i = 0
        self.depth = depth
        self.substitutions: list[str] = []

    def peek(self, n: int = 0) -> str:
        j = self.i + n
        return self.src[j] if j < len(self.src) else ""

    def _unescaped(self) -> Iterator[str]:
        """Each character from the cursor on, skipping a backslash with the character it
        escapes; the cursor stays on the character yielded (the caller moves it)."""
        while self.i < len(self.src):
            ch = self.src[self.i]
            if ch == "\\":
                self.i += 2
                continue
            yield ch

    def read_balanced(self, opener: str, closer: str) -> str:
        """Read up to the matching ``closer`` (the opener already consumed), respecting quotes."""
        depth = 1
        start = self.i
        for ch in self._unescaped():
            if ch == "'":
                end = self.src.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                self.i = end + 1
                continue
            if ch == '"':
                self.i += 1
                self.read_double()
                continue
            if ch == opener:
                depth += 1
            elif ch == closer:
                depth -= 1
                if depth == 0:
                    inner = self.src[start : self.i]
                    self.i += 1
                    return inner
            self.i += 1
        raise ParseError(f"unbalanced {opener!r}")

    def read_backtick(self) -> str:
        start = self.i
        for ch in self._unescaped():
            if ch == "`":
                inner = self.src[start : self.i]
                self.i += 1
                return inner
            self.i += 1
        raise ParseError("unterminated backtick")

    def read_dollar(self) -> str:
        """At ``$``: read a substitution/expansion and return its literal text."""
        nxt = self.peek(1)
        if nxt == "(" and self.peek(2) == "(":
            self.i += 3
            inner = self.read_balanced("(", ")")
            if self.peek() == ")":
                self.i += 1
            return f"$(({inner}))"
        if nxt == "(":
            self.i += 2
            inner = self.read_balanced("(", ")")
            self.substitutions.append(inner)
            return f"$({inner})"
        if nxt == "{":
            self.i += 2
            inner = self.read_balanced("{", "}")
            return "${" + inner + "}"
        self.i += 1
        return "$"

    def read_double(self) -> str:
        """Read a double-quoted string body (after the opening quote)."""
        out: list[str] = []
        while self.i < len(self.src):
            ch = self.src[self.i]
            if ch == '"':
                self.i += 1
                return "".join(out)
            if ch == "\\" and self.peek(1) in ('"', "\\", "$", "`", "\n"):
                if self.peek(1) != "\n":
                    out.append(self.peek(1))
                self.i += 2
                continue
            if ch == "$":
                out.append(self.read_dollar())
                continue
            if ch == "`":
                self.i += 1
                inner = self.read_backtick()
                self.substitutions.append(inner)
                out.append(f"`{inner}`")
                continue
            out.append(ch)
            self.i += 1
        raise ParseError("unterminated double quote")

    def tokens(self) -> list[tuple[str, str]]:
        """``[(kind, text)]`` with kind ``word``, ``op`` or ``redir``."""
        out: list[tuple[str, str]] = []
        word = _Word()
        heredocs: list[str] = []

        def flush() -> None:
            nonlocal word
            if word.started:
                out.append(("word", word.text))
            word = _Word()

        while self.i < len(self.src):
            ch = self.src[self.i]
            if ch in " \t\r":
                flush()
                self.i += 1
                continue
            if ch == "#" and not word.started:
                end = self.src.find("\n", self.i)
                self.i = len(self.src) if end < 0 else end
                continue
            if ch == "\\":
                if self.peek(1) == "\n":
                    self.i += 2
                    continue
                word.text += self.peek(1)
                word.started = True
                self.i += 2
                continue
            if ch == "'":
                end = self.src.find("'", self.i + 1)
                if end < 0:
                    raise ParseError("unterminated single quote")
                word.text += self.src[self.i + 1 : end]
                word.started = word.quoted = True
                self.i = end + 1
                continue
            if ch == '"':
                self.i += 1
                word.text += self.read_double()
                word.started = word.quoted = True
                continue
            if ch == "$":
                word.text += self.read_dollar()
                word.started = True
                continue
            if ch == "`":
                self.i += 1
                inner = self.read_backtick()
                self.substitutions.append(inner)
                word.text += f"`{inner}`"
                word.started = True
                continue
            if ch in "<>" and self.peek(1) == "(" and not word.started:
                self.i += 2
                inner = self.read_balanced("(", ")")
                self.substitutions.append(inner)
                word.text += f"{ch}({inner})"
                word.started = True
                continue
            redirect = next((r for r in _REDIRECTS if self.src.startswith(r, self.i)), None)
            if redirect is not None:
                if word.started and word.text.isdigit() and not word.quoted:
                    word = _Word()
                else:
                    flush()
                self.i += len(redirect)
                out.append(("redir", redirect))
                if redirect in ("<<", "<<-"):
                    heredocs.append("")
                continue
            operator = next((o for o in _OPERATORS if self.src.startswith(o, self.i)), None)
            if operator is not None:
                flush()
                self.i += len(operator)
                if operator == "\n" and heredocs:
                    self._skip_heredocs(out, heredocs)
                out.append(("op", operator))
                continue
            plain = _PLAIN.match(self.src, self.i)
            end = plain.end() if plain is not None else self.i + 1
            word.text += self.src[self.i : end]
            word.started = True
            self.i = end
        flush()
        return out

    def _skip_heredocs(self, out: list[tuple[str, str]], heredocs: list[str]) -> None:
        delimiters = []
        for index, (kind, text) in enumerate(out):
            if kind == "redir" and text in ("<<", "<<-") and index + 1 < len(out):
                delimiters.append(out[index + 1][1])
        for delimiter in delimiters[-len(heredocs) :]:
            while self.i < len(self.src):
                end = self.src.find("\n", self.i)
                line = self.src[self.i : len(self.src) if end < 0 else end]
                self.i = len(self.src) if end < 0 else end + 1
                if line.strip() == delimiter:
                    break
        heredocs.clear()


def _assignment(word: str) -> bool:
    name, eq, _ = word.partition("=")
    return bool(eq) and name.replace("_", "a").isalnum() and not name[0].isdigit()


def _build(tokens: list[tuple[str, str]]) -> list[SimpleCommand]:
    commands: list[SimpleCommand] = []
    current = SimpleCommand()
    pipeline = 0
    pending_redirect: str | None = None
    skip_rest = False

    def finish(next_piped: bool) -> None:
        nonlocal current, skip_rest
        words = current.words
        while words and words[0] in _KEYWORDS_DROP:
            words.pop(0)
        while words and _assignment(words[0]):
            current.assignments.append(words.pop(0))
        if words and words[0] in _KEYWORDS_SKIP:
            words.clear()
        if words or current.redirects:
            commands.append(current)
        current = SimpleCommand(piped_in=next_piped, pipeline=pipeline)
        skip_rest = False

    for kind, text in tokens:
        if pending_redirect is not None:
            if kind == "word":
                current.redirects.append((pending_redirect, text))
                pending_redirect = None
                continue
            pending_redirect = None
        if kind == "redir":
            pending_redirect = text
        elif kind == "op":
            if text in ("|", "|&"):
                finish(True)
            else:
                pipeline += 1
                finish(False)
        elif not skip_rest:
            if not current.words and text in ("for", "case", "select"):
                skip_rest = True
                continue
            if current.words == ["function"]:
                current.words.clear()  # `function f { git push; }`: the body is judged
                continue
            current.words.append(text)
    finish(False)
    return commands


def parse(command: str, depth: int = 0) -> list[SimpleCommand]:
    """All simple commands of ``command``, substitutions included (marked ``nested``)."""
    if depth > MAX_DEPTH:
        raise ParseError("commands nested too deeply")
    lexer = _Lexer(command, depth)
    commands = _build(lexer.tokens())
    for inner in lexer.substitutions:
        for sub in parse(inner, depth + 1):
            sub.nested = True
            commands.append(sub)
    if lexer.substitutions and commands:
        # remember which substitutions each command carried (for `bash -c "$(curl …)"`)
        for cmd in commands:
            if not cmd.nested:
                cmd.substitutions = [s for s in lexer.substitutions if _mentions(cmd, s)]
    return commands


def _mentions(cmd: SimpleCommand, inner: str) -> bool:
    return any(inner in word for word in cmd.words) or any(inner in t for _, t in cmd.redirects)
