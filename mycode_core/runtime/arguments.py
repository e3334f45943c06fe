"""Checks of a tool call's arguments, and the one-line subject and reason shown for a call."""

from __future__ import annotations

import json
from typing import Any

from mycode_core.events import without_lone_surrogates
from mycode_core.records import Tool, ToolCall


class SchemaChecker:
    """Validates arguments against each tool's JSON schema (validators cached per tool)."""

    def __init__(self) -> None:
        self._validators: dict[str, Any] = {}

    def check(self, tool: Tool, arguments: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """``arguments`` without the nulls the schema refuses for optional parameters (models
        send null for "not given"), and the first violation left as one line, or ``None``."""
        errors = self._errors(tool, arguments)
        nulls = {e.path[0] for e in errors if len(e.path) == 1 and e.instance is None}
        nulls -= set(tool.input_schema.get("required") or ())
        if nulls:
            arguments = {k: v for k, v in arguments.items() if k not in nulls}
            errors = self._errors(tool, arguments)
        if not errors:
            return arguments, None
        where = ".".join(str(p) for p in errors[0].absolute_path)
        return arguments, f"{where}: {errors[0].message}" if where else errors[0].message

    def _errors(self, tool: Tool, arguments: dict[str, Any]) -> list[Any]:
        validator = self._validators.get(tool.name)
        if validator is None:
            import jsonschema
            from jsonschema_specifications import REGISTRY

            cls = jsonschema.validators.validator_for(tool.input_schema)
            try:
                cls.check_schema(tool.input_schema)
                # the metaschemas only: never fetch a "$ref" URL an MCP server's schema names
                validator = cls(tool.input_schema, registry=REGISTRY)
            except jsonschema.SchemaError:
                validator = False
            self._validators[tool.name] = validator
        if validator is False or validator is True:
            return []
        from referencing.exceptions import Unresolvable  # loaded with jsonschema

        try:
            return list(validator.iter_errors(arguments))
        except Unresolvable:  # a "$ref" that resolves nowhere here: left to the tool
            return []


def call_subject(call: ToolCall, limit: int = 160) -> str:
    """What a call acts on, in one line: the command, the path or pattern, else the arguments."""
    arguments, keys = call.arguments, ("command", "path", "file_path", "pattern", "url", "name")
    found = [arguments[key] for key in keys if isinstance(arguments.get(key), str)]
    text = found[0] if found else json.dumps(arguments, ensure_ascii=False)
    lines = text.strip().splitlines() or [""]
    first = " ".join(lines[0].split())
    if len(lines) > 1:
        first += f" … (+{len(lines) - 1} lines)"
    return first if len(first) <= limit else first[: limit - 1] + "…"


def short_reason(reason: str, call: ToolCall, limit: int = 120) -> str:
    """A policy's reason in one short line, without the advice meant for ``-p`` runs."""
    text = " ".join(reason.split())
    for cut in (" needs your approval", ". To allow", ". Answer yes"):
        text = text.split(cut, 1)[0]
    if text.startswith(call.name) and text.endswith(")"):  # "run_command 'x' (why (more))"
        depth = 0
        for index in range(len(text) - 1, 0, -1):  # back to the "(" opening the last group
            depth += {")": 1, "(": -1}.get(text[index], 0)
            if depth == 0:
                text = text[index + 1 : -1]  # -> "why (more)"
                break
    text = text.strip(" .") or "the policy asks before this call"
    return text if len(text) <= limit else text[: limit - 1] + "…"


MAX_ARGUMENT_DEPTH = 64


def argument_problem(value: Any) -> str | None:
    """Why parsed arguments cannot be used (nested too deep, invalid Unicode), or ``None``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_ARGUMENT_DEPTH:
            return f"the arguments are nested more than {MAX_ARGUMENT_DEPTH} levels deep"
        if isinstance(item, dict):
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
        elif isinstance(item, str) and without_lone_surrogates(item) is not item:
            return "the arguments contain an unpaired surrogate (invalid Unicode)"
    return None
