"""The built-in judgement of shell commands: destructive or escaping → deny, risky → ask,
ordinary → allow. Each finding names a ``builtin:*`` rule.

A command line is parsed (:mod:`.shell`), wrappers are removed (:mod:`.wrappers`), ``cd`` is
followed so relative paths are judged where they will run, and every resulting command is
judged on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mycode_builtin_tools.paths import sensitive_reason
from mycode_builtin_tools.permissions import packages, spelling
from mycode_builtin_tools.permissions.catalog import (
    ADMIN,
    ALL_ARG_WRITERS,
    DELETERS,
    DEST_WRITERS,
    DISK_TOOLS,
    DOWNLOADERS,
    EXTERNAL,
    FUNCTION_PARENS,
    INTERPRETERS,
    LOCAL_URL,
    MAX_COMMAND_CHARS,
    MAX_PARTS,
    MODE_WRITERS,
    NETWORK,
    OPTION_VALUES,
    POWER,
    PROCESS,
    SEVERITY,
    SUBST_DOWNLOAD,
    WRITE_REDIRECTS,
)
from mycode_builtin_tools.permissions.shell import ParseError, SimpleCommand, parse
from mycode_builtin_tools.permissions.targets import Target, classify, is_build_name
from mycode_builtin_tools.permissions.wrappers import PRIVILEGE, Part, expand

_PROC_SECRET = re.compile(r"(^|[^\w.])/proc/[^/\s]+/(task/[^/\s]+/)?(environ|mem)\b")


@dataclass
class Finding:
    """The built-in verdict on one command: decision, ``builtin:*`` rule and a reason.

    ``edit_like`` findings (deleting files inside the workspace) are allowed in
    ``accept-edits`` mode.
    """

    decision: str
    rule: str
    reason: str
    edit_like: bool = False
    open_prefix: str | None = None
    """Set when the command cannot be read in full: the literal words known (``""``: none).
    Any deny or ask rule these words could begin is taken to match."""
    spellings: tuple[str, ...] = ()
    """The command's normalised spellings, also matched by deny and ask rules."""


def _positional(program: str, args: list[str]) -> list[str]:
    values = OPTION_VALUES.get(program, set())
    out: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            out.extend(args[i + 1 :])
            break
        if arg.startswith("-") and len(arg) > 1:
            i += 2 if arg in values else 1
            continue
        out.append(arg)
        i += 1
    return out


