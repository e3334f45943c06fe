"""Per-run state of the plugin: the hooks that apply, the transcript, and firing an event."""

from __future__ import annotations

import sys
import threading
from typing import Any

from mycode_claude_compat.bounded import bounded
from mycode_claude_compat.grants import CommandGrants
from mycode_claude_compat.loading import Loaded, load
from mycode_claude_compat.nested import already_read
from mycode_claude_compat.protocol import Decision, decide
from mycode_claude_compat.rules import load_rules, user_rules
from mycode_claude_compat.runner import HookProcesses, run_all
from mycode_claude_compat.transcript import Transcript

STORE_KEY = "claude_compat"
_MODES = {
    "default": "default",
    "accept-edits": "acceptEdits",
    "plan": "plan",
    "bypass": "bypassPermissions",
}
_create_lock = threading.Lock()
STOP_EVENTS = frozenset({"Stop", "SubagentStop"})
BLOCKING_EVENTS = frozenset(
    {
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "UserPromptSubmit",
        "UserPromptExpansion",
        "Stop",
        "SubagentStop",
    }
    | {"PreCompact"}
)


class CompatSession:
    """What one run needs: loaded sources, transcript, Stop-hook state."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.loaded: Loaded = load(context.workspace, context.home, context.settings)
        folder = context.home / "claude_compat" / "transcripts"
        self.session_transcript = folder / f"{context.session_id}.jsonl"
        """The main agent's transcript: every hook's ``transcript_path``, in a subagent too."""
        self.agent_id: str | None = getattr(context, "agent_id", None)
        self.agent_type = getattr(context, "agent_name", None) or "agent"
        """A subagent's profile (``agent_type`` of its hooks' input, ``SubagentStart``'s and
        ``SubagentStop``'s matcher)."""
        path = self.session_transcript
        if self.agent_id is not None:  # its own file, as Claude Code keeps a subagent's
            path = folder / context.session_id / "subagents" / f"agent-{self.agent_id}.jsonl"
        self.transcript = Transcript(path, context.session_id, context.workspace, self.agent_id)
        self.subagent_context: list[str] | None = None
        """What ``SubagentStart`` hooks added (asked once; see :mod:`.subagent_start`)."""
        self.transcript.enabled = self.loaded.hooks.count() > 0
        if self.transcript.enabled:
            self.transcript.touch()
        self.stop_hook_active = False
        self.prompt_seen = 0
        """How much of ``context.prompt`` earlier turns said (:func:`.expansion.this_turn`)."""
        self.pending_context: dict[str, list[str]] = {}
        self.command_grants = CommandGrants()
        self.saved_env: dict[str, str | None] = {}
        """What ``CLAUDE_ENV_FILE`` changed in the environment, to put back at the end."""
        self.settings_env: dict[str, str | None] = {}
        """What the settings files' ``env`` changed (:mod:`.settings_env`), likewise."""
        self.lock = threading.Lock()
        self.rewakes: list[str] = []
        """What ``asyncRewake`` hooks that exited 2 said, not yet given to the model."""
        self.rewaking: list[threading.Thread] = []
        """The ``asyncRewake`` hooks still running (each within its timeout)."""
        self.rules = load_rules(
            context.workspace, context.settings, user_rules(context.settings), self.notice
        )
        self.rules_shown: set[str] = set()
        """The path-scoped rules the model has been given (once a run each)."""
        self.folders_seen = already_read(context.workspace)
        """The folders whose ``CLAUDE.md`` was looked for (:mod:`.nested`)."""
        self.processes = HookProcesses(getattr(context, "cancelled", None))
        if isinstance(getattr(context, "cleanup", None), list):  # a hand-made context may lack it
            context.cleanup.append(self.processes.stop_all)  # no hook outlives the run
        told = list(getattr(context.settings, "notices", None) or ())  # the core's, same file
        for message in self.loaded.notices if self.agent_id is None else ():  # said once
            if not any(line and line in message for line in told):
                self.notice(message)

    @property
    def hooks(self) -> Any:
        """The run's :class:`~mycode_claude_compat.sources.HookSet`."""
        return self.loaded.hooks

    def notice(self, message: str, level: str = "warning") -> None:
        """One notice in the run's event stream."""
        from mycode_core.events import NoticeEvent

        self.context.emit(NoticeEvent(level=level, message=message, source="claude_compat"))  # type: ignore[arg-type]

    def payload(self, event: str, **fields: Any) -> dict[str, Any]:
        """The stdin JSON: the common fields, then the event's own."""
        mode = self.context.permission_mode
        payload = {
            "session_id": self.context.session_id,
            "transcript_path": str(self.session_transcript),
            "cwd": str(self.context.workspace),
            "permission_mode": _MODES.get(mode, mode),
            "hook_event_name": event,
        }
        if self.agent_id is not None:  # in a subagent, as Claude Code and Codex say
            payload.update(agent_id=self.agent_id, agent_type=self.agent_type)
        payload.update(fields)
        return payload

    def fire(
        self,
        event: str,
        target: str = "",
        match_input: dict[str, Any] | None = None,
        extra_env: dict[str, str] | None = None,
        **fields: Any,
    ) -> Decision | None:
        """Run the hooks of ``event`` that match ``target`` (``extra_env`` added to their
        environment); ``None`` when none match.

        Messages and problems are reported as notices here; the caller applies the rest."""
        hooks = self.hooks.matching(event, target, match_input)
        if not hooks:
            return None
        self.transcript.flush()
        payload = self.payload(event, **fields)
        waiting = [hook for hook in hooks if not self._in_background(hook, event)]
        ask = getattr(self.context, "side_request", None)
        for hook in hooks:
            if self._in_background(hook, event):
                thread = threading.Thread(
                    target=self._background, args=(hook, payload, extra_env, ask), daemon=True
                )
                thread.start()
                if hook.rewake is not None:
                    with self.lock:
                        self.rewaking.append(thread)
        if not waiting:
            return None
        runs = run_all(waiting, payload, self.context.workspace, extra_env, ask, self.processes)
        decision = decide(runs, event)
        decision.context = [bounded(text, event, self.context) for text in decision.context]
        decision.reason = bounded(decision.reason, event, self.context)
        for message in decision.messages:
            self.notice(message, level="info")
        if decision.sequences and sys.stderr.isatty():
            sys.stderr.write("".join(decision.sequences))
            sys.stderr.flush()
        for problem in decision.problems:
            self.notice(f"{event}: {problem}")
        if decision.block and event not in BLOCKING_EVENTS:
            self.notice(f"{event} hook: {decision.reason}")  # cannot block: shown to the user
        if decision.stop is not None:
            self.notice(f"{event} hook stopped the run: {decision.stop}")
            self.context.cancelled.set()
        return decision

    def _in_background(self, hook: Any, event: str) -> bool:
        """Whether ``hook`` runs without being waited for. In ``-p`` an ``asyncRewake`` Stop
        hook is an ordinary Stop hook, as in Claude Code's ``claude -p``: no later turn could
        hear it, and its ``decision``/``reason`` are read."""
        if hook.rewake is not None and event in STOP_EVENTS:
            return hook.background and bool(getattr(self.context, "interactive", False))
        return hook.background

    def _background(
        self, hook: Any, payload: dict[str, Any], extra_env: dict[str, str] | None, ask: Any
    ) -> None:
        """An ``async`` hook, not waited for; an ``asyncRewake`` one that exits 2 leaves what it
        wrote to stderr for the model (:meth:`take_rewakes`) and its summary for the user."""
        (run,) = run_all([hook], payload, self.context.workspace, extra_env, ask, self.processes)
        if hook.rewake is None or run.code != 2 or run.detached or run.interrupted:
            return
        said = "\n\n".join(part for part in (hook.rewake.strip(), run.stderr.strip()) if part)
        with self.lock:
            self.rewakes.append(said or f"The background hook {hook.label} exited with 2.")
        self.notice(
            hook.rewake_summary or f"a background hook ({hook.label}) woke the model", "info"
        )

    def take_rewakes(self, wait: bool = False) -> list[str]:
        """What ``asyncRewake`` hooks said since the last call; with ``wait``, once those still
        running have ended (within their timeouts, sooner when the run is cancelled)."""
        if wait:
            with self.lock:
                running, self.rewaking = self.rewaking, []
            for thread in running:
                thread.join()
        with self.lock:
            said, self.rewakes = self.rewakes, []
        return said


def session_for(context: Any) -> CompatSession:
    """The run's :class:`CompatSession` (created, and its notices emitted, on first use)."""
    state = context.store.get(STORE_KEY)
    if state is None:
        with _create_lock:
            state = context.store.get(STORE_KEY)
            if state is None:
                state = CompatSession(context)
                context.store[STORE_KEY] = state
    return state  # type: ignore[no-any-return]
