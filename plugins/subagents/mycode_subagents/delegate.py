"""The ``delegate_task`` tool: run a profile as a child agent and report what it did."""

from __future__ import annotations

import threading
from typing import Any

from mycode_core.records import RunContext, Tool, ToolResult
from mycode_subagents import settings as config_mod
from mycode_subagents.profiles import Profile

TOOL_NAME = "delegate_task"
DEFAULT_PROFILE = "general"
ALIASES = {"general-purpose": "general"}
"""Claude Code's names of the built-in profiles."""
CHILD_TIMEOUT = 24 * 3600.0
"""A child is bounded by its steps and tokens (and Ctrl-C), not by the tool timeout."""
DESCRIPTION_LIMIT = 1000
"""Characters of a profile's description shown in the tool description."""

CHILD_PREAMBLE = (
    "# Subagent\n\nYou are a subagent: another agent gave you one task and is waiting for your "
    "final answer, which is all it will see. Work on that task only, with the tools you have. "
    "Finish with a concise report: what you found or changed (with file paths), the checks you "
    "ran and their real outcome, and anything left undone."
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "All it needs: it cannot see this chat.",
        },
        "agent": {
            "type": "string",
            "description": f"Default {DEFAULT_PROFILE!r}.",
        },
        "description": {
            "type": "string",
            "description": "A few words for the user.",
        },
    },
    "required": ["task"],
    "additionalProperties": False,
}


class Delegator:
    """The profiles of a run and the tool that runs them."""

    def __init__(self, profiles: dict[str, Profile], config: config_mod.SubagentSettings):
        self.profiles = profiles
        self.config = config
        self._gates: dict[int, tuple[threading.BoundedSemaphore, threading.Lock]] = {}
        self._gates_lock = threading.Lock()
        self._told: set[str] = set()

    def _gate(self, depth: int, read_only: bool) -> Any:
        """Siblings share a gate: up to ``max_parallel`` read-only children at once, writing
        children one at a time (a child's own children have the next depth's gate)."""
        with self._gates_lock:
            gates = self._gates.get(depth)
            if gates is None:
                gates = (threading.BoundedSemaphore(self.config.max_parallel), threading.Lock())
                self._gates[depth] = gates
        return gates[0] if read_only else gates[1]

    def find(self, name: str) -> Profile | None:
        """The profile called ``name`` (case-insensitive; Claude Code's ``general-purpose`` is
        ``general``)."""
        name = name.strip()
        if name in self.profiles:
            return self.profiles[name]
        wanted = ALIASES.get(name.lower(), name.lower())
        for key, profile in self.profiles.items():
            if key.lower() == wanted:
                return profile
        plugin, colon, short = name.partition(":")
        if colon:  # Claude Code's ``plugin:agent`` for a plugin's profile listed as ``agent``
            held = self.profiles.get(short)
            if held is not None and held.plugin == plugin:
                return held
        return None

    # -- which tools a child gets

    def child_tools(self, profile: Profile, context: RunContext) -> list[str]:
        """The exact tool names the child may use, from the tools of ``context``."""
        available = {tool.name: tool for tool in context.tools.all()}
        wanted = profile.tool_names()
        names = list(available) if wanted is None else [n for n in wanted if n in available]
        if profile.read_only_mcp:
            names += [
                name
                for name, tool in available.items()
                if name.startswith("mcp__") and tool.read_only and name not in names
            ]
        if context.depth + 1 >= self.config.max_depth and TOOL_NAME in names:
            names.remove(TOOL_NAME)
        denied = profile.disallowed_names()
        return [name for name in names if name not in denied]

    def missing_tools(self, profile: Profile, context: RunContext) -> list[str]:
        """Tools a profile names that this run does not have (as the profile spells them)."""
        available = set(context.tools.names())
        missing = []
        for raw in profile.tools or ():
            mapped = Profile(name="x", description="", tools=[raw]).tool_names() or []
            if mapped and mapped[0] not in available:
                missing.append(raw)
        return missing

    def tell_missing_tools(self, profile: Profile, context: RunContext) -> None:
        """One notice, once a run, when ``profile`` names tools this run does not have (MCP
        tools aside: their servers may still be starting)."""
        from mycode_core.events import NoticeEvent

        missing = [n for n in self.missing_tools(profile, context) if not n.startswith("mcp__")]
        with self._gates_lock:
            if not missing or profile.name in self._told:
                return
            self._told.add(profile.name)
        message = (
            f"agent profile {profile.name!r} ({profile.source}) names tools that do not exist "
            f"here: {', '.join(missing)}; its subagent runs without them"
        )
        context.emit(NoticeEvent(level="warning", source="subagents", message=message))

    def is_read_only(self, profile: Profile, context: RunContext) -> bool:
        """Whether every tool the child would get is read-only."""
        if profile.tools is None:
            return False
        tools = [context.tools.get(name) for name in self.child_tools(profile, context)]
        return all(tool is not None and tool.read_only for tool in tools)

    # -- the tool

    def tool(self, context: RunContext) -> Tool:
        """The ``delegate_task`` tool, its description listing the profiles."""

        def safe_for(arguments: dict[str, Any]) -> bool:
            profile = self.find(str(arguments.get("agent") or DEFAULT_PROFILE))
            return profile is not None and self.is_read_only(profile, context)

        return Tool(
            name=TOOL_NAME,
            description=self.description(),
            input_schema=SCHEMA,
            handler=self.run,
            concurrency_safe=False,
            concurrency_safe_for=safe_for,
            # in plan mode a child inherits plan mode, so it can only read: Claude Code's
            # planning runs Explore agents, and so may this one
            read_only=context.permission_mode == "plan",
            risk="medium",
            timeout=CHILD_TIMEOUT,
        )

    def description(self) -> str:
        """The tool description: what it does, then each profile's name and description."""
        lines = [
            "Run a self-contained task (broad search, side task) in a fresh-context subagent; "
            "returns its answer, changes, checks, verdict. Read-only ones in one reply run in "
            "parallel. Agents:",
        ]
        for profile in self.profiles.values():
            text = profile.description
            if len(text) > DESCRIPTION_LIMIT:
                text = text[: DESCRIPTION_LIMIT - 1] + "…"
            lines.append(f"- {profile.name}: {text}")
        return "\n".join(lines)

    def run(self, arguments: dict[str, Any], context: RunContext) -> ToolResult:
        """Handle one ``delegate_task`` call."""
        config = self.config
        if context.depth >= config.max_depth:
            return ToolResult.error(
                f"delegate_task is not available here: subagents may nest {config.max_depth} "
                f"level(s) deep ([subagents] max_depth) and this agent is at depth "
                f"{context.depth}. Do the task yourself."
            )
        task = str(arguments.get("task") or "").strip()
        if not task:
            return ToolResult.error("delegate_task needs a non-empty `task`.")
        name = str(arguments.get("agent") or DEFAULT_PROFILE).strip()
        profile = self.find(name)
        if profile is None:
            listed = ", ".join(sorted(self.profiles))
            return ToolResult.error(
                f"Unknown agent profile {name!r}. Available profiles: {listed}."
            )
        from mycode_core.api import AgentRequest

        self.tell_missing_tools(profile, context)
        instructions = CHILD_PREAMBLE
        if profile.instructions:
            instructions += f"\n\n# Your role: {profile.name}\n\n{profile.instructions}"
        parent_steps = int(getattr(context.settings, "max_steps", config.max_steps) or 0)
        request = AgentRequest(
            task=task,
            name=profile.name,
            instructions=instructions,
            tools=self.child_tools(profile, context),
            model=config_mod.child_model(profile.model, config),
            max_steps=min(
                config.max_steps,
                parent_steps or config.max_steps,
                profile.max_turns or config.max_steps,
            ),
            max_tokens=config.max_tokens or None,
            description=str(arguments.get("description") or ""),
        )
        with self._gate(context.depth, self.is_read_only(profile, context)):
            outcome = context.spawn_agent(request)
        return result_for(profile, outcome)


