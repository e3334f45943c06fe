"""Structured output (``-p --json-schema SCHEMA``): the final answer must be JSON valid against it.

A ``-p`` option, so it lives with the command line: the loop only knows the
:class:`~mycode_core.runtime.runner_base.AnswerCheck` interface this module implements.

:func:`load_schema` reads the schema (a file path or inline JSON) and checks it is a JSON Schema;
:class:`StructuredOutput` judges each final answer: the whole text as JSON, or one fenced
```` ```json ```` block (a reasoning model's leading ``<think>`` block left aside). An invalid
answer becomes a failing completion verdict (source ``structured_output``) whose feedback lists
the validation errors, so it goes back to the model under the completion gate's block cap —
whatever ``--completion-policy`` says.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from mycode_core.verdicts import CompletionVerdict

SOURCE = "structured_output"
MAX_ERRORS = 5
"""Validation errors named in one piece of guidance."""
MAX_SCHEMA_CHARS = 4000
"""How much of the schema the model is shown."""

_FENCE = re.compile(r"```(?:json|JSON)?[ \t]*\n(.*?)\n[ \t]*```", re.DOTALL)
_THINKING = re.compile(r"\s*<(think|thinking)>.*?</\1>", re.DOTALL)
"""A reasoning model's thoughts before its answer, when the server leaves them in the text."""


class SchemaError(ValueError):
    """A ``--json-schema`` that is not JSON or not a JSON Schema (one readable line)."""


def load_schema(value: str) -> dict[str, Any]:
    """The schema from ``value``: inline JSON, or the path of a file holding it."""
    from jsonschema import exceptions, validators

    text = value.strip()
    where = "--json-schema"
    if not text.startswith(("{", "[")):
        path = Path(text).expanduser()
        if not path.is_file():
            raise SchemaError(f"--json-schema {value!r}: neither inline JSON nor an existing file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise SchemaError(f"--json-schema {path}: cannot be read ({exc})") from None
        where = f"--json-schema {path}"
    try:
        schema = json.loads(text)
    except ValueError as exc:
        raise SchemaError(f"{where}: not valid JSON ({exc})") from None
    if not isinstance(schema, dict):
        raise SchemaError(f"{where}: a JSON Schema is an object, not {type(schema).__name__}")
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        at = "/".join(str(part) for part in exc.path) or "the top level"
        raise SchemaError(f"{where}: not a valid JSON Schema ({exc.message} at {at})") from None
    return schema


def parse_answer(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for an answer that is JSON (or holds exactly one fenced block), after
    any leading ``<think>…</think>``."""
    thoughts = _THINKING.match(text)
    text = text[thoughts.end() :] if thoughts else text
    candidates = [text.strip()]
    blocks = _FENCE.findall(text)
    if len(blocks) == 1:
        candidates.append(blocks[0].strip())
    for candidate in candidates:
        try:
            return True, json.loads(candidate)
        except ValueError:
            continue
    return False, None


class StructuredOutput:
    """Judges final answers against one schema; keeps the last valid value."""

    def __init__(self, schema: dict[str, Any]) -> None:
        from jsonschema import validators

        self.schema = schema
        self._validator = validators.validator_for(schema)(schema)
        self.value: Any = None
        self.valid = False

    def instructions(self) -> str:
        """The system prompt's section telling the model the answer's shape."""
        shown = json.dumps(self.schema, ensure_ascii=False)[:MAX_SCHEMA_CHARS]
        return (
            "\n\n# Final answer format\nYour final answer must be only a JSON value valid "
            f"against this JSON Schema (no prose around it):\n{shown}"
        )

    def judge(self, text: str) -> CompletionVerdict | None:
        """None when ``text`` is valid (its value kept); else a failing verdict with errors."""
        self.valid, self.value = False, None
        ok, value = parse_answer(text)
        if not ok:
            return self._fail("it is not JSON (answer with the JSON value alone)")
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if errors:
            lines = [
                f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
                for e in errors[:MAX_ERRORS]
            ]
            more = f" (+{len(errors) - MAX_ERRORS} more)" if len(errors) > MAX_ERRORS else ""
            return self._fail("it does not match the schema: " + "; ".join(lines) + more)
        self.valid, self.value = True, value
        return None

    def result_value(self, stop_reason: str) -> Any:
        """``result.structured_output``: the valid answer's value when the run completed."""
        return self.value if stop_reason == "completed" and self.valid else None

    def _fail(self, why: str) -> CompletionVerdict:
        return CompletionVerdict(
            verdict="fail",
            source=SOURCE,
            feedback=(
                f"Your final answer must be JSON valid against the given JSON Schema, but {why}. "
                "Reply again with only the corrected JSON."
            ),
        )
