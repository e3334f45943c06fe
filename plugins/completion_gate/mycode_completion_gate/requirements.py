"""What the user asked to have verified, read from the request (English and Chinese).

The request is split into sentences; each sentence may ask for a kind of verification
(``test``, ``lint``, ``typecheck``, ``build``, or ``check`` = any of them), may decline one
("don't run the tests", "不用跑测试"), and may soften what it asks ("if possible", "尽量") —
softening applies to the kinds asked for in the same sentence only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

KINDS = ("test", "lint", "typecheck", "build", "check")
"""Verification kinds; ``check`` is satisfied by any recognised validation."""

_FLAGS = re.IGNORECASE
_W = r"(?:\s+[\w'-]+){0,4}?"  # up to four filler words, as few as possible
_RUNNERS = (
    r"pytest|unittest|tox|nox|jest|vitest|mocha|rspec|ctest|go\s+test|cargo\s+test|"
    r"(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test|make\s+(?:test|check)"
)

# (kind, must_pass, pattern)
_ASKS: list[tuple[str, bool, re.Pattern[str]]] = [
    # --- tests
    (
        "test",
        False,
        re.compile(
            rf"\b(?:run|re-?run|execute|launch|trigger){_W}\s+(?:unit\s+|integration\s+|e2e\s+)?"
            r"(?:tests?|test\s+suite|specs)\b",
            _FLAGS,
        ),
    ),
    (
        "test",
        True,
        re.compile(
            rf"\b(?:tests?|test\s+suite|specs){_W}\s+(?:pass|passes|passing|pass(?:es)?\s+again|"
            r"green|succeed|succeeds)\b",
            _FLAGS,
        ),
    ),
    ("test", True, re.compile(r"\b(?:failing|broken|red)\s+(?:unit\s+)?tests?\b", _FLAGS)),
    ("test", True, re.compile(r"\btests?\s+(?:is\s+|are\s+)?(?:failing|fails?|broken)\b", _FLAGS)),
    ("test", False, re.compile(rf"\b(?:{_RUNNERS})\b", _FLAGS)),
    (
        "test",
        False,
        re.compile(
            r"\btest\s+(?:it|this|that|them|your\s+\w+|the\s+(?:fix|change|changes|patch|code))\b",
            _FLAGS,
        ),
    ),
    (
        "test",
        False,
        re.compile(
            rf"\b(?:verify|check|confirm|validate){_W}\s+(?:with|using|by\s+running)\s+"
            r"(?:the\s+)?tests?\b",
            _FLAGS,
        ),
    ),
    (
        "test",
        False,
        re.compile(
            r"(?:跑|运行|执行|重跑|重新跑|重新运行)\s*(?:一下|一遍|下|一次)?\s*(?:所有|全部|全量)?的?"
            r"\s*(?:单元|集成|回归)?\s*(?:测试|单测|用例|test)"
        ),
    ),
    (
        "test",
        True,
        re.compile(
            r"(?:测试|单测|用例|test)\s*(?:都|全部|均|能|可以|要|需要|必须|全)?\s*"
            r"(?:通过|跑通|过了|全过|全绿|pass)"
        ),
    ),
    ("test", True, re.compile(r"(?:失败|挂掉?|报错)的\s*(?:测试|单测|用例)")),
    ("test", True, re.compile(r"(?:测试|单测|用例)\s*(?:失败|挂了|报错|不通过|没通过|没过)")),
    ("test", False, re.compile(r"测试一下|测一下|测下|自测")),
    # --- lint
    ("lint", True, re.compile(r"\b(?:lint|lints|linter|linters|linting)\b", _FLAGS)),
    (
        "lint",
        True,
        re.compile(
            r"\b(?:ruff|flake8|pylint|eslint|golangci-lint|clippy|shellcheck|stylelint)\b", _FLAGS
        ),
    ),
    (
        "lint",
        True,
        re.compile(r"(?:代码|静态|风格|格式|语法|规范)\s*检查|检查\s*(?:代码)?\s*(?:风格|规范)"),
    ),
    # --- type checking
    (
        "typecheck",
        True,
        re.compile(
            r"\btype[-\s]?check(?:s|ing|er|ed)?\b|\btype\s+errors?\b|\b(?:mypy|pyright|tsc)\b",
            _FLAGS,
        ),
    ),
    ("typecheck", True, re.compile(r"类型\s*(?:检查|错误|校验)")),
    # --- build
    (
        "build",
        True,
        re.compile(
            r"\b(?:make\s+sure|ensure|check|verify|confirm)\s+(?:that\s+)?(?:it|everything|"
            r"the\s+(?:project|code|app|package|crate|binary|library))\s+(?:still\s+)?"
            r"(?:builds|compiles)\b",
            _FLAGS,
        ),
    ),
    (
        "build",
        True,
        re.compile(
            r"\b(?:run|do)\s+(?:the\s+|a\s+)?(?:build|compile|compilation)\b|"
            r"\bbuild\s+(?:still\s+)?(?:passes|succeeds|works|is\s+green)\b|"
            r"\b(?:cargo|go)\s+build\b|\b(?:npm|yarn|pnpm)\s+(?:run\s+)?build\b|\bmake\s+build\b|"
            r"\b(?:compile|build)\s+errors?\b|\bcompiles\s+cleanly\b",
            _FLAGS,
        ),
    ),
    (
        "build",
        True,
        re.compile(
            r"(?:编译|构建)\s*(?:通过|成功|没有?问题|不报错|错误|失败|报错)|"
            r"(?:确保|保证)\s*(?:能|可以)?\s*(?:编译|构建)|(?:跑|运行|执行)\s*(?:一下)?\s*(?:编译|构建)"
        ),
    ),
    # --- any verification
    (
        "check",
        False,
        re.compile(
            r"\b(?:verify|validate|double-check)\s+(?:it|this|that|everything|your\s+(?:change|changes|"
            r"fix|work)|the\s+(?:change|changes|fix|result|results))\b|"
            r"\brun\s+(?:the\s+|all\s+(?:the\s+)?)?checks\b|\b(?:checks|ci)\s+(?:pass|passes|green)\b",
            _FLAGS,
        ),
    ),
    (
        "check",
        False,
        re.compile(
            r"验证一下|验证下|(?:请|并|然后|再|最后)\s*验证|验证\s*(?:修改|改动|结果|效果|一遍)|"
            r"(?:跑|运行|执行)\s*(?:一下|一遍|下)?\s*检查|检查\s*(?:都|全部)?\s*(?:通过|跑通)"
        ),
    ),
]

_DECLINES: list[tuple[str, re.Pattern[str]]] = [
    (
        "test",
        re.compile(
            r"\b(?:don'?t|do\s+not|no\s+need\s+to|needn'?t|without|never)\s+(?:[\w'-]+\s+){0,2}?"
            r"(?:run|running|execute|executing|bother\s+running)\s+(?:[\w'-]+\s+){0,2}?"
            r"(?:tests?|test\s+suite)\b|\bskip(?:ping)?\s+(?:the\s+)?tests?\b|"
            r"\b(?:don'?t|do\s+not)\s+test\b",
            _FLAGS,
        ),
    ),
    (
        "test",
        re.compile(
            r"(?:不用|不要|无需|不需要|别|不必|先不|暂时不|跳过)\s*(?:再)?\s*(?:跑|运行|执行)?\s*"
            r"(?:一下)?\s*(?:单元)?\s*(?:测试|单测|用例)"
        ),
    ),
    (
        "lint",
        re.compile(
            r"\b(?:don'?t|do\s+not|no\s+need\s+to|without|skip(?:ping)?)\s+(?:[\w'-]+\s+){0,2}?"
            r"(?:lint|linting|the\s+linter)\b",
            _FLAGS,
        ),
    ),
    (
        "lint",
        re.compile(
            r"(?:不用|不要|无需|不需要|别|不必|跳过)\s*(?:跑|运行|执行|做)?\s*(?:一下)?\s*"
            r"(?:lint|代码检查|静态检查)"
        ),
    ),
    (
        "typecheck",
        re.compile(
            r"\b(?:don'?t|do\s+not|no\s+need\s+to|without|skip(?:ping)?)\s+(?:[\w'-]+\s+){0,2}?"
            r"type[-\s]?check",
            _FLAGS,
        ),
    ),
    (
        "build",
        re.compile(
            r"\b(?:don'?t|do\s+not|no\s+need\s+to|without|skip(?:ping)?)\s+(?:[\w'-]+\s+){0,2}?"
            r"(?:build|building|compile|compiling)\b",
            _FLAGS,
        ),
    ),
]

_SOFTENERS = re.compile(
    r"\b(?:if\s+(?:at\s+all\s+)?possible|where\s+possible|when(?:ever)?\s+possible|"
    r"if\s+you\s+can|if\s+feasible|if\s+time\s+permits|as\s+far\s+as\s+possible|"
    r"best[-\s]effort|if\s+(?:it'?s|it\s+is)\s+(?:possible|feasible)|if\s+applicable|"
    r"if\s+available|if\s+there\s+(?:are|is)\s+(?:any\s+tests?|any|tests?)|optionally)\b"
    r"|尽量|尽可能|如果可以|如果可能|如果能|可以的话|可能的话|能.{0,6}的话|有条件的话|如果有(?:测试|条件)|"
    r"方便的话|如果方便|有空的话|视情况",
    _FLAGS,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|[。！？；;\n]+")


@dataclass(frozen=True)
class Ask:
    """One kind of verification the user asked for."""

    kind: str
    must_pass: bool
    """The words say it must pass ("make sure the tests pass"), not merely run."""
    best_effort: bool
    """The same sentence softened it ("if possible", "尽量")."""
    phrase: str
    """The sentence that asked for it (trimmed), for feedback."""


@dataclass
class Request:
    """What the request says about verification."""

    asks: dict[str, Ask] = field(default_factory=dict)
    declined: set[str] = field(default_factory=set)
    softens_session: bool = False
    """A sentence said "if possible" / "尽量" without asking for a specific check ("fix it
    if you can"): what the session alone would require becomes best effort too."""

    def asked(self, kind: str) -> Ask | None:
        """The ask for ``kind``, or ``None``."""
        return self.asks.get(kind)


def _sentences(text: str) -> Iterable[str]:
    for part in _SENTENCES.split(text):
        part = part.strip()
        if part:
            yield part


def _trim(sentence: str, limit: int = 120) -> str:
    sentence = " ".join(sentence.split())
    return sentence if len(sentence) <= limit else sentence[: limit - 1] + "…"


_PATH_LIKE = re.compile(r"\S*/\S*")
"""A word holding a ``/``: a path or URL, whose parts are names, not requests
(``/tmp/pytest-of-root/test_x`` asks for no test run)."""


_QUESTION = re.compile(
    r"^(?:why|what(?!\s+about)|how(?!\s+about))\b|^(?:where|which|when|who|whose)\b.*\?$"
    r"|^(?:为什么|为啥|怎么|什么)",
    re.IGNORECASE | re.DOTALL,
)
"""A question ("Why do the tests fail?") wants an answer, not a check: it asks for nothing.
One led by when/where/which/who must end with ``?`` ("When you are done, run the tests." and
"Where possible, add tests." are requests)."""


def parse_request(prompt: str) -> Request:
    """Read the user's request: asked kinds, declined kinds, softening (EN and ZH).

    Paths and URLs are left out first: only the words around them ask for something."""
    request = Request()
    for sentence in _sentences(_PATH_LIKE.sub(" ", prompt or "")):
        declined = {kind for kind, pattern in _DECLINES if pattern.search(sentence)}
        request.declined |= declined
        if _QUESTION.match(sentence):
            continue
        soft = bool(_SOFTENERS.search(sentence))
        asked_here = False
        for kind, must_pass, pattern in _ASKS:
            if kind in declined or not pattern.search(sentence):
                continue
            asked_here = True
            previous = request.asks.get(kind)
            request.asks[kind] = Ask(
                kind=kind,
                must_pass=must_pass or bool(previous and previous.must_pass),
                best_effort=soft and (previous is None or previous.best_effort),
                phrase=previous.phrase if previous else _trim(sentence),
            )
        if soft and not asked_here:
            request.softens_session = True
    for kind in request.declined:
        request.asks.pop(kind, None)
    return request


UNFINISHED = ("pending", "in_progress")


def unfinished_todos(store: dict[str, Any]) -> list[dict[str, Any]]:
    """The todo_write items (``store["todos"]``) that are not completed (nor cancelled)."""
    todos = store.get("todos") or []
    out = []
    for item in todos if isinstance(todos, list) else []:
        if not isinstance(item, dict):
            continue
        status = str(item.get("status", "pending")).lower()
        if status not in ("completed", "done", "cancelled", "canceled"):
            out.append(item)
    return out