def _count(number: int, word: str) -> str:
    """``1 step``, ``2 steps``."""
    return f"{number} {word}" + ("" if number == 1 else "s")


def result_for(profile: Profile, outcome: Any) -> ToolResult:
    """The tool result the parent sees: a header, the facts, then the child's answer."""
    tokens = sum(outcome.usage.get(key, 0) for key in ("input_tokens", "output_tokens"))
    header = (
        f"[subagent {outcome.agent_id} · profile {profile.name} · {outcome.stop_reason} · "
        f"verdict {outcome.verdict} · {_count(outcome.steps, 'step')} · "
        f"{_count(tokens, 'token')}]"
    )
    lines = [header]
    if not outcome.ok:
        why = str(outcome.error or outcome.stop_reason).rstrip(".")
        lines.append(f"The subagent did not complete: {why}. What it found so far is below.")
    lines.append("Files changed: " + (", ".join(outcome.files_changed) or "none"))
    if outcome.validations:
        runs = [
            f"{v['command']} ({v['kind']}): {'passed' if v['passed'] else 'FAILED'}"
            for v in outcome.validations
        ]
        lines.append("Checks run: " + "; ".join(runs))
    else:
        lines.append("Checks run: none")
    answer = outcome.final_text.strip() or "(no answer)"
    lines += ["", "Final answer:" if outcome.ok else "Last report:", answer]
    metadata = {
        "subagent": {
            "agent_id": outcome.agent_id,
            "profile": profile.name,
            "stop_reason": outcome.stop_reason,
            "verdict": outcome.verdict,
            "steps": outcome.steps,
            "usage": dict(outcome.usage),
            "files_changed": list(outcome.files_changed),
            "validations": list(outcome.validations),
            "transcript": outcome.transcript,
            "error": None if outcome.ok else (outcome.error or outcome.stop_reason),
        }
    }
    return ToolResult(content="\n".join(lines), is_error=not outcome.ok, metadata=metadata)
