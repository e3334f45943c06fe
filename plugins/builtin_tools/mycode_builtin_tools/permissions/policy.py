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

from dataclasses import dataclass
from typing import Any

from mycode_builtin_tools import paths
from mycode_builtin_tools.permissions import rules as rules_mod
from mycode_builtin_tools.permissions.commands import Finding, judge_command
from mycode_builtin_tools.permissions.unsandboxed import strict_for
from mycode_core.records import PermissionVerdict

FILE_TOOLS = {"read_file", "write_file", "edit_file", "glob", "grep"}
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


def _mode_layer(settings: Any) -> str:
    for layer, raw in reversed(list(getattr(settings, "layers", None) or [])):
        if isinstance(raw, dict) and raw.get("permission_mode"):
            return str(layer)
    return "default"


def _grant_for_command(text: str) -> str:
    words = text.split()
    if not words:
        return "run_command"
    keep = words[:2] if words[0] in _GRANT_TWO_WORDS and len(words) > 1 else words[:1]
    if len(keep) == 2 and (keep[1].startswith("-") or "/" in keep[1] or ":" in keep[1]):
        keep = keep[:1]
    return f"run_command({' '.join(keep)}:*)"


def _file_subject(tool: str, arguments: dict[str, Any], context: Any) -> _Subject:
    raw = arguments.get("path")
    if tool in ("glob", "grep") and not raw:
        raw = "."
    try:
        path = paths.resolve_in_workspace(raw, context, allow_artifacts=tool == "read_file")
    except paths.BoundaryError as exc:
        return _Subject(str(raw), Finding("deny", "builtin:workspace-boundary", str(exc)), tool)
    rel = paths.relative(path, context)
    grant = f"{'edit_file' if tool in WRITE_TOOLS else 'read_file'}({rel})"
    secret = paths.sensitive_reason(path) if path.name else None
    if secret:
        verb = "changing" if tool in WRITE_TOOLS else "reading"
        finding = Finding(
            "ask",
            "builtin:sensitive-file",
            f"{verb} {rel}: {secret}",
            edit_like=tool in WRITE_TOOLS,
        )
        return _Subject(rel, finding, grant)
    if tool in WRITE_TOOLS:
        protected = paths.protected_reason(rel)
        if protected:
            finding = Finding("ask", "builtin:protected-folder", f"changing {rel}: {protected}")
            return _Subject(rel, finding, grant)
        finding = Finding("allow", "builtin:edit-inside-workspace", "an edit inside the workspace")
        return _Subject(rel, finding, grant)
    return _Subject(
        rel, Finding("allow", "builtin:read-inside-workspace", "a read in the workspace"), grant
    )


def _command_subjects(arguments: dict[str, Any], context: Any) -> list[_Subject]:
    from mycode_builtin_tools.tools.run_command import current_cwd

    command = str(arguments.get("command") or "")
    root = paths.workspace_root(context)
    judged = judge_command(command, current_cwd(context), root, strict_for(context))
    return [_Subject(text, finding, _grant_for_command(text)) for text, finding in judged]


def _other_subject(tool: Any) -> _Subject:
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
    return _Subject(None, finding, tool.name)


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
    matcher = rules_mod.command_matches if tool_name == "run_command" else rules_mod.path_matches
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
        reason=finding.reason.capitalize() + ".",
        rule=finding.rule,
        layer="default",
    )


def decide(call: Any, tool: Any, context: Any) -> PermissionVerdict:
    """The verdict for one tool call (see the module docstring)."""
    settings = context.settings
    mode = context.permission_mode
    mode_layer = _mode_layer(settings)
    arguments = call.arguments if isinstance(call.arguments, dict) else {}
    if mode == "plan" and not tool.read_only:
        return PermissionVerdict(
            decision="deny",
            reason=(
                f"plan mode allows read-only tools only; {tool.name} is not read-only. "
                "Describe the plan instead, or re-run with --permission-mode default "
                "(or accept-edits) to let it change things."
            ),
            rule="mode:plan",
            layer=mode_layer,
        )
    name = tool.name
    if name in FILE_TOOLS and getattr(tool, "plugin", None) == "builtin_tools":
        subjects = [_file_subject(name, arguments, context)]
    elif name == "run_command" and getattr(tool, "plugin", None) == "builtin_tools":
        subjects = _command_subjects(arguments, context)
    elif name == "todo_write" and getattr(tool, "plugin", None) == "builtin_tools":
        subjects = [
            _Subject(None, Finding("allow", "builtin:todo", "updating the todo list"), name)
        ]
    else:
        subjects = [_other_subject(tool)]
    rules = rules_mod.collect(settings, getattr(context, "session_grants", None))
    verdicts = [_decide(subject, name, rules, mode, mode_layer) for subject in subjects]
    for decision in ("deny", "ask"):
        for verdict in verdicts:
            if verdict.decision == decision:
                return verdict
    return verdicts[0]
