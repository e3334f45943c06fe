"""Typed records that plugins hand to the core and the core hands to plugins: everything a hook
receives or returns, in one place."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mycode_core.verdicts import CallApproval as CallApproval
from mycode_core.verdicts import CompactedView as CompactedView
from mycode_core.verdicts import CompletionVerdict as CompletionVerdict
from mycode_core.verdicts import Decision as Decision
from mycode_core.verdicts import PermissionVerdict as PermissionVerdict
from mycode_core.verdicts import PromptVerdict as PromptVerdict
from mycode_core.verdicts import SlashResult as SlashResult
from mycode_core.verdicts import StagnationVerdict as StagnationVerdict
from mycode_core.verdicts import Verdict as Verdict

Risk = Literal["low", "medium", "high"]
PathAccess = Literal["read", "write"]
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")  # what chat-completions takes as a function name
CHECKED_SCHEMAS: set[str] = set()  # repr() of each input schema that passed (the CLI keeps them)


class ToolResult(BaseModel):
    """What a tool returns: compact text for the model, plus ``metadata`` facts for the runtime:
    ``exit_code`` (commands), ``resources`` (``file:path[:range]`` / ``command:...``),
    ``mutated`` (workspace paths written), ``artifact`` (a saved full output)."""

    content: str | list[dict[str, Any]] = ""
    is_error: bool = False
    metadata: dict[str, Any] = Field(default_factory=dict)
    call_id: str | None = None  # set by a transform_tool_result: the call it answers (checked)

    @classmethod
    def error(cls, message: str, **metadata: Any) -> ToolResult:
        """Build an error result the model can act on."""
        return cls(content=message, is_error=True, metadata=metadata)

    def text(self) -> str:
        """The content flattened to plain text."""
        if isinstance(self.content, str):
            return self.content
        return "\n".join(
            str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type', 'block')}]"
            for b in self.content
        )


class Tool(BaseModel):
    """A tool the model can call, contributed through ``register_tools``.

    Usually built with :func:`mycode_core.tool`. ``handler(arguments, context)`` (sync or async)
    returns a :class:`ToolResult`, a string or JSON-able data. ``paths`` names the path
    arguments (``{"path": "read"|"write"}``): the core resolves them through the workspace
    boundary (the handler gets ``pathlib.Path`` objects), applies rules ``name(glob)`` to them,
    denies writes in plan mode and records resources and changes. ``concurrency_safe`` tools may
    run in parallel (up to 4); ``concurrency_safe_for(arguments)`` overrides it per call.
    ``timeout`` (seconds) bounds a hung call (default: the ``tool_timeout`` setting).
    ``approval_for(arguments, context)`` returns a :class:`CallApproval` when this call needs
    the user's approval (e.g. an MCP tool given a path outside the workspace): the default
    policy then asks (denies in ``-p``) unless a rule allows it; an error counts as asking.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str
    input_schema: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})
    handler: Callable[..., Any]
    concurrency_safe: bool = False
    read_only: bool = False
    risk: Risk = "medium"
    paths: dict[str, PathAccess] = Field(default_factory=dict)
    timeout: float | None = None
    plugin: str | None = None
    concurrency_safe_for: Callable[[dict[str, Any]], bool] | None = None
    approval_for: Callable[[dict[str, Any], Any], CallApproval | None] | None = None

    def approval(self, arguments: dict[str, Any], context: Any) -> CallApproval | None:
        """This call's :class:`CallApproval` from ``approval_for`` (``None``: no extra ask)."""
        if self.approval_for is None:
            return None
        try:
            return self.approval_for(arguments, context)
        except Exception as exc:  # noqa: BLE001 - an unsure answer is the safe one
            return CallApproval(reason=f"{self.name} could not judge its arguments ({exc})")

    def is_concurrency_safe(self, arguments: dict[str, Any]) -> bool:
        """Whether this call may run in parallel with other concurrency-safe calls."""
        if self.concurrency_safe_for is not None:
            try:
                return bool(self.concurrency_safe_for(arguments))
            except Exception:  # noqa: BLE001 - an unsure answer is the safe one
                return False
        return self.concurrency_safe

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not TOOL_NAME.match(value):
            raise ValueError(
                f"tool name {value!r} is invalid: it must match ^[a-zA-Z0-9_-]{{1,64}}$ "
                "(letters, digits, _ and -, at most 64 characters)"
            )
        return value

    @model_validator(mode="after")
    def _check_schema(self) -> Tool:
        schema = self.input_schema
        if not isinstance(schema, dict) or schema.get("type") != "object":
            raise ValueError(
                f"tool {self.name!r}: input_schema must be a JSON schema of type object"
            )
        if repr(schema) not in CHECKED_SCHEMAS:  # jsonschema: 40 ms to import
            import jsonschema

            try:
                jsonschema.validators.validator_for(schema).check_schema(schema)
            except jsonschema.SchemaError as err:
                raise ValueError(
                    f"tool {self.name!r}: invalid input_schema: {err.message}"
                ) from None
            CHECKED_SCHEMAS.add(repr(schema))
        if missing := [n for n in self.paths if n not in (schema.get("properties") or {})]:
            raise ValueError(
                f"tool {self.name!r}: paths names {missing[0]!r}, which is not a parameter"
            )
        return self

    def spec(self) -> dict[str, Any]:
        """The chat-completions ``tools`` entry for this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            },
        }


class ToolCall(BaseModel):
    """One tool call requested by the model."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    raw_arguments: str = "{}"
    parse_error: str | None = None  # why the arguments are unreadable (the call is not run)
    paths: dict[str, Path] = Field(default_factory=dict)  # resolved before permission_verdict


