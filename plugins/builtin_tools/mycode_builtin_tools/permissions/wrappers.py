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
    "builtin": set(),
    "coproc": set(),
    "busybox": set(),
}
GENERIC = {
    "strace", "ltrace", "valgrind", "torsocks", "proxychains", "proxychains4", "unshare",
    "fakeroot", "eatmydata", "nocache", "faketime", "firejail", "systemd-run", "chroot",
    "nsenter", "catchsegv", "prlimit", "setpriv", "entr", "parallel", "watchexec", "tini",
    "dumb-init", "sg", "runuser", "su", "script",
}  # fmt: skip
"""Programs that run another command, whose own options are not all known here."""
MAX_DEPTH = 6


@dataclass
class Part:
    """A command that will run, after unwrapping; ``wrappers`` lists what it was wrapped in."""

    command: SimpleCommand
    wrappers: list[str] = field(default_factory=list)
    via_exec: bool = False
    assignments: list[str] = field(default_factory=list)
    hidden: str | None = None
    """Why what really runs cannot be read (a shell reading a pipe, ``xargs`` arguments…)."""
    hidden_builtin: bool = False
    """True when the built-in judgement should ask too (the command may be anything)."""
    fed: bool = False
    """True when more arguments come from input (``xargs``)."""

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
    if program == "busybox" and args and args[0].rsplit("/", 1)[-1] in SHELLS - {"busybox"}:
        return expand(replace(command, words=args), depth + 1)
    if program in GENERIC:
        return _expand_generic(command, program, args, depth)
    if program in PRIVILEGE or (program in _VALUE_OPTIONS and program not in SHELLS):
        if program == "env" and any(a.startswith(("-S", "--split-string")) for a in args):
            part = Part(command)
            part.hidden, part.hidden_builtin = "env -S splits its argument into a command", True
            return [part]
        inner_words = _skip_options(program, args)
        parts = [Part(command, [])] if program in PRIVILEGE else []
        if not inner_words:
            return parts or [Part(command)]
        inner = replace(command, words=inner_words)
        settings = [a for a in args[: len(args) - len(inner_words)] if "=" in a]
        for part in expand(inner, depth + 1):
            part.wrappers.insert(0, program)
            if program == "env":
                part.assignments[:0] = [a for a in settings if not a.startswith("-")]
            if program == "xargs":
                _fed(part, args)
            parts.append(part)
        return parts
    if program in SHELLS:
        script = _shell_script(args)
        if script is not None:
            return _expand_script(script, command, program, depth)
        part = Part(command)
        files = [a for a in args if not a.startswith(("-", "+"))]
        if files and not command.piped_in:
            part.hidden = f"{program} runs the script {files[0]}"
        else:
            part.hidden, part.hidden_builtin = f"{program} runs commands it reads from input", True
        return [part]
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


def _fed(part: Part, xargs_args: list[str]) -> None:
    """Mark a command run by ``xargs``: its arguments (or, with ``-I``, anything) come later."""
    part.fed = True
    replaces = any(a.startswith(("-I", "-i", "--replace")) for a in xargs_args)
    if replaces or part.command.program in SHELLS or part.command.program == "eval":
        part.hidden, part.hidden_builtin = "xargs builds the command from its input", True


def _expand_generic(
    command: SimpleCommand, program: str, args: list[str], depth: int
) -> list[Part]:
    """A wrapper whose options are not all known: ``-c SCRIPT`` is judged, a plain inner
    command is judged when no option comes first, anything else may be anything."""
    script = _shell_script(args) if program in ("su", "runuser", "script", "sg") else None
    if script is not None:
        parts = _expand_script(script, command, program, depth)
    elif args and not args[0].startswith("-") and program not in ("su", "script", "sg"):
        inner = replace(command, words=args[1:] if program in ("chroot", "runuser") else args)
        parts = expand(inner, depth + 1) if inner.words else []
        for part in parts:
            part.wrappers.insert(0, program)
    else:
        part = Part(command)
        part.hidden, part.hidden_builtin = f"{program} runs a command that cannot be read", True
        return [part]
    head = Part(command)
    return [head, *parts] if program in ("su", "runuser", "doas", "sg") else parts or [head]


def _expand_script(script: str, outer: SimpleCommand, via: str, depth: int) -> list[Part]:
    parts: list[Part] = []
    for inner in parse(script, depth + 1):
        if outer.piped_in and not inner.piped_in and not parts:
            inner.piped_in = True
        for part in expand(inner, depth + 1):
            part.wrappers.insert(0, f"{via} -c" if via != "eval" else via)
            part.assignments[:0] = outer.assignments  # `BASH_ENV=x bash -c ls`
            parts.append(part)
    if not parts:
        parts.append(Part(outer))
    return parts
