"""Tool orchestration: validate, ask for permission, run (safe tools in parallel), answer each call.

Every call gets exactly one result; unknown tools, bad arguments, denials and crashes are errors."""

from __future__ import annotations

import json
import time
import traceback
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from mycode_core.claude_rules import mycode_tool_name
from mycode_core.events import AgentEvent, PermissionEvent, ToolCallEvent, ToolResultEvent
from mycode_core.paths import BoundaryError, bind_argument, relative
from mycode_core.pricing import accepts_images
from mycode_core.records import PermissionVerdict, RunContext, Tool, ToolCall, ToolResult
from mycode_core.runtime.arguments import SchemaChecker, call_subject, short_reason
from mycode_core.runtime.messages import image_message
from mycode_core.tooling import coerce_result

Emit = Callable[[AgentEvent], None]
PermissionHook = Callable[[ToolCall, Tool], PermissionVerdict | None]
Observer = Callable[[ToolCall, Tool, Callable[[], "CallOutcome"]], "CallOutcome"]

ASK_OPTIONS = ["allow once", "allow for this session", "deny"]
ANSWERS: dict[str, tuple[Literal["allow", "deny"], str, str]] = {  # decision, reason, layer
    ASK_OPTIONS[0]: ("allow", "approved by the user", "user-prompt"),
    ASK_OPTIONS[1]: ("allow", "approved for this session", "session"),
    ASK_OPTIONS[2]: ("deny", "the user declined", "user-prompt"),
}
CANCEL_GRACE = 1.0  # seconds a cancelled handler gets before its call is answered "interrupted"
NOT_RUN_CANCELLED = "Not run: the user interrupted the turn before this call started."
INTERRUPTED = "Interrupted by the user before {name} finished; its result is unknown."


@dataclass
class CallOutcome:
    """A finished call: the call, its tool (if known) and its result."""

    call: ToolCall
    tool: Tool | None
    result: ToolResult
    duration_ms: int = 0
    executed: bool = False


def mode_layer(settings: Any) -> str:
    """The config layer that set the permission mode (``default`` if none did)."""
    for layer, raw in reversed(list(getattr(settings, "layers", None) or [])):
        if isinstance(raw, dict) and raw.get("permission_mode"):
            return str(layer)
    return "default"


def writes_files(tool: Tool) -> bool:
    """Whether a tool may change files: not read-only, or it declares a write path."""
    return not tool.read_only or "write" in tool.paths.values()


