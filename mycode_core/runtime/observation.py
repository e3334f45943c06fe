"""Facts recorded after every tool run (the policies judge them; this module only records)."""

from __future__ import annotations

import hashlib
import json
import re

from mycode_core.records import Observation, ToolCall, ToolResult, Validation

DEFAULT_VALIDATORS: dict[str, list[str]] = {
    "test": [
        r"(^|/)pytest\b",
        r"\bpython[0-9.]*\s+(-\S+\s+)*-m\s+(pytest|unittest)\b",
        r"^(uv|poetry|pdm|hatch|rye)\s+run\s+(python[0-9.]*\s+-m\s+)?pytest\b",
        r"^(tox|nox)\b",
        r"^(npm|pnpm|yarn|bun)\s+(run\s+)?test\b",
        r"^npx\s+(jest|vitest|mocha)\b",
        r"^(jest|vitest|mocha)\b",
        r"^go\s+test\b",
        r"^cargo\s+(test|nextest)\b",
        r"^make\s+(test|check)\b",
        r"^(mvn|gradle|\./gradlew)\s+.*\btest\b",
        r"^ctest\b",
        r"^(bundle\s+exec\s+)?(rspec|rake\s+test)\b",
        r"^dotnet\s+test\b",
    ],
    "lint": [
        r"(^|/)ruff\s+(check|format\s+--check)\b",
        r"^(uv\s+run\s+)?ruff\b",
        r"^(flake8|pylint|eslint|golangci-lint|shellcheck)\b",
        r"^npx\s+eslint\b",
        r"^cargo\s+clippy\b",
        r"^(npm|pnpm|yarn)\s+(run\s+)?lint\b",
        r"^make\s+lint\b",
    ],
    "typecheck": [
        r"(^|/)mypy\b",
        r"\bpython[0-9.]*\s+-m\s+mypy\b",
        r"^(pyright|tsc)\b",
        r"^npx\s+tsc\b",
        r"^(npm|pnpm|yarn)\s+(run\s+)?typecheck\b",
    ],
    "build": [
        r"^(npm|pnpm|yarn)\s+(run\s+)?build\b",
        r"^cargo\s+(build|check)\b",
        r"^go\s+(build|vet)\b",
        r"^make(\s+(all|build))?\s*$",
        r"^python[0-9.]*\s+-m\s+(build|compileall)\b",
        r"^(mvn|gradle)\s+.*\b(package|build|compile)\b",
    ],
}

_SEPARATORS = re.compile(r"\s*(?:&&|\|\||;|\n)\s*")
_ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=\S*\s+")
_TIMINGS = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds)\b")


class ValidationMatcher:
    """Recognises verification commands (configurable per kind via ``validation_commands``)."""

    def __init__(self, extra: dict[str, list[str]] | None = None) -> None:
        patterns: dict[str, list[str]] = {k: list(v) for k, v in DEFAULT_VALIDATORS.items()}
        for kind, more in (extra or {}).items():
            patterns.setdefault(kind, []).extend(more)
        # compiled on first use (by ``re``'s cache): not on every start-up
        self._patterns = [(kind, pattern) for kind, items in patterns.items() for pattern in items]

    def kind_of(self, command: str) -> str | None:
        """``test``/``lint``/``typecheck``/``build`` for the first recognised part, else None."""
        for part in _SEPARATORS.split(command.strip()):
            part = _ENV_ASSIGN.sub("", part.strip())
            part = re.sub(r"^(cd\s+\S+\s*$)", "", part)
            for prefix in ("timeout ", "time ", "env "):
                if part.startswith(prefix):
                    rest = part[len(prefix) :]
                    words = rest.split(None, 1)
                    part = words[1] if prefix == "timeout " and len(words) > 1 else rest
            for kind, pattern in self._patterns:
                if re.search(pattern, part):
                    return kind
        return None


def observe(
    *,
    step: int,
    call: ToolCall,
    result: ToolResult,
    matcher: ValidationMatcher,
    workspace_changes: list[str] | None,
    created: set[str] | None = None,
) -> Observation:
    """Build the :class:`Observation` of one finished call: its signature is the tool name and
    the arguments as stable JSON, its result hash masks durations (a same re-run matches)."""
    metadata = result.metadata or {}
    resources = [str(r) for r in metadata.get("resources") or ()]
    mutated = [str(p) for p in metadata.get("mutated") or ()]
    if workspace_changes:
        mutated = sorted(set(mutated) | set(workspace_changes))
    validation = None
    command = call.arguments.get("command") if isinstance(call.arguments, dict) else None
    if isinstance(command, str) and "exit_code" in metadata:
        if (kind := matcher.kind_of(command)) is not None:
            validation = Validation(
                kind=kind,  # type: ignore[arg-type]
                command=command,
                passed=metadata["exit_code"] == 0,
            )
        if not resources:
            resources = [f"command:{command}"]
    stable = json.dumps(call.arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    text = f"{result.is_error}\0{_TIMINGS.sub('<t>', result.text())}"
    return Observation(
        step=step,
        call_id=call.id,
        tool=call.name,
        signature=f"{call.name} {stable}",
        result_hash=hashlib.sha1(text.encode("utf-8", "replace")).hexdigest()[:16],
        resources=resources,
        mutation=bool(mutated) and not result.is_error or bool(workspace_changes),
        mutated=mutated,
        created=sorted(set(mutated) & (created or set())),
        validation=validation,
        is_error=result.is_error,
    )