class Validation(BaseModel):
    """A recognised verification command (tests, lint, type-check, build) and its outcome."""

    model_config = ConfigDict(defer_build=True)  # built at first use, not at start-up

    kind: Literal["test", "lint", "typecheck", "build"]
    command: str
    passed: bool


class Observation(BaseModel):
    """Facts recorded after one tool run — no judgements."""

    model_config = ConfigDict(defer_build=True)  # built at first use, not at start-up

    step: int
    call_id: str
    tool: str
    signature: str
    result_hash: str
    resources: list[str] = Field(default_factory=list)
    mutation: bool = False
    mutated: list[str] = Field(default_factory=list)
    created: list[str] = Field(default_factory=list)  # of ``mutated``, the paths the call created
    validation: Validation | None = None
    is_error: bool = False


class ContextSection(BaseModel):
    """A section contributed to the system prompt by ``build_context``."""

    title: str
    text: str
    priority: int = 50


class ModelProvider(BaseModel):
    """A model family contributed through ``register_models``: ``--model PREFIX:REST`` selects it;
    ``factory(model_id, settings)`` returns an object with ``complete(messages, tools, on_text)
    -> ModelReply``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    prefix: str
    factory: Callable[..., Any]
    description: str = ""
    plugin: str | None = None


class DuplicateToolError(ValueError):
    """Two plugins registered a tool with the same name."""


class ToolRegistry:
    """The tools of a run, by name. Thread-safe; may change during the run (MCP list_changed)."""

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        self._lock = threading.Lock()
        self.shadowed: dict[str, list[str]] = {}  # tool name → plugins whose tool of it lost

    def add(self, tool: Tool, *, replace: bool = False) -> None:
        """Add a tool; a duplicate name from another plugin raises :class:`DuplicateToolError`."""
        with self._lock:
            existing = self._tools.get(tool.name)
            if existing is not None and not replace and existing.plugin != tool.plugin:
                raise DuplicateToolError(
                    f"tool {tool.name!r} registered by both {existing.plugin!r} and {tool.plugin!r}"
                )
            self._tools[tool.name] = tool

    def remove(self, name: str) -> None:
        """Remove a tool if present."""
        with self._lock:
            self._tools.pop(name, None)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, or ``None``."""
        return self._tools.get(name)

    def all(self) -> list[Tool]:
        """All tools, in registration order."""
        with self._lock:
            return list(self._tools.values())

    def names(self) -> list[str]:
        """All tool names, in registration order."""
        return [tool.name for tool in self.all()]


