"""The ReAct loop: ``AgentRunner.run(prompt) -> Iterator[AgentEvent]``.

An outer step loop (bounded by ``max_steps``) and an inner model-call loop for recovery, so
retries, compaction and nudges never consume steps. The state is a frozen
:class:`~mycode_core.runtime.state.LoopState` advanced only through ``next(reason)``.
"""

from __future__ import annotations

import queue
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pluggy

from mycode_core.events import (
    AgentEvent,
    AssistantEvent,
    CheckpointEvent,
    GuidanceEvent,
    NoticeEvent,
    ObservationEvent,
    ResultEvent,
    StepStartEvent,
    SystemEvent,
    UserEvent,
)
from mycode_core.plugins import load_report
from mycode_core.providers.base import ModelError, ModelReply
from mycode_core.records import CompletionVerdict, RunContext, ToolCall
from mycode_core.runtime import guards, lifecycle
from mycode_core.runtime.changes import ChangeDetector
from mycode_core.runtime.context import ModelView
from mycode_core.runtime.history import History
from mycode_core.runtime.mainthread import MainThreadCalls
from mycode_core.runtime.messages import (
    assistant_message,
    guidance_message,
    image_message,
    tool_message,
)
from mycode_core.runtime.observation import ValidationMatcher, observe
from mycode_core.runtime.recovery import ModelCaller
from mycode_core.runtime.setup import collect_tools, make_model, system_prompt
from mycode_core.runtime.state import LoopState, Phase, RunStopped, TransitionReason
from mycode_core.runtime.stream import EventStream
from mycode_core.runtime.tools import CallOutcome, ToolOrchestrator, writes_files
from mycode_core.runtime.window import ContextWindow
from mycode_core.sessions import SessionStore

OUTPUT_RESERVE = 8_000
DEFAULT_THRESHOLD = 0.8
_AT_PATH = re.compile(r"(?<![\w@])@([\w./~-][\w./~-]*)")


ChildSpawner = Callable[["AgentRunner", Any], Any]
"""Runs one child agent of a runner and returns its outcome.

The loop owns this interface; :func:`mycode_core.runtime.child.run_child` implements it and
whoever builds a runner (the CLI, the testing kit) passes it in, so the loop never imports
the child runner.
"""


