"""Commands whose real program or arguments cannot be read before they run (SPEC §8).

A deny rule such as ``run_command(git push:*)`` must not be dodged by spelling the command
differently. Literal spellings are normalised (``/usr/bin/git push``, ``git -C . push``,
``git -c x=y push`` are also matched as ``git push``); spellings that are not literal
(``$x push``, ``git${IFS}push``, ``$(which git) push``, an alias, ``source f``, a shell
reading its script from a pipe or a file, code given to an interpreter, arguments fed by
``xargs``) get an *open prefix*: the literal words known before the unknown part. A deny or
ask rule whose literal words could continue that prefix "may match", so the command asks
(in ``-p``: it is denied with the reason).
"""

from __future__ import annotations

import re

_GLOB = re.compile(r"[*?\[]|\{[^}]*(,|\.\.)[^}]*\}")
_UNKNOWN = ("$", "`", "<(", ">(")
INLINE_CODE = {
    "python": ("-c",), "python2": ("-c",), "python3": ("-c",), "perl": ("-e", "-E"),
    "ruby": ("-e",), "node": ("-e", "--eval", "-p", "--print"), "php": ("-r",),
    "deno": ("eval",), "bun": ("-e", "--eval"), "lua": ("-e",), "tclsh": (), "osascript": ("-e",),
}  # fmt: skip
AWK = {"awk", "gawk", "mawk", "nawk"}
RISKY_PROGRAMS = {
    "git", "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "cargo", "go", "docker", "kubectl",
    "apt", "apt-get", "brew", "gem", "curl", "wget", "ssh", "scp", "rsync", "gh", "npx", "rm",
    "sudo", "sh", "bash", "zsh", "dash", "python", "python3", "perl", "ruby", "node", "eval",
}  # fmt: skip
"""Programs whose unknown arguments may make them ask (a push, an install, a download)."""
_GIT_VALUE_OPTIONS = {
    "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--exec-path",
    "--super-prefix", "--list-cmds", "--attr-source",
}  # fmt: skip


def literal(word: str) -> bool:
    """True when the shell will not expand ``word`` into something else."""
    return not any(mark in word for mark in _UNKNOWN) and not _GLOB.search(word)


def open_prefix(words: list[str]) -> str | None:
    """The literal words before the first word that cannot be read before it runs, or
    ``None`` when every word is literal. ``""`` means the program itself is unknown."""
    for index, word in enumerate(words):
        if not literal(word):
            return " ".join(normalised(words[:index]))
    return None


def normalised(words: list[str]) -> list[str]:
    """``words`` with the program's folder removed and git's global options dropped."""
    if not words:
        return []
    program = words[0].rsplit("/", 1)[-1]
    rest = words[1:]
    if program == "git":
        i = 0
        while i < len(rest) and rest[i].startswith("-"):
            name = rest[i].split("=", 1)[0]
            i += 2 if name in _GIT_VALUE_OPTIONS and "=" not in rest[i] else 1
        rest = rest[i:]
    return [program, *rest]


_GIT_CONFIG_OPTIONS = {"-c", "--config-env", "--exec-path"}


def subcommand_first(text: str) -> str:
    """``text`` with git's global options that only choose where git works (``-C DIR``,
    ``--git-dir``, ``--work-tree``, ``--no-pager``, ``-P``, ``--bare``, ``--namespace``…)
    dropped before the subcommand, so ``git -C ws commit`` reads ``git commit``; the ones that
    change what git runs (``-c``, ``--config-env``, ``--exec-path``) stay. What session
    grants are made from and allow rules match."""
    words = text.split()
    if not words or words[0].rsplit("/", 1)[-1] != "git":
        return text
    kept, i = [words[0]], 1
    while i < len(words) and words[i].startswith("-"):
        name = words[i].split("=", 1)[0]
        width = 2 if name in _GIT_VALUE_OPTIONS and "=" not in words[i] else 1
        if name in _GIT_CONFIG_OPTIONS:
            kept += words[i : i + width]
        i += width
    return " ".join(kept + words[i:])


def hidden_reason(words: list[str]) -> str | None:
    """Why this (literal) command may run something that cannot be read, or ``None``."""
    if not words:
        return None
    program = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if program == "alias" and any("=" in a for a in args):
        return "it defines an alias, so a later command may be anything"
    if program in ("source", "."):
        return f"it runs the commands of {args[0] if args else 'a file'}"
    if program == "hash" and any(a.startswith("-p") for a in args):
        return "it renames a program, so a later command may be anything"
    if program in ("enable", "trap", "complete", "bind"):
        return f"{program} can make a later command run anything"
    if program == "git":
        for index, arg in enumerate(args):
            value = (
                args[index + 1] if arg in ("-c", "--config-env") and index + 1 < len(args) else arg
            )
            if value.startswith(("alias.", "-calias.", "--config-env=alias.")):
                return "it defines a git alias, so the git command may be anything"
            if not arg.startswith("-"):
                break
    if program in INLINE_CODE and any(
        a in INLINE_CODE[program] or (a[:2] in INLINE_CODE[program] and len(a) > 2) for a in args
    ):
        return f"{program} runs code given on the command line, which may run anything"
    if program in AWK and any("system" in a or "|" in a for a in args):
        return f"{program} runs a command from its program"
    return None
