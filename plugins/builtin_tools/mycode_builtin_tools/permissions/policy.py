"""The default ``permission_verdict`` policy: rules, modes and built-in judgement combined.

For each thing a call touches (a file, or each command of a command line):

1. a built-in ``deny`` (workspace boundary, destructive commands) always wins — no rule and
   no mode lifts it;
2. then the config rules: ``deny`` > ``ask`` > ``allow``; an "allow for this session"
   answer (a ``session`` grant) sits between ``deny`` and ``ask``, so it is not asked again;
3. then the built-in ``ask`` (network, installs, ``git push``, deletes, secrets), which
   ``bypass`` turns into allow, and ``accept-edits`` too for file edits and deletes;
4. else the built-in ``allow``.

A call is denied if any part is denied, asks if any part asks, else it is allowed. ``plan``
mode denies every tool that is not read-only. Every verdict names its rule and layer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mycode_builtin_tools import paths
from mycode_builtin_tools.permissions import gitwrites, spelling
from mycode_builtin_tools.permissions import rules as rules_mod
from mycode_builtin_tools.permissions.commands import Finding, judge_command
from mycode_builtin_tools.permissions.unsandboxed import strict_for
from mycode_core import paths as boundary
from mycode_core.api import mode_layer
from mycode_core.records import PermissionVerdict

WRITE_TOOLS = {"write_file", "edit_file"}
_GRANT_TWO_WORDS = {
    "git", "npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv", "cargo", "go", "docker", "kubectl",
    "apt", "apt-get", "brew", "gem", "bundle", "poetry", "pdm", "conda", "systemctl", "make",
    "dotnet", "gh", "helm", "terraform", "npx", "sudo",
}  # fmt: skip


@dataclass
class _Subject:
    """One thing a call touches: what rules match against, and the built-in judgement."""

    text: str | None
    finding: Finding
    grant: str


def _grant_for_command(text: str) -> str:
    """The session grant of one command: its program (``ls:*``), with the subcommand for the
    programs that have one (``git commit:*``, git's ``-C DIR``-like options skipped); when
    options come before the subcommand (``npm --prefix x run``, ``git -c k=v commit``) only
    this exact command, so a grant never widens to all of git, npm, sudo…"""
    words = spelling.subcommand_first(text).split()
    if not words:
        return "run_command"
    if len(words) < 2 or words[0].rsplit("/", 1)[-1] not in _GRANT_TWO_WORDS:
        return f"run_command({words[0]}:*)"
    if words[1].startswith("-") or "/" in words[1] or ":" in words[1]:
        return f"run_command({' '.join(words)})"
    return f"run_command({' '.join(words[:2])}:*)"


def _command_matches(spec: str | None, text: str) -> bool:
    """A ``run_command`` rule against a command, also as :func:`spelling.subcommand_first`
    reads it (``git -C ws commit`` is matched as ``git commit``)."""
    return rules_mod.command_matches(spec, text) or rules_mod.command_matches(
        spec, spelling.subcommand_first(text)
    )


def _file_subject(tool: Any, argument: str, call: Any, context: Any) -> _Subject:
    """The judgement of one declared path argument of a call (resolved by the core)."""
    write = tool.paths.get(argument) == "write"
    path = call.paths.get(argument) if getattr(call, "paths", None) else None
    raw = call.arguments.get(argument)
    if path is None:
        try:
            path = boundary.resolve_in_workspace(raw or ".", context, write=write)
        except boundary.BoundaryError as exc:
            finding = Finding("deny", "builtin:workspace-boundary", str(exc))
            return _Subject(str(raw), finding, tool.name)
    rel = boundary.relative(path, context)
    builtin = getattr(tool, "plugin", None) == "builtin_tools"
    if builtin:
        grant = f"{'edit_file' if write else 'read_file'}({rel})"
    else:
        grant = f"{tool.name}({rel})"
    secret = paths.sensitive_reason(path) if path.name else None
    if secret:
        verb = "changing" if write else "reading"
        finding = Finding(
            "ask", "builtin:sensitive-file", f"{verb} {rel}: {secret}", edit_like=write
        )
        return _Subject(rel, finding, grant)
    if write:
        protected = paths.protected_reason(rel) or _protected_root_reason(path, context)
        if protected:
            finding = Finding("ask", "builtin:protected-folder", f"changing {rel}: {protected}")
            return _Subject(rel, finding, grant)
        finding = Finding("allow", "builtin:edit-inside-workspace", "an edit inside the workspace")
        return _Subject(rel, finding, grant)
    if not tool.read_only and not builtin:
        return _other_subject(tool, rel)
    return _Subject(rel, _read_finding(path, context), grant)


def _protected_root_reason(path: Path, context: Any) -> str | None:
    """Why ``path`` is in a folder commands may not write (``context.protected_roots``: a
    plugin folder loaded from the workspace), or ``None``."""
    for folder in (Path(raw).resolve() for raw in getattr(context, "protected_roots", ())):
        if boundary.is_inside(path, folder):
            where = boundary.relative(folder, context)
            return f"it is inside {where}/ (a plugin folder: its hooks run outside the sandbox)"
    return None


def _read_finding(path: Path, context: Any) -> Finding:
    """The built-in allow of a read: in the workspace, or in a folder the run made readable
    outside it (this session's saved output, a listed skill's folder, a plugin's root)."""
    if boundary.is_inside(path, boundary.workspace_root(context)):
        return Finding("allow", "builtin:read-inside-workspace", "a read in the workspace")
    holder = boundary.bound_root(path, context)
    session_id, home = getattr(context, "session_id", None), getattr(context, "home", None)
    if isinstance(session_id, str) and home is not None:
        if holder == (Path(home) / "artifacts" / session_id).resolve():
            return Finding(
                "allow", "builtin:read-session-artifacts", "a read of this session's saved output"
            )
    return Finding(
        "allow",
        "builtin:read-readable-folder",
        f"a read in {holder}, a folder outside the workspace made readable for this run "
        "(a listed skill's folder or a plugin's own)",
    )


def _command_subjects(arguments: dict[str, Any], context: Any) -> list[_Subject]:
    from mycode_builtin_tools.tools.run_command import current_cwd

    command = str(arguments.get("command") or "")
    root = boundary.workspace_root(context)
    strict = strict_for(context)
    judged = judge_command(command, current_cwd(context), root, strict)
    if strict is None:
        judged = gitwrites_in_sandbox(judged, command)
    return [_Subject(text, finding, _grant_for_command(text)) for text, finding in judged]


def gitwrites_in_sandbox(
    judged: list[tuple[str, Finding]], command: str
) -> list[tuple[str, Finding]]:
    """Inside the sandbox ``.git`` is read-only: a git command writing it asks instead of
    being allowed (see :mod:`~mycode_builtin_tools.permissions.gitwrites`)."""
    out = []
    for text, finding in judged:
        asked = gitwrites.finding(text, command) if finding.decision == "allow" else None
        out.append((text, asked or finding))
    return out


def _other_subject(tool: Any, text: str | None = None) -> _Subject:
    if tool.read_only or tool.risk == "low":
        finding = Finding(
            "allow",
            "builtin:read-only-tool" if tool.read_only else "builtin:low-risk-tool",
            "a read-only or low-risk tool",
        )
    elif tool.risk == "high":
        finding = Finding("ask", "builtin:high-risk-tool", f"{tool.name} is marked high-risk")
    else:
        finding = Finding("allow", "builtin:default-allow", "tools are allowed by default")
    return _Subject(text, finding, tool.name)


def _ask_reason(what: str, grant: str) -> str:
    return (
        f'{what} needs your approval. To allow it, add "{grant}" to [permissions] allow in '
        "$MYCODE_HOME/config.toml (or .mycode/config.toml of a trusted workspace), or use "
        "--permission-mode bypass"
    )


def _decide(
    subject: _Subject, tool_name: str, rules: list[rules_mod.Rule], mode: str, mode_layer: str
) -> PermissionVerdict:
    finding = subject.finding
    if finding.decision == "deny":
        return PermissionVerdict(
            decision="deny", reason=f"Denied: {finding.reason}.", rule=finding.rule, layer="default"
        )
    matcher = _command_matches if tool_name == "run_command" else rules_mod.path_matches
    if tool_name == "run_command":
        hidden = _hidden_rule_verdict(subject, rules, mode)
        if hidden is not None:
            return hidden
    session = [rule for rule in rules if rule.layer == "session"]
    for kind in ("deny", "session", "ask", "allow"):
        pool, wanted = (session, "allow") if kind == "session" else (rules, kind)
        rule = rules_mod.first_match(pool, wanted, tool_name, subject.text, matcher)
        if rule is None:
            continue
        kind = wanted
        source = f'rule "{rule.text}" in {rules_mod.where(rule.layer)}'
        if kind == "deny":
            return PermissionVerdict(
                decision="deny", reason=f"Denied by {source}.", rule=rule.text, layer=rule.layer
            )
        if kind == "ask" and mode != "bypass":
            return PermissionVerdict(
                decision="ask",
                reason=f"{source} asks for approval. Answer yes to allow it, or remove the rule.",
                rule=rule.text,
                layer=rule.layer,
                grant=subject.grant,
            )
        return PermissionVerdict(
            decision="allow", reason=f"Allowed by {source}.", rule=rule.text, layer=rule.layer
        )
    if finding.decision == "ask":
        if mode == "bypass":
            return PermissionVerdict(
                decision="allow",
                reason=f"bypass mode ({finding.reason})",
                rule="mode:bypass",
                layer=mode_layer,
            )
        if mode == "accept-edits" and finding.edit_like:
            return PermissionVerdict(
                decision="allow",
                reason=f"accept-edits mode ({finding.reason})",
                rule="mode:accept-edits",
                layer=mode_layer,
            )
        what = f"{tool_name} {subject.text!r}" if subject.text else tool_name
        return PermissionVerdict(
            decision="ask",
            reason=_ask_reason(f"{what} ({finding.reason})", subject.grant),
            rule=finding.rule,
            layer="default",
            grant=subject.grant,
        )
    return PermissionVerdict(
        decision="allow",
        reason=finding.reason[:1].upper() + finding.reason[1:] + ".",  # paths keep their case
        rule=finding.rule,
        layer="default",
    )


def _hidden_rule_verdict(
    subject: _Subject, rules: list[rules_mod.Rule], mode: str
) -> PermissionVerdict | None:
    """Deny and ask rules against the other spellings of a command, and against a command
    that cannot be read in full ("may be anything"): such a match asks (denies in bypass
    mode, where nobody is asked and the deny rule must hold)."""
    finding = subject.finding
    granted = any(
        rule.layer == "session"
        and rule.kind == "allow"
        and rule.applies_to("run_command")
        and _command_matches(rule.spec, subject.text or "")
        for rule in rules
    )
    for kind in ("deny", "ask"):
        if kind == "ask" and granted and finding.open_prefix is None:
            break
        for rule in rules:
            if rule.kind != kind or rule.layer == "session" or not rule.applies_to("run_command"):
                continue
            exact = any(rules_mod.command_matches(rule.spec, t) for t in finding.spellings)
            if exact and kind == "deny":
                return PermissionVerdict(
                    decision="deny",
                    reason=f'Denied by rule "{rule.text}" in {rules_mod.where(rule.layer)}.',
                    rule=rule.text,
                    layer=rule.layer,
                )
            maybe = finding.open_prefix is not None and rules_mod.may_match(
                rule.spec, finding.open_prefix
            )
            if not (exact or maybe) or (mode == "bypass" and kind == "ask"):
                continue
            why = (
                f"{subject.text!r} cannot be read before it runs ({finding.reason}), so it may "
                f'be what rule "{rule.text}" in {rules_mod.where(rule.layer)} {kind}s'
                if maybe and not exact
                else f'{subject.text!r} is what rule "{rule.text}" {kind}s'
            )
            if mode == "bypass":
                return PermissionVerdict(
                    decision="deny", reason=f"Denied: {why}.", rule=rule.text, layer=rule.layer
                )
            return PermissionVerdict(
                decision="ask",
                reason=f"{why}. Answer yes only if you know what it runs; spell the command "
                "out literally to have it judged.",
                rule=rule.text,
                layer=rule.layer,
                grant=subject.grant,
            )
    return None


MCP_RESOURCE_TOOLS = frozenset({"read_mcp_resource", "list_mcp_resources"})
"""The MCP bridge's tools that act for the server named in their ``server`` argument."""


def _server_names(tool: Any, arguments: dict[str, Any]) -> list[str]:
    """``mcp__<server>__<tool>`` for an MCP resource tool given a server, so that a rule naming
    the server (``mcp__github``) covers its resources as it covers its tools."""
    server = arguments.get("server")
    if tool.name not in MCP_RESOURCE_TOOLS or getattr(tool, "plugin", None) != "mcp_bridge":
        return []
    if not isinstance(server, str) or not server:
        return []
    return [f"mcp__{re.sub(r'[^A-Za-z0-9_-]', '_', server)}__{tool.name}"]


def decide(call: Any, tool: Any, context: Any) -> PermissionVerdict:
    """The verdict for one tool call (see the module docstring)."""
    settings = context.settings
    mode = context.permission_mode
    layer_of_mode = mode_layer(settings)
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if mode == "plan" and not tool.read_only:
        return PermissionVerdict(
            decision="deny",
            reason=(
                f"plan mode allows read-only tools only; {tool.name} is not read-only. "
                "Describe the plan instead; the user can leave plan mode (/mode default "
                "in a session, --permission-mode default for a run) to let it."
            ),
            rule="mode:plan",
            layer=layer_of_mode,
        )
    name = tool.name
    if getattr(tool, "paths", None):
        subjects = [_file_subject(tool, argument, call, context) for argument in tool.paths]
    elif name == "run_command" and getattr(tool, "plugin", None) == "builtin_tools":
        subjects = _command_subjects(arguments, context)
    elif name == "todo_write" and getattr(tool, "plugin", None) == "builtin_tools":
        subjects = [
            _Subject(None, Finding("allow", "builtin:todo", "updating the todo list"), name)
        ]
    else:
        subjects = [_other_subject(tool)]
    approval = tool.approval(arguments, context) if hasattr(tool, "approval") else None
    if approval is not None:
        # issue 23: this call needs approval (remember into the user scope, an MCP tool
        # reaching outside the workspace); rules can still allow or deny it
        finding = Finding("ask", "builtin:call-needs-approval", approval.reason)
        subjects.append(_Subject(approval.subject, finding, approval.grant or name))
    rules = rules_mod.collect(settings, getattr(context, "session_grants", None))
    names = [name, *_server_names(tool, arguments)]
    verdicts = [_decide(s, n, rules, mode, layer_of_mode) for n in names for s in subjects]
    for decision in ("deny", "ask"):
        for verdict in verdicts:
            if verdict.decision == decision:
                return verdict
    return verdicts[0]
