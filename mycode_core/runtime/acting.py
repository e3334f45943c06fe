"""The runner acting on a model reply: run its tool calls, record their facts, ask stagnation."""

from __future__ import annotations

import json
import secrets
from typing import Any

from mycode_core.events import (
    AssistantEvent,
    GuidanceEvent,
    ObservationEvent,
    without_lone_surrogates,
)
from mycode_core.providers.base import ModelReply
from mycode_core.records import ToolCall
from mycode_core.runtime import lifecycle
from mycode_core.runtime.arguments import argument_problem
from mycode_core.runtime.messages import assistant_message, image_message, tool_message
from mycode_core.runtime.observation import observe
from mycode_core.runtime.runner_base import RunnerBase
from mycode_core.runtime.state import LoopState, Phase, RunStopped, TransitionReason
from mycode_core.runtime.tools import CallOutcome, writes_files

BAD_ARGUMENTS = (
    "Invalid JSON in the arguments of {name}: {problem}. Send the arguments as one JSON object."
)
CUT_CALL = (
    "The output limit cut off your call of {name} before its arguments were complete "
    "({problem}). Send it again in smaller pieces (a long file as a short write_file and "
    "then edits), or the user raises [model] max_output_tokens."
)


class Acting(RunnerBase):
    """Running a reply's tool calls and recording one observation for each."""

    def _act(self, state: LoopState, reply: ModelReply) -> LoopState:
        assert self.orchestrator is not None
        state = state.next(TransitionReason.MODEL_REPLIED_TOOLS, phase=Phase.ACTING)
        cut = reply.finish_reason == "length"  # the output limit: the last call may be cut
        calls = [self._tool_call(state.step, i, raw, cut) for i, raw in enumerate(reply.tool_calls)]
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
        images = []
        for outcome in self.orchestrator.run(calls):
            if not outcome.executed:  # refused calls are facts too (repeated denials)
                self._record(outcome.call, outcome, None)
            result = outcome.result
            content, shown = result.content, bool(result.metadata.get("images_sent"))
            if outcome.executed:
                content = lifecycle.tool_feedback(self.guard, self.context, outcome, content)
            self.history.append(tool_message(outcome.call.id, content, result.is_error, shown))
            if shown and (message := image_message(outcome.call.id, result.content)):
                images.append(message)
        for message in images:  # after every tool message: the API wants those together
            self.history.append(message)
        state = state.next(TransitionReason.TOOLS_DONE, phase=Phase.CALLING_MODEL)
        verdict = lifecycle.stagnation(self.guard, self.context)
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

    def _observe_call(self, call: ToolCall, tool: Any, run: Any) -> CallOutcome:
        """Run one tool call (watching for undeclared file changes) and record its facts."""
        detector = self.changes  # watched: calls that may write undeclared files
        if tool is None or detector is None or "write" in tool.paths.values():
            detector = None
        elif tool.read_only and detector.mechanism != "inotify":
            detector = None  # read-only ones only when watching is free (inotify)
        if detector is not None:
            detector.mark()
        outcome: CallOutcome = run()
        changes = detector.changes() if detector is not None else None
        if call.id in self.spawned_calls:  # the child's observations hold its changes
            changes = None
        if changes and not writes_files(tool):
            more = f" and {len(changes) - 5} more" if len(changes) > 5 else ""
            shown = ", ".join(changes[:5]) + more
            self._notice(
                f"tool {tool.name!r} (plugin {tool.plugin}) is marked read_only but changed "
                f"files in the workspace: {shown}"
            )
        self._record(call, outcome, changes)
        return outcome

    def _record(self, call: ToolCall, outcome: CallOutcome, changes: list[str] | None) -> None:
        """Append the observation of one call and emit it."""
        observation = observe(
            step=self._step,
            call=call,
            result=outcome.result,
            matcher=self.matcher,
            workspace_changes=changes,
            created=self.changes.created if changes and self.changes is not None else None,
        )
        with self.context.lock:
            self.context.observations.append(observation)
        self._emit(ObservationEvent(observation=observation.model_dump(exclude_none=True)))

    def _tool_call(self, step: int, index: int, raw: Any, cut: bool) -> ToolCall:
        call_id = raw.id or f"call_{step}_{index}_{secrets.token_hex(4)}"
        text = without_lone_surrogates(raw.arguments or "{}")
        try:
            arguments = json.loads(text) if text.strip() else {}
            problem = None if isinstance(arguments, dict) else "the arguments are not a JSON object"
            problem = problem or argument_problem(arguments)
        except (ValueError, RecursionError) as exc:  # deep nesting is an error result
            arguments, problem = {}, str(exc)
        if problem is not None:
            arguments, why = {}, (CUT_CALL if cut else BAD_ARGUMENTS)
            problem = why.format(name=raw.name, problem=problem)
        return ToolCall(
            id=call_id, name=raw.name, arguments=arguments, raw_arguments=text, parse_error=problem
        )