class AgentRunner:
    """Runs tasks against a model with tools from plugins; keeps history between turns."""

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
    ) -> None:
        self.pm = pm
        self.settings = settings
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
        self._lock = threading.RLock()
        self._ready = False
        self.model: Any = None
        self.view: ModelView | None = None
        self.orchestrator: ToolOrchestrator | None = None
        self.caller: ModelCaller
        self.matcher = ValidationMatcher(settings.validation_commands)
        self._result_sent = False
        self._worker_thread: threading.Thread | None = None
        self.main_thread_calls = MainThreadCalls()
        """Questions the loop's threads need asked on the main thread (see ``run``)."""
        self._ended = False
        self.changes: ChangeDetector | None = None
        # issue 11: child agents run through the injected spawner; their usage rolls up here
        self.spawn_child = spawn_child
        if spawn_child is not None:
            self.context.spawner = self._spawn_agent
        self.children_usage: dict[str, dict[str, int]] = {}
        """Each descendant agent's own tokens, by ``agent_id``."""
        self.spawned_calls: set[str] = set()
        """Tool calls that ran a child agent: the child's own facts record what it changed."""

    # ------------------------------------------------------------------ events

    def _emit(self, event: AgentEvent) -> None:
        self.events.emit(event)

    def _notice(self, message: str, level: str = "warning") -> None:
        self._emit(NoticeEvent(level=level, message=message))  # type: ignore[arg-type]

    # ------------------------------------------------------------------ setup

    def prepare(self) -> None:
        """Load tools, model and system prompt (once). Raises ``SetupError`` for bad config."""
        if self._ready:
            return
        self._open_transcript()
        for message in getattr(self.settings, "notices", ()):  # unknown config keys (issue 14)
            self._notice(message)
        self.changes = self._change_detector()
        if self.context.agent_id is None:  # issue 13: one notice for ignored project settings
            from mycode_core.trust import notice_text

            if (ignored := notice_text(self.settings)) is not None:
                self._notice(ignored)
        self._collect_tools()  # MCP servers start in background
        self.model = self._make_model()
        base = self._system_prompt()
        prompt = base
        if self.context.agent_id is None:  # issue 11: a child agent starts no session
            prompt = lifecycle.with_session_start(self.pm, self.context, self.start_source, base)
        self._session_start_text = prompt[len(base) :]  # kept when the sections are refreshed
        self.view = self._make_view(prompt)
        for task in self.context.startup_tasks:
            try:
                task()
            except Exception as exc:  # noqa: BLE001
                self._notice(f"start-up task failed: {exc}")
        self.orchestrator = ToolOrchestrator(
            self.context,
            self._emit,
            lambda call, tool: self.pm.hook.permission_verdict(
                call=call, tool=tool, context=self.context
            ),
            max_parallel=self.settings.max_parallel_tools,
            max_calls=self.settings.max_tool_calls_per_reply,
        )
        self.orchestrator.observer = self._observe_call
        self.orchestrator.notify = lambda message: lifecycle.notify(
            self.pm, self.context, message, "permission_prompt"
        )
        self.caller = ModelCaller(
            model=self.model,
            view=self.view,
            history=self.history,
            settings=self.settings,
            tools=lambda: [tool.spec() for tool in self.context.tools.all()],
            cancelled=self.context.cancelled,
            emit=self._emit,
            guide=self._guide,
            usage=self.usage,
        )
        plugins = sorted(
            name for name, _ in self.pm.list_name_plugin() if not name.startswith("mycode_core.")
        )
        self._emit(
            SystemEvent(
                session_id=self.session_id,
                model=str(self.settings.model),
                cwd=str(self.workspace),
                tools=self.context.tools.names(),
                plugins=plugins,
                permission_mode=self.settings.permission_mode,
                resumed_from=self.resumed_from,
                plugin_errors=[
                    {k: v for k, v in error.as_dict().items() if k != "traceback"}
                    for error in load_report(self.pm).errors
                ],
            )
        )
        self._ready = True

    # the steps of `prepare` a child agent (runtime/child.py) does its own way
    def _open_transcript(self) -> None:
        self.events.transcript = SessionStore(self.home).open(self.session_id)

    def _change_detector(self) -> ChangeDetector:
        return ChangeDetector(self.workspace)

    def _collect_tools(self) -> None:
        collect_tools(self.pm, self.context, self._notice)

    def _make_model(self) -> Any:
        return make_model(self.pm, self.settings, self._notice)

    def _system_prompt(self) -> str:
        return system_prompt(self.pm, self.context, self._notice)

    def _spawn_agent(self, request: Any) -> Any:
        """``context.spawn_agent``: run a child agent (see :mod:`mycode_core.agents`)."""
        assert self.spawn_child is not None
        return self.spawn_child(self, request)

    def usage_by_agent(self) -> dict[str, dict[str, int]] | None:
        """Each agent's own tokens when child agents ran (they add up to ``usage``)."""
        if not self.children_usage:
            return None
        own = dict(self.usage)
        for child in self.children_usage.values():
            for key, value in child.items():
                own[key] = own.get(key, 0) - value
        return {self.context.agent_id or "main": own, **self.children_usage}

    def refresh_system_prompt(self) -> None:
        """Ask ``build_context`` again (between turns); the view changes only if the text did."""
        if self.view is not None:
            sections = self._system_prompt()
            self.view.set_system_prompt(sections + self._session_start_text)

    def close(self, reason: str = "exit") -> None:
        """Run cleanup tasks (stop MCP servers) and close the transcript.

        ``reason`` reaches the ``session_end`` hook: ``exit``, ``clear`` or ``resume``."""
        if self._ready and not self._ended and self.context.agent_id is None:
            self._ended = True
            lifecycle.session_end(self.pm, self.context, reason)
        for task in self.context.cleanup:
            try:
                task()
            except Exception:  # noqa: BLE001, S110 - shutting down: nothing more to do
                pass
        self.context.cleanup.clear()
        if self.orchestrator is not None:
            self.orchestrator.close()
        if self.changes is not None:
            self.changes.close()
            self.changes = None
        self.events.close()

    def cancel(self) -> None:
        """Ask the running turn to stop (Ctrl-C): the model call in flight is aborted by the
        call's own watcher (:class:`ModelCaller`), tools see ``context.cancelled``."""
        self.context.cancelled.set()

    # ------------------------------------------------------------------ running

    def run(self, prompt: str) -> Iterator[AgentEvent]:
        """Run one task to its end, yielding events as they happen; the last is ``result``.

        Ctrl-C (``KeyboardInterrupt`` on this, the main thread) cancels the turn: the model
        call in flight is cut, running tools see ``context.cancelled`` (``run_command`` kills
        its process tree), calls not yet run are answered "not run", and the worker ends the
        turn with an ``interrupted`` result carrying the real steps and time. This method only
        returns once the worker has stopped, so nothing of a cancelled turn runs on into the
        next one and every tool call in history has exactly one result.
        """
        previous = self._worker_thread
        if previous is not None:
            if previous.is_alive():
                previous.join()  # a consumer stopped reading early: that turn finishes first
            self.events.discard_pending()  # what such a consumer left unread
        self.context.cancelled.clear()
        self._result_sent = False
        worker = threading.Thread(
            target=self._worker, args=(prompt,), daemon=True, name="mycode-loop"
        )
        self._worker_thread = worker
        worker.start()
        while True:
            try:
                try:
                    event = self.events.queue.get(timeout=0.05)
                except queue.Empty:
                    self.main_thread_calls.serve()  # questions, once what came before is shown
                    if not worker.is_alive() and self.events.queue.empty():
                        return
                    continue
            except KeyboardInterrupt:
                self.cancel()  # the worker winds down promptly and sends the result
                continue
            if event is None:
                return
            yield event

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

    def _worker(self, prompt: str) -> None:
        started = time.monotonic()
        state = LoopState(log=self.transitions)
        final_text = ""
        error: str | None = None
        try:
            self.context.prompt = (
                prompt if not self.context.prompt else f"{self.context.prompt}\n\n{prompt}"
            )
            if self._ready:  # a later turn: plugins' sections may have changed (skills)
                self.refresh_system_prompt()
            self.prepare()
            state = state.next(TransitionReason.START)
            verdict = (  # issue 11: a child's task is not a user prompt
                lifecycle.prompt_verdict(self.pm, self.context, prompt)
                if self.context.agent_id is None
                else lifecycle.PromptVerdict()
            )
            if verdict.block:
                reason = verdict.reason or "the prompt was blocked"
                self._notice(f"prompt blocked by {verdict.source or 'a hook'}: {reason}")
                raise RunStopped(state.finish("interrupted", f"prompt blocked: {reason}"))
            content = lifecycle.with_reminders(self._expand_prompt(prompt), verdict.context)
            self._emit(UserEvent(content=content))
            self.history.append({"role": "user", "content": content})
            state, final_text = self._loop(state)
        except RunStopped as stop:
            state = stop.state
        except Exception as exc:  # noqa: BLE001 - never a traceback for the user
            if state.stop_reason is None:
                where = self._save_crash_report()
                state = state.finish(
                    "model_error", f"internal error {type(exc).__name__}: {exc} (details: {where})"
                )
        if self.context.cancelled.is_set() and state.stop_reason in (None, "interrupted"):
            state = state.finish("interrupted")
        error = state.detail if state.stop_reason != "completed" and state.detail else None
        with self._lock:
            if not self._result_sent:
                self._result_sent = True
                self._emit(
                    self._result(
                        state.stop_reason or "model_error",
                        state.verdict,
                        state.step,
                        final_text,
                        started,
                        error,
                    )
                )
        self.events.end_of_turn()

    def _result(
        self, stop: str, verdict: str, steps: int, text: str, started: float, error: str | None
    ) -> ResultEvent:
        return ResultEvent(
            session_id=self.session_id,
            stop_reason=stop,  # type: ignore[arg-type]
            verdict=verdict,  # type: ignore[arg-type]
            steps=steps,
            final_text=text,
            usage=dict(self.usage),
            duration_ms=int((time.monotonic() - started) * 1000) if started else 0,
            error=error,
            is_error=stop != "completed",
            usage_by_agent=self.usage_by_agent(),
        )

    def _expand_prompt(self, prompt: str) -> str:
        mentions = []
        for match in _AT_PATH.finditer(prompt):
            candidate = match.group(1).rstrip(".,;:")
            if (self.workspace / candidate).exists():
                mentions.append(candidate)
        if not mentions:
            return prompt
        listed = ", ".join(dict.fromkeys(mentions))
        return (
            f"{prompt}\n\n<system-reminder>The user referred to {listed}; "
            "read it with read_file before acting.</system-reminder>"
        )

    # ------------------------------------------------------------------ the step loop

    def _loop(self, state: LoopState) -> tuple[LoopState, str]:
        settings = self.settings
        near_limit_sent = False
        final_text = ""
        while True:
            if self.context.cancelled.is_set():
                raise RunStopped(state.finish("interrupted"))
            if state.step >= settings.max_steps:
                self._write_checkpoint()
                raise RunStopped(
                    state.finish("max_steps", f"reached the step limit ({settings.max_steps})")
                )
            budget = settings.max_tokens
            if budget and self.usage["input_tokens"] + self.usage["output_tokens"] >= int(budget):
                raise RunStopped(state.finish("token_budget", f"token budget of {budget} used up"))
            state = state.next(
                TransitionReason.STEP_BEGIN, step=state.step + 1, phase=Phase.CALLING_MODEL
            )
            self._emit(StepStartEvent(step=state.step))
            remaining = settings.max_steps - state.step + 1
            if (
                not near_limit_sent
                and settings.max_steps > settings.near_limit_steps
                and remaining <= settings.near_limit_steps
            ):
                near_limit_sent = True
                self._guide("near_limit", guards.near_limit_message(remaining))
            state, reply = self.caller.call(state)
            if reply.tool_calls:
                state = self._act(state, reply)
                continue
            final_text = reply.content or reply.refusal or ""
            self.history.append(assistant_message(final_text, []))
            self._emit(
                AssistantEvent(
                    content=final_text, finish_reason=reply.finish_reason, usage=reply.usage or None
                )
            )
            state = state.next(TransitionReason.MODEL_REPLIED_TEXT, phase=Phase.VERIFYING)
            verdict = self._completion_verdict(final_text)
            if verdict.verdict in ("pass", "unverified"):
                return state.finish("completed", verdict=verdict.verdict), final_text
            blocks = state.gate_blocks + 1
            if blocks > settings.completion_gate.max_blocks:
                detail = "the completion gate blocked the final answer too many times: "
                return state.finish(
                    "gate_exhausted", detail + verdict.feedback, verdict="fail", gate_blocks=blocks
                ), final_text
            state = state.next(TransitionReason.GATE_BLOCKED, verdict.feedback, gate_blocks=blocks)
            self._guide(
                verdict.source or "completion_gate",
                verdict.feedback or "The task is not verified yet.",
            )

    def _completion_verdict(self, final_text: str) -> CompletionVerdict:
        try:
            verdict = self.pm.hook.completion_verdict(
                final_text=final_text,
                observations=list(self.context.observations),
                context=self.context,
            )
        except Exception as exc:  # noqa: BLE001
            self._notice(f"completion policy failed: {exc}; treating the answer as unverified")
            return CompletionVerdict(verdict="unverified", source="runtime")
        return verdict or CompletionVerdict(verdict="pass", source="default")

    def _guide(self, source: str, message: str, pattern: str | None = None) -> None:
        self._emit(GuidanceEvent(source=source, message=message, pattern=pattern))
        self.history.append(guidance_message(source, message))

    # ------------------------------------------------------------------ acting

    def _act(self, state: LoopState, reply: ModelReply) -> LoopState:
        assert self.orchestrator is not None
        state = state.next(TransitionReason.MODEL_REPLIED_TOOLS, phase=Phase.ACTING)
        calls = [
            self._tool_call(state.step, index, raw) for index, raw in enumerate(reply.tool_calls)
        ]
        raw_calls = [{"id": c.id, "name": c.name, "arguments": c.raw_arguments} for c in calls]
        self.history.append(assistant_message(reply.content, raw_calls))
        self._emit(
            AssistantEvent(
                content=reply.content,
                tool_calls=raw_calls,
                finish_reason=reply.finish_reason,
                usage=reply.usage or None,
            )
        )
        self._step = state.step
        outcomes = self.orchestrator.run(calls)
        images = []
        for outcome in outcomes:
            if not outcome.executed:  # refused calls are facts too (repeated denials)
                self._record(outcome.call, outcome.tool, outcome, None)
            content = outcome.result.content
            if outcome.executed:
                content = lifecycle.tool_feedback(self.pm, self.context, outcome, content)
            self.history.append(tool_message(outcome.call.id, content, outcome.result.is_error))
            if self.settings.images:
                images.append(image_message(outcome.call.id, outcome.result.content))
        for message in images:  # after every tool message: the API wants those together
            if message is not None:
                self.history.append(message)
        state = state.next(TransitionReason.TOOLS_DONE, phase=Phase.CALLING_MODEL)
        try:
            verdict = self.pm.hook.stagnation_verdict(
                observations=self.context.observations, context=self.context
            )
        except Exception as exc:  # noqa: BLE001
            self._notice(f"stagnation policy failed: {exc}")
            verdict = None
        if verdict is not None and verdict.action == "guide":
            self._guide("stagnation", verdict.message, verdict.pattern)
            state = state.next(TransitionReason.STAGNATION_GUIDANCE, verdict.pattern or "")
        elif verdict is not None and verdict.action == "stop":
            self._emit(
                GuidanceEvent(source="stagnation", message=verdict.message, pattern=verdict.pattern)
            )
            raise RunStopped(
                state.finish("stagnation", verdict.message or "the agent kept repeating itself")
            )
        return state

    _step = 0
    _session_start_text = ""

    def _observe_call(self, call: ToolCall, tool: Any, run: Any) -> CallOutcome:
        """Wraps one tool execution: watch the workspace if the call may change files the
        tool does not declare, then record the facts."""
        detector = self.changes if self._needs_detection(tool) else None
        if detector is not None:
            detector.mark()
        outcome: CallOutcome = run()
        changes = detector.changes() if detector is not None else None
        if call.id in self.spawned_calls:  # issue 11: the child's observations hold its changes
            changes = None
        if changes and not writes_files(tool):
            shown = ", ".join(changes[:5]) + (
                f" and {len(changes) - 5} more" if len(changes) > 5 else ""
            )
            self._notice(
                f"tool {tool.name!r} (plugin {tool.plugin}) is marked read_only but changed "
                f"files in the workspace: {shown}"
            )
        self._record(call, tool, outcome, changes)
        return outcome

    def _needs_detection(self, tool: Any) -> bool:
        """Commands and tools that may write without declaring where are watched; read-only
        tools too when watching is free (inotify), to catch a wrong ``read_only``."""
        if tool is None or self.changes is None or "write" in tool.paths.values():
            return False
        if tool.read_only:
            return self.changes.mechanism == "inotify"
        return True

    def _record(
        self, call: ToolCall, tool: Any, outcome: CallOutcome, changes: list[str] | None
    ) -> None:
        """Append the observation of one call and emit it."""
        observation = observe(
            step=self._step,
            call=call,
            tool=tool,
            result=outcome.result,
            matcher=self.matcher,
            workspace_changes=changes,
        )
        with self.context.lock:
            self.context.observations.append(observation)
        self._emit(ObservationEvent(observation=observation.model_dump(exclude_none=True)))

    def _tool_call(self, step: int, index: int, raw: Any) -> ToolCall:
        import json

        from mycode_core.runtime.tools import argument_problem, without_lone_surrogates

        call_id = raw.id or f"call_{step}_{index}_{secrets.token_hex(4)}"
        text = without_lone_surrogates(raw.arguments or "{}")
        try:
            arguments = json.loads(text) if text.strip() else {}
            problem = None if isinstance(arguments, dict) else "the arguments are not a JSON object"
            problem = problem or argument_problem(arguments)
        except (ValueError, RecursionError) as exc:  # issue 13: deep nesting is an error result
            arguments, problem = {}, str(exc)
        if problem is not None:
            arguments = {}
        return ToolCall(
            id=call_id, name=raw.name, arguments=arguments, raw_arguments=text, parse_error=problem
        )

    # ------------------------------------------------------------------ calling the model

    def _compact(
        self,
        messages: list[dict[str, Any]],
        budget: int,
        reason: str = "proactive",
        instructions: str | None = None,
    ) -> Any:
        result = self.pm.hook.compact_context(
            messages=messages,
            budget=budget,
            context=self.context,
            reason=reason,
            instructions=instructions,
        )
        return list(result) if isinstance(result, list | tuple) else result

    # ------------------------------------------------------------------ the view (issue 9)

    def _make_view(self, prompt: str) -> ModelView:
        """The model view over this run's window; discovery of the server's window runs in
        the background (never for a configured window or a provider that cannot tell)."""
        settings = self.settings
        configured = "context_window" in settings.model_fields_set
        window = ContextWindow(
            default=int(settings.context_window),
            configured=int(settings.context_window) if configured else None,
            reserve=settings.max_output_tokens,
        )
        threshold = settings.section("context").get("compact_threshold", DEFAULT_THRESHOLD)
        try:
            threshold = float(threshold)
        except (TypeError, ValueError):
            self._notice(f"[context] compact_threshold {threshold!r} is not a number; using 0.8")
            threshold = DEFAULT_THRESHOLD
        view = ModelView(
            prompt, window, self._compact, shaper=self._shape_message, threshold=threshold
        )
        discover = getattr(self.model, "discover_context_window", None)
        if not configured and callable(discover):
            threading.Thread(
                target=lambda: window.discover(_quietly(discover)),
                daemon=True,
                name="mycode-window-discovery",
            ).start()
        self.context.side_request = self._side_request
        if self.resumed_from:
            self._restore_view(view, window)
        return view

    def _shape_message(self, message: dict[str, Any], budget: int) -> dict[str, Any] | None:
        try:
            shaped = self.pm.hook.view_message(message=message, budget=budget, context=self.context)
        except Exception as exc:  # noqa: BLE001 - a broken shaper must not stop the run
            if not getattr(self, "_shaper_failed", False):
                self._shaper_failed = True
                self._notice(f"view_message failed: {exc}; messages are sent as they are")
            return None
        return shaped if isinstance(shaped, dict) else None

    def _side_request(self, messages: list[dict[str, Any]]) -> str:
        """One model request without tools (summaries); its usage counts for the run."""
        reply = self.model.complete(messages, [], lambda _text: None)
        for key in ("input_tokens", "output_tokens"):
            self.usage[key] = self.usage.get(key, 0) + int(reply.usage.get(key, 0) or 0)
        return str(reply.content or "")

    def request_compaction(self, instructions: str | None = None) -> None:
        """Compact the view before the next request (``/compact [instructions]``)."""
        self.prepare()
        assert self.view is not None
        self.view.request_compaction(instructions)

    def _restore_view(self, view: ModelView, window: ContextWindow) -> None:
        """On ``--resume``, rebuild the view the last compaction of the session recorded."""
        from mycode_core.runtime.resume import last_view

        try:
            events = SessionStore(self.home).read_events(str(self.resumed_from))
        except Exception:  # noqa: BLE001 - no transcript to read: start from plain history
            return
        recorded = last_view(events)
        if recorded is None:
            return
        if recorded.get("window_source") == "learned" and recorded.get("context_window"):
            window.learn(int(recorded["context_window"]))
        view.restore(recorded["view"], self.history, int(recorded["history_length"]))

    # ------------------------------------------------------------------ checkpoint

    def _write_checkpoint(self) -> None:
        assert self.view is not None
        facts = guards.recorded_facts(self.context.observations)
        notes = ""
        try:
            self.view.sync(self.history)
            messages = self.view.messages()
            messages = [*messages, {"role": "user", "content": guards.CHECKPOINT_REQUEST}]
            reply = self.model.complete(messages, [], lambda _text: None)
            self.caller.add_usage(reply.usage)
            notes = (reply.content or "").strip()
        except ModelError as exc:
            notes = f"(the model could not write its notes: {exc})"
        text = (notes + "\n\n" if notes else "") + facts
        self._emit(CheckpointEvent(text=text))


def _quietly(function: Any) -> int | None:
    """Call a discovery function; any failure means "unknown"."""
    try:
        value = function()
    except Exception:  # noqa: BLE001 - discovery is best effort
        return None
    return int(value) if isinstance(value, int) and value > 0 else None
