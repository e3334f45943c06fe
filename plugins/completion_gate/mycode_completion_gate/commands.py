"""A second look at the commands run during the session: did they really prove the tests?

The core records a validation when a command looks like a test, lint, type-check or build
run, and takes its exit status as the result. Three cases need the gate's own judgement:

* the status was **masked**: ``pytest | tail -5``, ``pytest; echo done`` or ``pytest || true``
  exit with the status of the last command, so a failing test run looks like a pass — such a
  run is judged by the summary its output ends with (``3 passed``, ``1 failed``, ``OK``,
  ``FAILED (failures=1)``, ``test result: ok.``…, :func:`judged`), and proves nothing without one;
* the command **ran no test**: ``pytest --version``, ``pytest --collect-only``,
  ``cargo test --no-run``;
* a command joining several kinds with ``&&`` (``ruff check . && pytest``): the core records
  the first, the gate counts each;
* a common test runner the core does not know: ``node --test``, ``make -C sub test``,
  ``npm --prefix sub test``, ``sh -c "pytest"``, ``yarn jest``, ``python -m tox``, ``mix test``,
  ``./mvnw test``, ``vendor/bin/phpunit``, ``swift test``, ``flutter test``… — its result
  is the call's error flag (a non-zero exit is an error).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from mycode_core.api import DEFAULT_VALIDATORS
from mycode_core.records import Observation, Validation

MORE_TESTS = re.compile(
    r"""^(?: node\s+(\S+\s+)*--test
    | make\s+(-C\s*\S+\s+|--directory=\S+\s+)?(tests?|check)
    | (npm|pnpm|yarn)\s+(--prefix|-C|--cwd|--dir)[\s=]\S+\s+(run\s+)?test
    | (npm|pnpm)\s+(run\s+)?((-[rw]|--recursive|--filter|--workspace)([\s=][^-\s]\S*)?\s+)+
      (run\s+)?test | yarn\s+workspace\s+\S+\s+(run\s+)?test
    | (npx\s+)?(turbo|lerna)\s+(run\s+)?test | (npx\s+)?playwright\s+test
    | (npx\s+)?nx\s+(test|run-many\s+(-t|--target)[\s=]test)
    | (yarn|pnpm(\s+exec)?|npx\s+(-y|--yes))\s+(jest|vitest|mocha)
    | (\./)?node_modules/\.bin/(jest|vitest|mocha) | py\.test | uvx\s+pytest | hatch\s+test
    | uv\s+run\s+(--\S+(\s+[^-\s]\S*)?\s+)+pytest | python[0-9.]*\s+-m\s+(tox|nox) | pytest
    | uv\s+run\s+--\s+pytest | pipenv\s+run\s+pytest | python[0-9.]*\s+manage\.py\s+test
    | npm\s+t | make\s+(-[jkls]\s*\d*\s+)+(tests?|check) | mix\s+test
    | (\./mvnw|mvn)\s+(\S+\s+)*(test|verify) | (\./gradlew|gradle)\s+(\S+\s+)*check
    | (just|task|pdm|rye|pixi|poe|hatch\s+run|pdm\s+run|pixi\s+run)\s+tests?
    | (\./|([\w.-]+/)+|(ba)?sh\s+([\w.-]+/)*)(run[_-]?tests?|tests?)(\.sh)?(?=\s|$)
    | python[0-9.]*\s+([\w.-]+/)*run_?tests\.py
    | (\./)?vendor/bin/(phpunit|pest) | phpunit | pest | php\s+artisan\s+test
    | composer\s+(run(-script)?\s+)?test | (bundle\s+exec\s+)?rake\s+spec
    | (sbt|lein|cabal|stack|swift|deno|dart|flutter|bazel|bazelisk)\s+test | zig\s+build\s+test
    )\b""",
    re.VERBOSE,
)
_NO_RUN = re.compile(
    r"\s--(version|help|collect-only|co|fixtures|markers|no-run)\b|\s-h\b"
    r"|\s-D(skipTests|maven\.test\.skip)\b|\s(-x|--exclude-task)\s+test\b"
)
_SPLIT = re.compile(r"(&&|\|\||\|&?|;|\n)")
_WRAP = re.compile(
    r"^(\(|\{|(ba|z|da)?sh\s+-c\s+|['\"]|[A-Za-z_]\w*=\S*\s+|(timeout\s+\S+|time|env)\s+)+"
)


def _part(text: str) -> str:
    return _WRAP.sub("", text.strip()).rstrip(")}'\" ")


def _matches(part: str, patterns: Iterable[str]) -> bool:
    return bool(MORE_TESTS.search(part)) or any(re.search(pattern, part) for pattern in patterns)


def _command(obs: Observation) -> str | None:
    if obs.tool != "run_command" or not obs.signature.startswith("run_command "):
        return None
    try:
        arguments = json.loads(obs.signature.split(" ", 1)[1])
    except ValueError:
        return None
    command = arguments.get("command") if isinstance(arguments, dict) else None
    return command if isinstance(command, str) else None


_FAILED = re.compile(
    r"\b[1-9]\d* (failed|errors?|failures?)\b|^(FAILED|FAIL|ERROR)\b|test result: FAILED"
    r"|^# fail [1-9]|^Tests:.*\b[1-9]\d* failed|^FAILURES!|^(\[\w+\] )?BUILD FAIL(URE|ED)\b",
    re.M,
)
_PASSED = re.compile(
    r"\b\d+ passed\b|^OK\b|^ok\s|test result: ok\.|^# pass \d+|^Tests:.*passed"
    r"|\b0 failures\b|^(\[\w+\] )?BUILD SUCCESS(FUL)?\b",
    re.M,
)
OUTPUT_KEPT = 4000
"""Characters kept of the end of each command's output (the test summary is at the end)."""


