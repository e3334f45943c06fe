"""Unwrapping wrapper commands before judging them: ``sudo``, ``timeout``, ``env``, ``nice``,
``nohup``, ``xargs``, ``stdbuf``, ``time``, ``command``, ``exec``, ``bash -c``, ``eval`` and
``find -exec``.

:func:`expand` turns one parsed command into the list of commands that will really run.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from mycode_builtin_tools.permissions.shell import ParseError, SimpleCommand, parse

SHELLS = {"bash", "sh", "zsh", "dash", "ksh", "fish", "ash", "busybox"}
PRIVILEGE = {"sudo", "doas", "pkexec", "run0"}
# options that take a value, per wrapper
_VALUE_OPTIONS: dict[str, set[str]] = {
    "sudo": {"-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"},
    "doas": {"-u", "-C"},
    "pkexec": {"--user"},
    "run0": {"-u", "--user"},
    "timeout": {"-s", "-k", "--signal", "--kill-after"},
    "env": {"-u", "-C", "--unset", "--chdir", "-S", "--split-string"},
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-t"},
    "stdbuf": {"-i", "-o", "-e"},
    "xargs": {"-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s", "--max-args", "--max-procs"},
    "time": {"-f", "-o", "--format", "--output"},
    "command": set(),
    "exec": {"-a"},
    "nohup": set(),
    "chronic": set(),
    "unbuffer": set(),
    "watch": {"-n", "--interval", "-d"},
    "flock": {"-w", "-E", "--timeout"},
    "caffeinate": set(),
    "taskset": set(),
    "chrt": set(),
    "setsid": set(),
}
MAX_DEPTH = 6


@dataclass
class Part:
    """A command that will run, after unwrapping; ``wrappers`` lists what it was wrapped in."""

    command: SimpleCommand
    wrappers: list[str] = field(default_factory=list)
    via_exec: bool = False

    @property
    def words(self) -> list[str]:
        """The command's words."""
        return self.command.words

    @property
    def text(self) -> str:
        """The command as one normalised string (what permission rules match)."""
        return " ".join(self.command.words)


def _skip_options(program: str, args: list[str]) -> list[str]:
    """``args`` after the wrapper's own options (and a timeout's duration, env's VAR=val)."""
    values = _VALUE_OPTIONS.get(program, set())
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            i += 1
            break
        if program == "env" and "=" in arg and not arg.startswith("-"):
            i += 1
            continue
        if arg.startswith("-") and len(arg) > 1:
            name = arg.split("=", 1)[0]
            if name in values and "=" not in arg:
                i += 2
            elif program == "taskset" and not arg.startswith("--"):
                i += 2
            else:
                i += 1
            continue
        break
    rest = args[i:]
    if program == "timeout" and rest:
        rest = rest[1:]
    if program in ("taskset", "chrt") and rest:
        rest = rest[1:]
    if program == "flock" and rest:
        rest = rest[1:]
    return rest


def _shell_script(args: list[str]) -> str | None:
    """The script of ``bash [opts] -c SCRIPT``, or ``None``."""
    for index, arg in enumerate(args):
        if arg == "--":
            return None
        if arg.startswith("-") and not arg.startswith("--") and "c" in arg[1:]:
            rest = [a for a in args[index + 1 :] if not a.startswith("-")]
            return rest[0] if rest else ""
        if not arg.startswith("-"):
            return None
    return None


def _find_exec(words: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    i = 0
    while i < len(words):
        if words[i] in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            inner: list[str] = []
            while j < len(words) and words[j] not in (";", "+", "\\;"):
                inner.append(words[j])
                j += 1
            if inner:
                out.append(inner)
            i = j
        i += 1
    return out


def expand(command: SimpleCommand, depth: int = 0) -> list[Part]:
    """The commands that will really run for ``command``, wrappers removed.

    ``sudo x`` gives two parts: ``sudo x`` itself (a privilege escalation to judge) and ``x``.
    Raises :class:`ParseError` for an unparsable ``bash -c`` / ``eval`` script.
    """
    if depth > MAX_DEPTH:
        raise ParseError("wrappers nested too deeply")
    program = command.program
    args = command.words[1:]
    if program in PRIVILEGE or (program in _VALUE_OPTIONS and program not in SHELLS):
        inner_words = _skip_options(program, args)
        parts = [Part(command, [])] if program in PRIVILEGE else []
        if not inner_words:
            return parts or [Part(command)]
        inner = replace(command, words=inner_words)
        for part in expand(inner, depth + 1):
            part.wrappers.insert(0, program)
            parts.append(part)
        return parts
    if program in SHELLS:
        script = _shell_script(args)
        if script is not None:
            return _expand_script(script, command, program, depth)
    if program == "eval" and args:
        return _expand_script(" ".join(args), command, "eval", depth)
    parts = [Part(command)]
    if program == "find":
        for inner_words in _find_exec(command.words):
            inner = replace(command, words=inner_words, redirects=[], piped_in=False)
            for part in expand(inner, depth + 1):
                part.wrappers.insert(0, "find -exec")
                part.via_exec = True
                parts.append(part)
    return parts


def _expand_script(script: str, outer: SimpleCommand, via: str, depth: int) -> list[Part]:
    parts: list[Part] = []
    for inner in parse(script, depth + 1):
        if outer.piped_in and not inner.piped_in and not parts:
            inner.piped_in = True
        for part in expand(inner, depth + 1):
            part.wrappers.insert(0, f"{via} -c" if via != "eval" else via)
            parts.append(part)
    if not parts:
        parts.append(Part(outer))
    return parts