class ToolOrchestrator:
    """Runs the tool calls of one model reply."""

    def __init__(
        self,
        context: RunContext,
        emit: Emit,
        permission: PermissionHook,
        *,
        max_parallel: int = 4,
        max_calls: int = 16,
    ) -> None:
        self.context = context
        self.emit = emit
        self.permission = permission
        self.max_calls = max_calls
        self.schemas = SchemaChecker()
        self._pool = ThreadPoolExecutor(max(1, max_parallel), thread_name_prefix="mycode-tool")
        self._handlers = ThreadPoolExecutor(16, thread_name_prefix="mycode-handler")
        self._allowed: dict[str, dict[str, Any]] = {}
        self.observer: Observer | None = None  # wraps each execution (records observations)
        self.notify: Callable[[str], None] | None = None  # told a permission question first
        self.transform: Callable[[ToolCall, Tool | None, ToolResult], ToolResult] = (
            lambda call, tool, result: result
        )

    def close(self) -> None:
        """Release the worker threads."""
        for pool in (self._pool, self._handlers):
            pool.shutdown(wait=False, cancel_futures=True)

    def run(self, calls: list[ToolCall]) -> list[CallOutcome]:
        """Run ``calls`` and return one outcome per call, in call order."""
        for call in calls:
            self.emit(ToolCallEvent(id=call.id, name=call.name, arguments=call.arguments))
        outcomes: list[CallOutcome | None] = [None] * len(calls)
        runnable: list[tuple[int, ToolCall, Tool]] = []
        for index, call in enumerate(calls):
            if self.context.cancelled.is_set():
                outcomes[index] = self._not_run(call)
                continue
            if index >= self.max_calls:
                too_many = ToolResult.error(
                    f"Not run: at most {self.max_calls} tool calls per reply. "
                    "Call it again in your next reply if it is still needed."
                )
                outcomes[index] = self._finish(call, None, too_many)
                continue
            tool, refusal = self._prepare(call)
            if refusal is not None or tool is None:
                outcomes[index] = self._finish(call, tool, refusal or ToolResult.error("not run"))
            else:
                runnable.append((index, call, tool))
        # consecutive concurrency-safe calls form a parallel batch; the rest run in order
        batch: list[tuple[int, ToolCall, Tool]] = []
        for item in runnable:
            if item[2].is_concurrency_safe(item[1].arguments):
                batch.append(item)
                continue
            self._run_batch(batch, outcomes)
            batch = []
            index, call, tool = item
            run = self._not_run if self.context.cancelled.is_set() else self._execute
            outcomes[index] = run(call, tool)
        self._run_batch(batch, outcomes)
        return [outcome for outcome in outcomes if outcome is not None]

    def _not_run(self, call: ToolCall, tool: Tool | None = None) -> CallOutcome:
        return self._finish(call, tool, ToolResult.error(NOT_RUN_CANCELLED, interrupted=True))

    def _run_batch(
        self, batch: list[tuple[int, ToolCall, Tool]], outcomes: list[CallOutcome | None]
    ) -> None:
        if len(batch) == 1:
            index, call, tool = batch[0]
            outcomes[index] = self._execute(call, tool)
            return
        futures = [
            (index, self._pool.submit(self._execute, call, tool)) for index, call, tool in batch
        ]
        for index, future in futures:
            outcomes[index] = future.result()

    def _prepare(self, call: ToolCall) -> tuple[Tool | None, ToolResult | None]:
        tool = self.context.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.context.tools.names()) or "none"
            why = f"Unknown tool {call.name!r}. Available tools: {known}."
            if (mine := mycode_tool_name(call.name)) != call.name and self.context.tools.get(mine):
                why += f" Claude Code's {call.name} is {mine} here, with its own parameters."
        elif call.parse_error is not None:
            why = call.parse_error
        else:
            call.arguments, problem = self.schemas.check(tool, call.arguments)
            why = f"Invalid arguments for {call.name}: {problem}" if problem else ""
        if why or tool is None:  # not run; its permission event says so (SPEC §4: one per call)
            self._deny(call, "core:invalid-call", why)
            return tool, ToolResult.error(why)
        return tool, self._resolve_paths(call, tool) or self._check_permission(call, tool)

    def _resolve_paths(self, call: ToolCall, tool: Tool) -> ToolResult | None:
        """Resolve the path arguments (absent ones: the schema's default) into ``call.paths``."""
        properties = tool.input_schema.get("properties") or {}
        for name, mode in tool.paths.items():
            raw = call.arguments.get(name, (properties.get(name) or {}).get("default"))
            try:
                if raw is not None:
                    call.paths[name] = bind_argument(raw, self.context, write=mode == "write")
            except BoundaryError as exc:
                return self._deny(call, "core:workspace-boundary", str(exc))
        return None

    def _deny(self, call: ToolCall, rule: str, reason: str) -> ToolResult | None:
        """Deny ``call`` by one of the core's own rules (layer ``default``)."""
        verdict = PermissionVerdict(decision="deny", reason=reason, rule=rule, layer="default")
        return self._decide(call, verdict)

    def _decide(self, call: ToolCall, verdict: PermissionVerdict) -> ToolResult | None:
        """Emit the permission event; ``None`` when the call may run, else its denial."""
        said = verdict.model_dump(include={"decision", "reason", "rule", "layer"})
        self.emit(PermissionEvent(id=call.id, tool=call.name, name=call.name, **said))
        permission = {"decision": verdict.decision, "rule": verdict.rule, "layer": verdict.layer}
        if verdict.decision == "allow":
            self._allowed[call.id] = permission
            return None
        named = [f"rule {verdict.rule}"] if verdict.rule else []
        named += [f"layer {verdict.layer}"] if verdict.layer else []
        where = f" ({', '.join(named)})" if named else ""
        reason = f"Permission denied{where}: {verdict.reason}"
        return ToolResult.error(reason, permission={**permission, "decision": "deny"})

    def _check_permission(self, call: ToolCall, tool: Tool) -> ToolResult | None:
        if self.context.permission_mode == "plan" and writes_files(tool):
            why = (
                f"plan mode allows read-only tools only; {tool.name} may change files. "
                "Describe the plan instead; the user can leave plan mode (/mode default "
                "in a session, --permission-mode default for a run) to let it."
            )
            layer = mode_layer(self.context.settings)
            plan = PermissionVerdict(decision="deny", reason=why, rule="mode:plan", layer=layer)
            return self._decide(call, plan)
        verdict = self.permission(call, tool) or PermissionVerdict(
            decision="allow", reason="no policy objected", rule="default", layer="default"
        )
        updated = verdict.updated_arguments
        if updated is not None and verdict.decision != "deny":
            if isinstance(updated, dict):
                updated, problem = self.schemas.check(tool, updated)
            else:
                problem = "not a JSON object"
            if problem is not None:
                by = f" by {verdict.rule}" if verdict.rule else ""
                return ToolResult.error(
                    f"Not run: the arguments rewritten{by} are invalid for {call.name}: {problem}"
                )
            call.arguments = dict(updated)
            call.raw_arguments = json.dumps(updated, ensure_ascii=False)
            call.paths.clear()
            if (refusal := self._resolve_paths(call, tool)) is not None:  # rewritten paths too
                return refusal
        if verdict.decision == "ask":
            verdict = self._ask(call, tool, verdict)
        return self._decide(call, verdict)

    def _ask(self, call: ToolCall, tool: Tool, verdict: PermissionVerdict) -> PermissionVerdict:
        context = self.context
        if not context.interactive or context.ask is None:
            reason = f"not approved (non-interactive run): {verdict.reason}"
            return PermissionVerdict(
                decision="deny", reason=reason, rule=verdict.rule, layer=verdict.layer
            )
        grant = verdict.grant or call.name  # what "allow for this session" allows
        reason = f"{short_reason(verdict.reason, call)} · for this session: {grant}"
        question = f"Allow {call.name}: {call_subject(call)}\n{reason}"
        if self.notify is not None:
            self.notify(question)
        context.current_call = call  # the front end may show what it would change
        answer = context.ask(question, ASK_OPTIONS) if not context.cancelled.is_set() else None
        context.current_call = None
        if answer == ASK_OPTIONS[1]:
            context.session_grants.add(grant)
        decision, reason, layer = ANSWERS.get(answer or "", ANSWERS[ASK_OPTIONS[2]])
        return PermissionVerdict(decision=decision, reason=reason, rule=verdict.rule, layer=layer)

    def _execute(self, call: ToolCall, tool: Tool) -> CallOutcome:
        if self.observer is not None:
            return self.observer(call, tool, lambda: self._execute_now(call, tool))
        return self._execute_now(call, tool)

    def _execute_now(self, call: ToolCall, tool: Tool) -> CallOutcome:
        started = time.monotonic()
        result = self._call_handler(call, tool)
        if call.paths and not result.is_error:  # their facts, unless the tool reported its own
            rel = {name: relative(Path(path), self.context) for name, path in call.paths.items()}
            result.metadata.setdefault("resources", [f"file:{r}" for r in rel.values()])
            written = [
                rel[name] for name, mode in tool.paths.items() if mode == "write" and name in rel
            ]
            if written:
                result.metadata.setdefault("mutated", written)
        return self._finish(call, tool, result, started)

    def _handle(self, call: ToolCall, tool: Tool, arguments: dict[str, Any]) -> Any:
        """Run the handler in this thread, ``context.current_call`` telling which call it serves."""
        self.context.current_call = call
        try:
            return tool.handler(arguments, self.context)
        finally:
            self.context.current_call = None

    def _call_handler(self, call: ToolCall, tool: Tool) -> ToolResult:
        """Run the handler in a worker thread, bounded by the tool's timeout and by cancel."""
        arguments = {**call.arguments, **call.paths}
        timeout = tool.timeout or float(getattr(self.context.settings, "tool_timeout", 300))
        future: Future[Any] = self._handlers.submit(self._handle, call, tool, arguments)
        deadline = time.monotonic() + timeout
        while True:
            try:
                return coerce_result(future.result(timeout=min(0.25, timeout)))
            except FutureTimeout:
                if self.context.cancelled.is_set():
                    return self._interrupted(call, future)
                if time.monotonic() >= deadline:
                    return ToolResult.error(
                        f"{call.name} did not finish within {timeout:g} s and was abandoned. "
                        "Try a smaller request.",
                        timed_out=True,
                    )
            except BoundaryError as exc:
                return ToolResult.error(str(exc))
            except BaseException as exc:  # noqa: BLE001 - a tool crash is a result, never a crash
                said = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                return ToolResult.error(
                    f"{call.name} failed: {said}",
                    traceback="".join(traceback.format_exception(exc)),
                )

    def _interrupted(self, call: ToolCall, future: Future[Any]) -> ToolResult:
        """On a cancel: the handler's own result within :data:`CANCEL_GRACE` s, or "interrupted"."""
        try:
            result = coerce_result(future.result(timeout=CANCEL_GRACE))
        except Exception:  # noqa: BLE001 - late, failed or still running: the call is answered
            return ToolResult.error(INTERRUPTED.format(name=call.name), interrupted=True)
        result.metadata.setdefault("interrupted", True)
        return result

    def _finish(
        self, call: ToolCall, tool: Tool | None, result: ToolResult, started: float | None = None
    ) -> CallOutcome:
        duration = int((time.monotonic() - started) * 1000) if started else 0
        allowed = self._allowed.pop(call.id, None)
        if allowed is not None and "permission" not in result.metadata:
            result.metadata["permission"] = allowed  # which rule and layer let it run
        original, result = result, self.transform(call, tool, result)  # SPEC §7 transforms
        kept: dict[str, Any] | None = None
        if result is not original:
            kept = {"content": original.content, "is_error": original.is_error}
        if image_message(call.id, result.content) and accepts_images(self.context.settings):
            result.metadata["images_sent"] = True  # shown next, by --resume too
        self.emit(
            ToolResultEvent(
                id=call.id,
                name=call.name,
                is_error=result.is_error,
                content=result.content,
                metadata=result.metadata,
                duration_ms=duration,
                original=kept,
            )
        )
        return CallOutcome(call, tool, result, duration, executed=started is not None)
