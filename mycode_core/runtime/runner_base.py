"""The state every part of :class:`~mycode_core.runtime.loop.AgentRunner` shares."""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol

import pluggy

from mycode_core.config_check import settings_tables
from mycode_core.errors import error_line
from mycode_core.events import AgentEvent, GuidanceEvent, NoticeEvent
from mycode_core.records import RunContext
from mycode_core.runtime.changes import ChangeDetector
from mycode_core.runtime.context import ModelView
from mycode_core.runtime.history import History
from mycode_core.runtime.hookcalls import HookGuard, failure_notice, strict_from
from mycode_core.runtime.mainthread import MainThreadCalls
from mycode_core.runtime.messages import Expansion, guidance_message
from mycode_core.runtime.observation import ValidationMatcher
from mycode_core.runtime.stream import EventStream
from mycode_core.runtime.tools import ToolOrchestrator
from mycode_core.verdicts import CompletionVerdict

ChildSpawner = Callable[[Any, Any], Any]
"""Runs one child agent (passed in, so the loop never imports the child runner)."""

PromptExpander = Callable[[str, RunContext], Expansion]
"""Makes a user prompt ready to send (mentions inlined, images attached)."""


class AnswerCheck(Protocol):
    """A check of the final answer's shape run before any completion policy (``--json-schema``)."""

    def instructions(self) -> str:
        """Text added to the system prompt: what the answer must look like."""
        ...

    def judge(self, text: str) -> CompletionVerdict | None:
        """None when ``text`` passes; else a failing verdict whose feedback goes to the model."""
        ...

    def result_value(self, stop_reason: str) -> Any:
        """What ``result.structured_output`` carries for a run that stopped so."""
        ...


class RunnerBase:
    """The state of one agent run; the other parts of the runner build on it."""

    def __init__(
        self,
        *,
        pm: pluggy.PluginManager,
        settings: Any,
        workspace: Path,
        home: Path,
        session_id: str,
        interactive: bool = False,
        ask: Any = None,
        prior_messages: list[dict[str, Any]] | None = None,
        resumed_from: str | None = None,
        start_source: str | None = None,
        spawn_child: ChildSpawner | None = None,
        answer_check: AnswerCheck | None = None,
        expand_prompt: PromptExpander | None = None,
    ) -> None:
        self.pm = pm
        self.settings = settings
        if hasattr(settings, "use_tables") and not settings._tables:  # built in-process
            settings.use_tables(settings_tables(pm))
        self.workspace = workspace
        self.home = home
        self.session_id = session_id
        self.resumed_from = resumed_from
        self.start_source = start_source or ("resume" if resumed_from else "startup")
        self.history = History()
        for message in prior_messages or ():
            self.history.append(message)
        self.context = RunContext(
            workspace=workspace,
            home=home,
            settings=settings,
            session_id=session_id,
            interactive=interactive,
            ask=ask,
            emit=self._emit,
            plugin_manager=pm,
        )
        self.transitions: list[Any] = []
        self.usage = {"input_tokens": 0, "output_tokens": 0}
        self.events = EventStream(pm, self.context)
        self.guard = HookGuard(pm, self._emit, strict_from(settings))
        self.guard.on_strict = self.context.cancelled.set  # strict plugins: the run stops
        self.events.on_failure = self.guard.count  # a failing on_event observer counts too
        self.context.on_plugin_failure = self.guard.count  # and one a plugin caught itself
        self._lock = threading.RLock()
        self._ready = False
        self.model: Any = None
        self.view: ModelView | None = None
        self.orchestrator: ToolOrchestrator | None = None
        self.matcher = ValidationMatcher(settings.validation_commands)
        self._result_sent = False
        self._worker_thread: threading.Thread | None = None
        self.main_thread_calls = MainThreadCalls()  # questions asked on the main thread
        self._ended = False
        self.changes: ChangeDetector | None = None
        self.spawn_child = spawn_child
        if spawn_child is not None:  # ``context.spawn_agent`` runs a child agent (agents.py)
            self.context.spawner = partial(spawn_child, self)
        self.children_usage: dict[str, dict[str, int]] = {}  # descendants' own tokens by id
        self.structured = answer_check  # --json-schema: the final answer's shape check
        self.expand_prompt = expand_prompt or (lambda prompt, _context: Expansion(prompt))
        self.spawned_calls: set[str] = set()  # calls that ran a child (its facts hold changes)

    def prepare(self) -> None:
        """Set up the run once (model, tools, view); see ``AgentRunner.prepare``."""
        raise NotImplementedError

    def _emit(self, event: AgentEvent) -> None:
        self.events.emit(event)

    def _notice(self, message: str) -> None:
        self._emit(failure_notice(message))

    def _startup_task_failed(self, task: Any, exc: BaseException) -> None:
        """A plugin's start-up task raised: one notice naming the plugin, counted as a failure."""
        plugin = _plugin_of(self.pm, task)
        name = plugin or "unknown"
        message = f"plugin {name!r} failed in a start-up task: {error_line(exc)}"
        self._emit(
            NoticeEvent(
                level="warning", message=message, source=plugin, plugin=name, hook="startup_tasks"
            )
        )
        self.guard.count(message)

    def usage_by_agent(self) -> dict[str, dict[str, int]] | None:
        """Each agent's own tokens when child agents ran (they add up to ``usage``)."""
        if not self.children_usage:
            return None
        return {self.context.agent_id or "main": self._own_usage(), **self.children_usage}

    def _own_usage(self) -> dict[str, int]:
        """This agent's tokens without its descendants' (``usage`` holds both)."""
        own = dict(self.usage)
        for child in self.children_usage.values():
            for key, value in child.items():
                own[key] = own.get(key, 0) - value
        return own

    def _save_crash_report(self) -> str:
        """Write the current exception's traceback under MYCODE_HOME; return where."""
        import traceback

        path = self.home / "logs" / f"crash-{self.session_id}.log"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as fh:
                fh.write(traceback.format_exc())
        except OSError:
            return "no crash log could be written"
        return str(path)

    def _guide(self, source: str, message: str, pattern: str | None = None) -> None:
        self._emit(GuidanceEvent(source=source, message=message, pattern=pattern))
        self.history.append(guidance_message(source, message))

    _step = 0


def _plugin_of(pm: pluggy.PluginManager, task: Any) -> str | None:
    """The plugin whose module (or package) defines ``task``, if one does."""
    module = str(getattr(task, "__module__", None) or type(task).__module__ or "")
    best: str | None = None
    for name, plugin in pm.list_name_plugin():
        own = plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
        if own == module:
            return str(name)
        if best is None and own.split(".")[0] == module.split(".")[0]:
            best = str(name)
    return best
