"""The ReAct loop: ``AgentRunner.run(prompt) -> Iterator[AgentEvent]``; an outer step loop and
an inner model-call loop (:mod:`.recovery`), so retries, compaction and nudges use no step."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from mycode_core.events import (
    AgentEvent,
    AssistantEvent,
    NoticeEvent,
    ResultEvent,
    StepStartEvent,
    SystemEvent,
    UserEvent,
)
from mycode_core.plugins import load_report
from mycode_core.records import CompletionVerdict
from mycode_core.runtime import lifecycle
from mycode_core.runtime.acting import Acting
from mycode_core.runtime.changes import ChangeDetector
from mycode_core.runtime.messages import assistant_message, near_limit_message, user_message
from mycode_core.runtime.setup import collect_tools, make_model, system_prompt
from mycode_core.runtime.state import LoopState, Phase, RunStopped, TransitionReason
from mycode_core.runtime.tools import ToolOrchestrator
from mycode_core.runtime.viewing import Viewing
from mycode_core.sessions import SessionStore

CLOSE_WAIT = 20.0  # seconds close() waits for a cancelled turn to write its result


class AgentRunner(Acting, Viewing):
    """Runs tasks against a model with tools from plugins; keeps history between turns."""

    def prepare(self) -> None:
        """Load tools, model and system prompt (once). Raises ``SetupError`` for bad config."""
        if self._ready:
            return
        self._open_transcript()
        self.changes = self._change_detector()
        if self.context.agent_id is None:  # said once, not again by each child agent
            from mycode_core.trust import notice_texts

            for message in [*getattr(self.settings, "notices", ()), *notice_texts(self.settings)]:
                self._notice(message)
        self._collect_tools()  # MCP servers start in background
        self.model = self._make_model()
        window = self._make_window()  # before the prompt: plugins size their sections by it
        prompt = base = self._system_prompt()
        if self.context.agent_id is None:  # a child agent starts no session
            prompt = lifecycle.with_session_start(self.guard, self.context, self.start_source, base)
        self._session_start_text = prompt[len(base) :]  # kept when the sections are refreshed
        self.view = self._make_view(prompt, window)
        for task in self.context.startup_tasks:
            try:
                task()
            except Exception as exc:  # noqa: BLE001
                self._startup_task_failed(task, exc)
        self.orchestrator = ToolOrchestrator(
            self.context,
            self._emit,
            lambda call, tool: lifecycle.permission(self.guard, call, tool, self.context),
            max_parallel=self.settings.max_parallel_tools,
            max_calls=self.settings.max_tool_calls_per_reply,
        )
        self.orchestrator.observer = self._observe_call
        self.orchestrator.transform = lambda call, tool, result: lifecycle.transform_tool_result(
            self.guard, call, tool, result, self.context
        )
        self.orchestrator.notify = lambda message: lifecycle.notify(
            self.guard, self.context, message, "permission_prompt"
        )
        plugins = sorted(
            name for name, _ in self.pm.list_name_plugin() if not name.startswith("mycode_core.")
        )
        report = load_report(self.pm)
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
                    for error in report.errors
                ],
            )
        )
        if self.context.agent_id is None:  # SPEC §4: a notice for each failed plugin too
            for message in report.notices:
                self._emit(NoticeEvent(level="warning", message=message, source="plugin_files"))
            for p in report.errors:
                self._emit(
                    NoticeEvent(level="warning", message=p.message, plugin=p.plugin, hook="load")
                )
        self._ready = True

    # the steps of `prepare` a subclass does its own way (runtime/child.py, cli/command_run.py)
    def _open_transcript(self) -> None:
        self.events.transcript = SessionStore(self.home).open(self.session_id)

    def _change_detector(self) -> ChangeDetector:
        return ChangeDetector(self.workspace, home=self.home)

    def _collect_tools(self) -> None:
        collect_tools(self.pm, self.context, self._notice)

    def _make_model(self) -> Any:
        return make_model(self.pm, self.settings, self._notice, on_error=self.guard.on_error)

    def _system_prompt(self) -> str:
        prompt = system_prompt(self.pm, self.context, self._notice, on_error=self.guard.on_error)
        if self.structured is not None:
            prompt += self.structured.instructions()
        return lifecycle.transform_system_prompt(self.guard, prompt, self.context)

    def refresh_system_prompt(self) -> None:
        """Ask ``build_context`` again (between turns); the view changes only if the text did."""
        if self.view is not None:
            sections = self._system_prompt()
            self.view.set_system_prompt(sections + self._session_start_text)

    def close(self, reason: str = "exit") -> None:
        """Run cleanup tasks and close the transcript; ``reason`` (``exit``, ``clear``, ``resume``)
        goes to ``session_end``. A cancelled turn gets :data:`CLOSE_WAIT` s to write its result."""
        worker = self._worker_thread
        if worker is not None and worker is not threading.current_thread():
            if self.context.cancelled.is_set():
                worker.join(CLOSE_WAIT)
        if self.changes is not None:  # first: its watches retire while the rest closes
            self.changes.close()
            self.changes = None
        if self._ready and not self._ended and self.context.agent_id is None:
            self._ended = True
            self.guard.observe("session_end", reason=reason, context=self.context)
        for task in self.context.cleanup:
            with contextlib.suppress(Exception):  # shutting down: nothing more to do
                task()
        self.context.cleanup.clear()
        if self.orchestrator is not None:
            self.orchestrator.close()
        self.events.close()

    def cancel(self) -> None:
        """Ask the running turn to stop (Ctrl-C); tools see ``context.cancelled``."""
        self.context.cancelled.set()

    def run(self, prompt: str, request: str | None = None) -> Iterator[AgentEvent]:
        """Run one task, yielding its events; the last is ``result``. ``request``: what the user
        typed, if ``prompt`` is its expansion. Ctrl-C here cancels the turn (an ``interrupted``
        result); returns only once the worker stopped, so no cancelled turn runs into the next."""
        previous = self._worker_thread
        if previous is not None:
            if previous.is_alive():
                previous.join()  # a consumer stopped reading early: that turn finishes first
            self.events.discard_pending()  # what such a consumer left unread
        self.context.cancelled.clear()
        self._result_sent = False
        worker = threading.Thread(
            target=self._worker, args=(prompt, request), daemon=True, name="mycode-loop"
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

    def command_turn(self, text: str, failed: bool = False) -> list[AgentEvent]:
        """A turn a slash command answered instead of the model: ``text`` is the result's
        ``final_text`` (``failed``: its error, ``interrupted``); no user/assistant event. Returns
        the events not consumed yet: what setup emitted (``system`` first), then the result."""
        self.prepare()
        started = time.monotonic()
        stop, error = ("interrupted", text) if failed else ("completed", None)
        if self.guard.strict_failure:  # the command (or a hook before it) failed: exit 2
            stop, error = "interrupted", f"{self.guard.strict_failure} (strict plugins)"
        with self._lock:
            self._result_sent = True
            verdict = "pass" if error is None else "none"
            self._emit(self._result(stop, verdict, 0, text, started, error))
        events: list[AgentEvent] = []
        while not self.events.queue.empty():
            event = self.events.queue.get_nowait()
            if event is not None:
                events.append(event)
        return events

    def _worker(self, prompt: str, request: str | None = None) -> None:
        started = time.monotonic()
        state = LoopState(log=self.transitions)
        final_text = ""
        try:
            said, context = prompt if request is None else request, self.context
            context.prompt = f"{context.prompt}\n\n{prompt}" if context.prompt else prompt
            context.request = f"{context.request}\n\n{said}" if context.request else said
            if self._ready:  # a later turn: plugins' sections may have changed (skills)
                self.refresh_system_prompt()
            self.prepare()
            state = state.next(TransitionReason.START)
            verdict = (  # a child's task is not a user prompt
                lifecycle.prompt_verdict(self.guard, self.context, said)
                if self.context.agent_id is None
                else lifecycle.PromptVerdict()
            )
            if verdict.block:
                reason = verdict.reason or "the prompt was blocked"
                self._notice(f"prompt blocked by {verdict.source or 'a hook'}: {reason}")
                raise RunStopped(state.finish("interrupted", f"prompt blocked: {reason}"))
            expansion = self.expand_prompt(prompt, self.context)
            for note in expansion.notes:
                self._notice(note)
            content = lifecycle.with_reminders(expansion.text, verdict.context)
            self._emit(UserEvent(content=content, images=expansion.kept or None))
            self.history.append(user_message(content, expansion.images))
            state, final_text = self._loop(state)
        except RunStopped as stop:
            state, final_text = stop.state, stop.text
        except BaseException as exc:  # noqa: BLE001 - never a traceback; a thread: no Ctrl-C here
            if state.stop_reason is None:
                where = self._save_crash_report()
                state = state.finish(
                    "model_error", f"internal error {type(exc).__name__}: {exc} (details: {where})"
                )
        if self.guard.strict_failure and state.stop_reason in (None, "interrupted", "completed"):
            state = state.finish("interrupted", f"{self.guard.strict_failure} (strict plugins)")
        if self.context.cancelled.is_set() and state.stop_reason in (None, "interrupted"):
            state = state.finish("interrupted")
            self.record_interrupted()
        state = self._settle_window(state)
        error = state.detail if state.stop_reason != "completed" and state.detail else None
        ended = state.stop_reason or "model_error"
        with self._lock:
            if not self._result_sent:
                self._result_sent = True
                self._emit(
                    self._result(ended, state.verdict, state.step, final_text, started, error)
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
            cost_usd=self.total_cost(),
            context=self.context_fill(self.view.window.limit if self.view else 0),
            structured_output=self.structured.result_value(stop) if self.structured else None,
        )

    def _loop(self, state: LoopState) -> tuple[LoopState, str]:
        settings = self.settings
        near_limit_sent = False
        final_text = ""
        while True:
            if self.context.cancelled.is_set() or self.guard.strict_failure:
                raise RunStopped(state.finish("interrupted"))
            if state.step >= settings.max_steps:
                self._write_checkpoint()
                raise RunStopped(
                    state.finish("max_steps", f"reached the step limit ({settings.max_steps})")
                )
            budget = settings.max_tokens
            if budget and self.usage["input_tokens"] + self.usage["output_tokens"] >= int(budget):
                raise RunStopped(state.finish("token_budget", f"token budget of {budget} used up"))
            if over := self.over_budget():
                raise RunStopped(state.finish("token_budget", over))
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
                self._guide("near_limit", near_limit_message(remaining))
            state, reply = self.call(state)
            if reply.tool_calls:
                state = self._act(state, reply)
                continue
            text = reply.content or reply.refusal or ""
            self.history.append(assistant_message(text, []))
            usage = reply.usage or None
            self._emit(AssistantEvent(content=text, finish_reason=reply.finish_reason, usage=usage))
            final_text = self.cut_text + text  # the pieces of an answer cut and continued
            state = state.next(TransitionReason.MODEL_REPLIED_TEXT, phase=Phase.VERIFYING)
            verdict = self._completion_verdict(final_text)
            if verdict.verdict in ("pass", "unverified"):  # a filtered answer is not verified
                if verdict.verdict == "unverified" and verdict.feedback:
                    self._notice(verdict.feedback)  # the user learns why
                filtered = reply.finish_reason == "content_filter"
                return state.finish(
                    "completed", verdict="unverified" if filtered else verdict.verdict
                ), final_text
            blocks = state.gate_blocks + verdict.counts  # max_steps bounds uncounted ones
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
        shape = self.structured.judge(final_text) if self.structured is not None else None
        if shape is not None:
            return shape
        if self.settings.completion_gate.policy.strip().lower() != "off":  # off: none asked (§7)
            return lifecycle.completion(self.guard, final_text, self.context)
        return CompletionVerdict(verdict="pass", feedback="completion gate is off", source="off")