def judged(output: str) -> bool | None:
    """The outcome a test run's output states: ``False`` on a failure summary, ``True`` on a
    passing one, ``None`` when it shows neither."""
    if _FAILED.search(output):
        return False
    return True if _PASSED.search(output) else None


def masked(validation: Validation) -> bool:
    """Whether the command's exit status is not the validation's: a ``|``, ``;`` or ``||``
    follows the last recognised part (a pipe is fine under ``set -o pipefail``)."""
    patterns = DEFAULT_VALIDATORS.get(validation.kind, [])
    pieces = _SPLIT.split(validation.command)
    parts, separators = pieces[0::2], pieces[1::2]
    last = max((i for i, part in enumerate(parts) if _matches(_part(part), patterns)), default=-1)
    if last < 0:
        return False
    after = [sep for sep in separators[last:] if sep != "&&"]
    if "pipefail" in validation.command:
        after = [sep for sep in after if not sep.startswith("|") or sep == "||"]
    return bool(after)


def _kinds(command: str) -> list[str]:
    """The kinds of verification the ``&&``-joined parts of ``command`` run, in order."""
    kinds: list[str] = []
    for piece in command.split("&&"):
        part = _part(_SPLIT.split(piece)[0])
        for kind, patterns in DEFAULT_VALIDATORS.items():
            if kind not in kinds and (
                any(re.search(p, part) for p in patterns)
                or (kind == "test" and MORE_TESTS.search(part))
            ):
                kinds.append(kind)
    return kinds


def _was_refused(obs: Observation) -> bool:
    """Whether ``obs`` is a command the permission policy did not let run: a refused call is
    recorded without the ``command:`` resource an executed one has."""
    return obs.tool == "run_command" and obs.is_error and not obs.validation and not obs.resources


def refused(obs: Observation) -> list[tuple[str, str]]:
    """``(kind, command)`` for each verification a refused command would have run."""
    command = _command(obs) if _was_refused(obs) else None
    if command is None:
        return []
    return [
        (kind, command)
        for kind in _kinds(command)
        if not (kind == "test" and _NO_RUN.search(command))
    ]


def review(obs: Observation) -> list[Validation]:
    """The validations ``obs`` proves, by the gate's reading (see the module docs): one per
    kind its ``&&``-joined parts run (``ruff check . && pytest`` proves the lint and the tests:
    its zero exit status means every part passed)."""
    validation = obs.validation
    command = validation.command if validation else _command(obs)
    if command is None or _was_refused(obs):
        return []
    if validation is None:
        parts = [_part(part) for part in _SPLIT.split(command)[0::2]]
        if not any(_matches(part, ()) for part in parts):
            return []
        validation = Validation(kind="test", command=command, passed=not obs.is_error)
    kinds = [validation.kind, *(kind for kind in _kinds(command) if kind != validation.kind)]
    return [
        validation.model_copy(update={"kind": kind})
        for kind in kinds
        if not (kind == "test" and _NO_RUN.search(command))
    ]