class RunContext:
    """What tools and policies know about the run in progress.

    ``store`` is a dict plugins share within this agent (``store["todos"]``; a subagent's starts
    empty); ``session_store`` is the same dict in the session's whole agent tree: keep there
    what ``register_tools`` sets up (servers), as it is not called for a child. ``request`` is
    what the user said (a plugin's slash command as typed, not the prompt it expanded to): what
    policies read for what the user asked. ``observations`` are this run's recorded facts.
    The runner sets ``context_window()`` (the window in tokens as best known now, to size
    additions to the prompt by) and ``side_request(messages)``: one model request without
    tools, returning the reply text or raising ``ModelError``; its usage counts to the run.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        home: Path,
        settings: Any,
        session_id: str,
        prompt: str = "",
        interactive: bool = False,
        ask: Callable[[str, list[str]], str] | None = None,
        emit: Callable[[Any], None] | None = None,
        plugin_manager: Any = None,
    ) -> None:
        self.workspace = workspace
        self.home = home
        self.settings = settings
        self.session_id = session_id
        self.prompt = prompt
        self.request = prompt
        self.interactive = interactive
        self.ask = ask
        self._emit = emit
        self.store: dict[str, Any] = {}
        self.session_store: dict[str, Any] = {}
        self.observations: list[Observation] = []
        self.session_grants: set[str] = set()
        self.lock = threading.RLock()
        self.tools = ToolRegistry()
        self.startup_tasks: list[Callable[[], None]] = []  # run once before the first request
        self.cancelled = threading.Event()  # the user cancelled the turn: long tools stop early
        self.cleanup: list[Callable[[], None]] = []  # run once when the run ends, however it ends
        self.plugin_manager = plugin_manager  # ``None`` outside a run
        self.shown_files: dict[str, str] = {}  # ``@path`` files shown whole: path → SHA-256
        self.readable_roots: list[Path] = []  # folders outside the workspace path reads may open
        self.writable_roots: list[Path] = []  # folders outside it sandboxed commands may write
        self.protected_roots: list[Path] = []  # folders in it commands may not write (tools ask)
        self.pins: dict[str, ContextSection] = {}  # context that survives compaction (see pin)
        self.context_window: Callable[[], int] | None = None
        self.side_request: Callable[..., str] | None = None  # (messages, purpose="summary")
        self.agent_id: str | None = None  # ``None`` for the main agent (a child's is on its events)
        self.parent_call_id: str | None = None  # in a child: the tool call that started it
        self.agent_name: str | None = None  # in a child: ``AgentRequest.name`` (a profile)
        self.depth = 0  # 0 for the main agent, 1 for its children, and so on
        self.spawner: Callable[[Any], Any] | None = None  # set by the runner (see spawn_agent)
        self._calls = threading.local()
        self.on_plugin_failure: Callable[[str], None] | None = None  # see plugin_failed

    def plugin_failed(self, message: str) -> None:
        """Report a plugin failing in a hook called through ``context.hook`` (after its notice;
        ``message`` names plugin and hook): in ``[plugins] strict`` mode the run exits 2."""
        if self.on_plugin_failure is not None:
            self.on_plugin_failure(message)

    @property
    def hook(self) -> Any:
        """The hook relay: ``context.hook.<name>(...)`` calls any hook, added hookspecs too."""
        if self.plugin_manager is None:
            raise RuntimeError("this context has no plugin manager")
        return self.plugin_manager.hook

    @property
    def permission_mode(self) -> str:
        """The active permission mode (``default``, ``accept-edits``, ``plan``, ``bypass``)."""
        return str(getattr(self.settings, "permission_mode", "default"))

    @property
    def artifacts_dir(self) -> Path:
        """Folder under ``MYCODE_HOME`` for this session's artifacts (created on demand)."""
        path = self.home / "artifacts" / self.session_id
        path.mkdir(parents=True, exist_ok=True)
        return path

    def emit(self, event: Any) -> None:
        """Send an event (e.g. a ``progress`` event) into the run's event stream."""
        if self._emit is not None:
            self._emit(event)

    def pin(self, key: str, text: str, title: str = "") -> None:
        """Keep ``text`` in the model view across every compaction, under ``key``: a later pin of
        the key replaces it, an empty text removes it. Pinning does not show the text now (a tool
        result or ``build_context`` does); each compacted view re-states every pin, in order."""
        with self.lock:
            if text.strip():
                self.pins[key] = ContextSection(title=title or key, text=text)
            else:
                self.pins.pop(key, None)

    @property
    def current_call(self) -> ToolCall | None:
        """The tool call run, or asked about (``ask``), in this thread (``None`` outside one)."""
        return getattr(self._calls, "call", None)

    @current_call.setter
    def current_call(self, call: ToolCall | None) -> None:
        self._calls.call = call

    def spawn_agent(self, request: Any) -> Any:
        """Run a child agent to its end and return its :class:`~mycode_core.agents.AgentOutcome`;
        call it from a tool handler (the running call becomes the child's ``parent_call_id``).
        Raises ``RuntimeError`` outside a runner."""
        if self.spawner is None:
            raise RuntimeError("child agents need a running agent (no spawner on this context)")
        return self.spawner(request)


class SlashCommand(BaseModel):
    """A ``/name`` command of the interactive session (also ``mycode -p "/name args"``).

    ``run(args, context)`` gets the text after the name and returns a :class:`SlashResult`,
    a string (a prompt to run) or ``None``. ``alias_of`` makes it a short name for another
    command (``/pdf`` for ``/skill:pdf``), kept only if no built-in or other plugin's command
    has its name (dropped silently otherwise); ``/help`` shows it on that command's line.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str
    description: str = ""
    argument_hint: str = ""
    run: Callable[[str, RunContext], SlashResult | str | None]
    plugin: str | None = None
    alias_of: str | None = None

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9_:.-]{0,63}$", value):
            raise ValueError(f"slash command name {value!r} is invalid")
        return value