def _option_value(args: list[str], names: tuple[str, ...]) -> str | None:
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                return args[index + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def _escape_finding(target: Target, verb: str) -> Finding:
    if target.kind == "device":
        return Finding("deny", "builtin:write-to-device", f"{verb} the device {target.raw}")
    where = "your home folder" if target.kind == "home" else "outside the workspace"
    rule = (
        "builtin:delete-outside-workspace"
        if verb == "deletes"
        else "builtin:write-outside-workspace"
    )
    return Finding("deny", rule, f"{verb} {target.raw}, which is {where}")


class Judge:
    """Judges the commands of one command line, following ``cd`` as it goes."""

    def __init__(self, cwd: Path, root: Path) -> None:
        self.cwd = cwd
        self.root = root
        self.downloads: set[int] = set()

    def where(self, raw: str) -> Target:
        return classify(raw, self.cwd, self.root)

    def redirects(self, command: SimpleCommand) -> list[Finding]:
        out = []
        for op, target_raw in command.redirects:
            if op not in WRITE_REDIRECTS or (op == ">&" and target_raw.isdigit()):
                continue
            target = self.where(target_raw)
            if target.escapes:
                out.append(_escape_finding(target, "writes to"))
            elif target.kind in ("inside", "build", "root") and _in_mycode(target, self.root):
                out.append(
                    Finding(
                        "ask", "builtin:protected-folder", f"writes into .mycode/ ({target.raw})"
                    )
                )
        return out

    def follow_cd(self, part: Part) -> None:
        if part.command.program not in ("cd", "pushd") or part.command.nested:
            return
        args = [a for a in part.words[1:] if not a.startswith("-") or a == "-"]
        if not args:
            self.cwd = Path.home()
            return
        target = self.where(args[0])
        if target.path is not None and target.kind != "unknown":
            self.cwd = target.path

    def judge(self, part: Part) -> list[Finding]:
        words = part.words
        program = part.command.program
        args = words[1:]
        found: list[Finding] = []
        if program in DOWNLOADERS:
            self.downloads.add(part.command.pipeline)
        if program.startswith("mkfs") or program in DISK_TOOLS:
            found.append(
                Finding("deny", "builtin:disk-format", f"{program} formats or partitions disks")
            )
        if program in POWER or (program in ("init", "telinit") and args[:1] in (["0"], ["6"])):
            found.append(Finding("deny", "builtin:power", f"{program} shuts the machine down"))
        if program == "systemctl" and set(args) & {"poweroff", "reboot", "halt", "kexec"}:
            found.append(Finding("deny", "builtin:power", "systemctl would shut the machine down"))
        if program == "killall5" or (program == "kill" and "-1" in _kill_targets(args)):
            found.append(Finding("deny", "builtin:kill-all", "kills every process"))
        if (
            part.command.piped_in
            and program in INTERPRETERS
            and part.command.pipeline in self.downloads
        ):
            found.append(
                Finding("deny", "builtin:download-and-run", "pipes a download into an interpreter")
            )
        if program in INTERPRETERS and _runs_download(words):
            found.append(Finding("deny", "builtin:download-and-run", "runs a downloaded script"))
        targets = [*args, *(t for _, t in part.command.redirects)]
        if any(_PROC_SECRET.search(a) for a in targets):
            found.append(
                Finding(
                    "deny",
                    "builtin:process-secrets",
                    "reads a process's environment or memory under /proc",
                )
            )
        found += self.paths(program, args)
        found += self.risky(part, program, args)
        found += self.sensitive(args)
        return found

    def paths(self, program: str, args: list[str]) -> list[Finding]:
        out: list[Finding] = []
        if program == "dd":
            for arg in args:
                if arg.startswith("of="):
                    target = self.where(arg[3:])
                    if target.escapes:
                        out.append(_escape_finding(target, "writes to"))
            return out
        if program in DELETERS:
            return self.deletes(program, _positional(program, args))
        if program == "find":
            return self.find(args)
        if program in ALL_ARG_WRITERS | DEST_WRITERS | MODE_WRITERS or program in ("sed", "tar"):
            for target in self.written(program, args):
                if target.escapes or (target.kind == "safe-device" and program not in ("tee",)):
                    out.append(_escape_finding(target, "writes to"))
                elif program == "mv" and target.kind == "root":
                    out.append(
                        Finding("ask", "builtin:delete-workspace", "moves the whole workspace")
                    )
                elif _in_mycode(target, self.root):
                    out.append(
                        Finding(
                            "ask", "builtin:protected-folder", f"changes .mycode/ ({target.raw})"
                        )
                    )
        return out

    def written(self, program: str, args: list[str]) -> list[Target]:
        positional = _positional(program, args)
        raws: list[str] = []
        if program in ALL_ARG_WRITERS:
            raws = positional
        elif program in DEST_WRITERS:
            target_dir = _option_value(args, ("-t", "--target-directory"))
            if target_dir is not None:
                raws = [target_dir]
            elif program == "rsync":
                raws = positional[-1:] if len(positional) > 1 and ":" not in positional[-1] else []
            else:
                raws = positional[-1:] if len(positional) > 1 else []
        elif program in MODE_WRITERS:
            raws = positional if any(a.startswith("--reference") for a in args) else positional[1:]
        elif program == "sed" and any(a.startswith(("-i", "--in-place")) for a in args):
            has_script = _option_value(args, ("-e", "--expression", "-f", "--file")) is not None
            raws = positional if has_script else positional[1:]
        elif program == "tar" and args and ("x" in args[0].lstrip("-") or "--extract" in args):
            directory = _option_value(args, ("-C", "--directory"))
            raws = [directory] if directory else []
        return [self.where(raw) for raw in raws]

    def deletes(self, program: str, targets: list[str]) -> list[Finding]:
        if not targets:
            return [
                Finding(
                    "ask",
                    "builtin:delete",
                    f"{program} deletes files it gets from input",
                    edit_like=True,
                )
            ]
        out: list[Finding] = []
        for raw in targets:
            target = self.where(raw)
            if target.escapes:
                out.append(_escape_finding(target, "deletes"))
            elif target.kind == "root":
                out.append(
                    Finding("ask", "builtin:delete-workspace", f"deletes the workspace ({raw})")
                )
            elif target.kind == "unknown":
                out.append(
                    Finding(
                        "ask",
                        "builtin:delete",
                        f"deletes {raw}, which cannot be checked before it runs",
                    )
                )
            elif target.kind == "inside":
                out.append(
                    Finding(
                        "ask",
                        "builtin:delete",
                        f"deletes {raw} in the workspace (not a build or cache folder)",
                        edit_like=True,
                    )
                )
            elif _in_mycode(target, self.root):
                out.append(Finding("ask", "builtin:protected-folder", f"deletes {raw}"))
        return out

    def find(self, args: list[str]) -> list[Finding]:
        destructive = "-delete" in args or any(
            a in ("-exec", "-execdir", "-ok", "-okdir")
            and i + 1 < len(args)
            and args[i + 1].rsplit("/", 1)[-1] in DELETERS | {"mv", "chmod", "chown"}
            for i, a in enumerate(args)
        )
        if not destructive:
            return []
        starts = []
        for arg in args:
            if arg.startswith(("-", "(", "!")):
                break
            starts.append(arg)
        names = [args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-name", "-iname")]
        if names and all(is_build_name(name) for name in names):
            starts = [s for s in starts if self.where(s).escapes]
            if not starts:
                return []
        out = []
        for finding in self.deletes("find", starts or ["."]):
            if finding.rule == "builtin:delete-workspace":
                finding = Finding(
                    "ask", "builtin:delete", "find deletes files in the workspace", edit_like=True
                )
            out.append(finding)
        return out

    def risky(self, part: Part, program: str, args: list[str]) -> list[Finding]:
        out: list[Finding] = []
        if program in PRIVILEGE and not part.wrappers:
            out.append(
                Finding("ask", "builtin:privilege", f"{program} runs a command as another user")
            )
        if program in NETWORK and not (program in DOWNLOADERS and _local_only(args)):
            out.append(Finding("ask", "builtin:network", f"{program} uses the network"))
        if program == "rsync" and any(":" in a for a in _positional("rsync", args)):
            out.append(Finding("ask", "builtin:network", "rsync to or from another machine"))
        if program in EXTERNAL:
            out.append(
                Finding("ask", "builtin:external-system", f"{program} acts on external systems")
            )
        if program in ADMIN or (program == "systemctl" and not _read_only_systemctl(args)):
            out.append(Finding("ask", "builtin:system-admin", f"{program} changes the system"))
        if program in PROCESS:
            out.append(Finding("ask", "builtin:process-control", f"{program} stops processes"))
        install = packages.install_reason(program, args)
        if install:
            out.append(Finding("ask", "builtin:package-install", install))
        git = packages.git_reason(args) if program == "git" else None
        if git:
            out.append(Finding("ask", git[0], git[1]))
        return out

    def sensitive(self, args: list[str]) -> list[Finding]:
        for arg in args:
            value = arg.split("=", 1)[-1] if arg.startswith("-") else arg
            why = sensitive_reason(value) if value and "/" not in value.rstrip("/")[-1:] else None
            if why:
                return [Finding("ask", "builtin:sensitive-file", f"touches {value}: {why}")]
        return []


def _local_only(args: list[str]) -> bool:
    """True when every target of a curl/wget is this machine (testing a local server)."""
    targets = [a for a in args if not a.startswith("-")]
    return bool(targets) and all(LOCAL_URL.match(t) for t in targets)


def _runs_download(words: list[str]) -> bool:
    return any(SUBST_DOWNLOAD.search(word) for word in words)


def _kill_targets(args: list[str]) -> list[str]:
    rest = args
    if rest[:1] in (["-s"], ["-n"]):
        rest = rest[2:]
    elif rest and rest[0].startswith("-") and rest[0] != "--":
        rest = rest[1:]
    return rest[1:] if rest[:1] == ["--"] else rest


def _in_mycode(target: Target, root: Path) -> bool:
    if target.path is None:
        return False
    try:
        rel = target.path.relative_to(root)
    except ValueError:
        return False
    return bool(rel.parts) and rel.parts[0] == ".mycode"


def _read_only_systemctl(args: list[str]) -> bool:
    verbs = [a for a in args if not a.startswith("-")]
    return not verbs or verbs[0] in (
        "status",
        "show",
        "list-units",
        "list-unit-files",
        "is-active",
        "is-enabled",
        "cat",
    )


def is_fork_bomb(command: str) -> bool:
    """A function that pipes itself into itself in the background (``:(){ :|:& };:``)."""
    for match in FUNCTION_PARENS.finditer(command):
        head = command[max(0, match.start() - 80) : match.start()].rstrip(" \t")
        name = ""
        for ch in reversed(head):
            if ch.isspace() or ch in "(){}|&;<>" or len(name) >= 64:
                break
            name = ch + name
        if not name:
            continue
        stop = min(len(command), match.end() + 256)
        end = command.find("}", match.end(), stop)
        body = "".join(command[match.end() : end if end >= 0 else stop].split())
        if f"{name}|{name}&" in body:
            return True
    return False


def _judge_part(judge: Judge, part: Part, strict: Any) -> Finding:
    """The finding of one command that will run, with what deny/ask rules must see."""
    findings = judge.judge(part)
    judge.follow_cd(part)
    words = part.words
    prefix = spelling.open_prefix(words)
    hidden = part.hidden or spelling.hidden_reason(words)
    if hidden is not None:
        prefix = ""
    elif prefix is None and part.fed:
        prefix = " ".join(spelling.normalised(words))
    if prefix == "" and not hidden:
        hidden = "its program is not a literal word, so it may be anything"
    if prefix is not None and not hidden:
        hidden = "some of its words cannot be read before it runs"
    if (
        prefix == ""
        and (part.hidden_builtin or not part.hidden)
        and not spelling.hidden_reason(words)
    ):
        findings.append(Finding("ask", "builtin:unreadable-command", f"{part.text}: {hidden}"))
    elif (
        prefix is not None
        and (prefix.split() or [""])[0] in spelling.RISKY_PROGRAMS
        and (part.fed or len(prefix.split()) < 2)
    ):
        findings.append(Finding("ask", "builtin:unreadable-command", f"{part.text}: {hidden}"))
    if findings:
        worst = max(findings, key=lambda f: SEVERITY[f.decision])
    elif strict is not None and (why := strict.doubt(part, judge.cwd)):
        worst = Finding("ask", "builtin:unsandboxed", why)
    else:
        worst = Finding("allow", "builtin:ordinary-command", "an ordinary command")
    norm = " ".join(spelling.normalised(words))
    spellings = tuple(t for t in {norm, part.text} if t)
    if prefix is not None:
        hidden = hidden or "some of its words cannot be read before it runs"
        reason = f"{worst.reason}; {hidden}" if worst.decision != "allow" else hidden
        return replace(worst, reason=reason, open_prefix=prefix, spellings=spellings)
    return replace(worst, spellings=spellings)


def judge_command(
    command: str, cwd: Path, root: Path, strict: Any = None
) -> list[tuple[str, Finding]]:
    """Judge every command of a command line: ``[(command text, finding)]``, worst first kept
    in order of appearance. Ordinary commands get an ``allow`` finding — unless ``strict``
    (a :class:`~.unsandboxed.Strict`, when no sandbox contains the command) cannot show them to
    be harmless, then they ask. Long command lines ask before any parsing."""
    if len(command) > MAX_COMMAND_CHARS:
        reason = (
            f"the command is {len(command)} characters long (at most {MAX_COMMAND_CHARS} "
            f"characters and {MAX_PARTS} commands are checked); write a script file and run it "
            "instead"
        )
        return [(command[:200] + "…", Finding("ask", "builtin:command-too-long", reason))]
    if is_fork_bomb(command):
        return [(command, Finding("deny", "builtin:fork-bomb", "a fork bomb"))]
    try:
        commands = parse(command)
        if len(commands) > MAX_PARTS:
            reason = f"the command line has {len(commands)} commands, over the {MAX_PARTS} checked"
            return [(command[:200] + "…", Finding("ask", "builtin:command-too-long", reason))]
        judge = Judge(cwd, root)
        results: list[tuple[str, Finding]] = []
        for simple in commands:
            if simple.program in INTERPRETERS and _runs_download(simple.words):
                finding = Finding("deny", "builtin:download-and-run", "runs a downloaded script")
                results.append((" ".join(simple.words), finding))
            for finding in judge.redirects(simple):
                results.append((" ".join(simple.words), finding))
            for part in expand(simple):
                results.append((part.text, _judge_part(judge, part, strict)))
    except ParseError as exc:
        return [
            (
                command,
                Finding("ask", "builtin:unparsed", f"the command could not be checked ({exc})"),
            )
        ]
    if not results:
        results.append((command, Finding("allow", "builtin:ordinary-command", "nothing to run")))
    return results
