"""The tool-authoring API: ``@tool`` makes a typed function a :class:`~mycode_core.records.Tool`
(schema from type hints and docstring; ``ReadPath``/``WritePath`` resolved in the workspace; a
``context`` parameter gets the run's context; sync or async)."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Literal,
    TypedDict,
    Unpack,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from mycode_core.errors import ToolDefinitionError, error_line
from mycode_core.records import RunContext, Tool, ToolResult
from mycode_core.schema_keys import BUILT_SCHEMAS, schema_key

PathMode = Literal["read", "write"]


class PathRole:
    """Marker inside ``Annotated`` telling the core a parameter is a path to resolve."""

    def __init__(self, mode: PathMode) -> None:
        self.mode: PathMode = mode

    def __repr__(self) -> str:
        return f"PathRole({self.mode!r})"


ReadPath = Annotated[Path, PathRole("read")]  # resolved in the workspace or a readable root
WritePath = Annotated[Path, PathRole("write")]  # in the workspace, not in plan mode; recorded

_PARAM_LINE = re.compile(r"^\s*(?::param\s+)?(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_SECTION = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$", re.IGNORECASE)
_END_SECTION = re.compile(r"^\s*(Returns?|Raises|Yields|Examples?|Notes?)\s*:\s*$", re.IGNORECASE)


def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """``(description, {param: text})`` of a Google- (``Args:``) or Sphinx-style docstring."""
    text = inspect.cleandoc(doc or "")
    description: list[str] = []
    params: dict[str, str] = {}
    current: str | None = None
    in_args = False
    for line in text.splitlines():
        if _SECTION.match(line):
            in_args, current = True, None
            continue
        if _END_SECTION.match(line) or line.strip().startswith((":return", ":raises", ":rtype")):
            in_args, current = False, None
            continue
        sphinx = line.strip().startswith(":param ")
        match = _PARAM_LINE.match(line) if (in_args or sphinx) else None
        if match:
            current = match.group(1).lstrip("*")
            params[current] = match.group(2).strip()
            continue
        if current is not None and line.strip() and (in_args or line.startswith((" ", "\t"))):
            params[current] = f"{params[current]} {line.strip()}".strip()
            continue
        if not in_args and not sphinx:
            current = None
            description.append(line)
    return "\n".join(description).strip(), params


def _path_role(annotation: Any, func: Callable[..., Any], name: str) -> PathMode | None:
    """``read``/``write`` for ``ReadPath``/``WritePath`` (also inside ``Optional``), else None;
    :class:`ToolDefinitionError` where the core could not resolve it (in a list, a union)."""
    if get_origin(annotation) is Annotated:
        roles = [extra.mode for extra in get_args(annotation)[1:] if isinstance(extra, PathRole)]
        return roles[0] if roles else _path_role(get_args(annotation)[0], func, name)
    args = get_args(annotation)
    roles = [role for arg in args if (role := _path_role(arg, func, name))]
    if roles and (len(args) != 2 or type(None) not in args):  # only ReadPath | None
        why = f"@tool {func.__name__}: {name}: ReadPath/WritePath only alone or with None"
        raise ToolDefinitionError(f"{why} (one path per parameter)", _defined_at(func))
    return roles[0] if roles else None


def _annotation_description(annotation: Any) -> tuple[Any, str | None, FieldInfo | None]:
    """Strip ``Annotated`` text and ``Field`` metadata: (bare type, description, field)."""
    if get_origin(annotation) is not Annotated:
        return annotation, None, None
    base, *extras = get_args(annotation)
    description = next((e for e in extras if isinstance(e, str)), None)
    field = next((e for e in extras if isinstance(e, FieldInfo)), None)
    kept = [e for e in extras if not isinstance(e, (str, FieldInfo, PathRole))]
    inner_base, inner_desc, inner_field = _annotation_description(base)
    if kept:
        inner_base = Annotated[(inner_base, *kept)]  # type: ignore[valid-type]
    return inner_base, description or inner_desc, field or inner_field


def _is_context_param(name: str, annotation: Any) -> bool:
    """Typed ``RunContext``, or untyped and called ``context`` (``context: int`` is no context)."""
    return annotation is RunContext or (name == "context" and annotation is Any)


@dataclass(eq=False, repr=False)
class _ToolFunction:
    """Calls the user's function with validated arguments, resolved paths and the context."""

    func: Callable[..., Any]
    model: type[BaseModel]
    paths: dict[str, PathMode]
    path_defaults: dict[str, Any]
    context_param: str | None

    def __post_init__(self) -> None:
        self.__name__ = getattr(self.func, "__name__", "tool")
        self.__doc__ = self.func.__doc__
        self.__wrapped__ = self.func

    def __call__(self, arguments: dict[str, Any], context: Any) -> Any:
        from mycode_core.paths import BoundaryError, bind_path, bound_root, resolve_in_workspace

        kwargs: dict[str, Any] = {}
        for name, mode in self.paths.items():
            value = arguments.get(name, self.path_defaults.get(name))
            if value is None or isinstance(value, Path):
                kwargs[name] = value  # the core resolved it already (or it is optional)
                continue
            try:  # called directly, not through the orchestrator: the same boundary
                resolved = resolve_in_workspace(value, context, write=mode == "write")
                root = bound_root(resolved, context)
                kwargs[name] = bind_path(resolved, root, writable=mode == "write")
            except BoundaryError as exc:
                return ToolResult.error(str(exc))
        plain = {k: v for k, v in arguments.items() if k not in self.paths}
        try:
            parsed = self.model.model_validate(plain)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return ToolResult.error(
                f"Invalid arguments for {self.__name__}: {where}: {first['msg']}"
            )
        kwargs.update({field: getattr(parsed, field) for field in type(parsed).model_fields})
        if self.context_param is not None:
            kwargs[self.context_param] = context
        result = self.func(**kwargs)
        return _run_awaitable(result) if inspect.isawaitable(result) else result


def _run_awaitable(awaitable: Any) -> Any:
    """Run a coroutine to completion on a fresh event loop (tool calls run in worker threads)."""
    import asyncio  # only for async tools: importing it costs every start-up 15 ms

    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())


def _tidy_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Drop pydantic's ``title`` noise so the schema the model sees stays small."""

    def walk(node: Any, in_properties: bool = False) -> Any:
        if isinstance(node, dict) and not in_properties:
            node = _collapse_optional(node)
        if isinstance(node, dict):
            return {
                key: walk(value, key == "properties")
                for key, value in node.items()
                if in_properties or key != "title"
            }
        if isinstance(node, list):
            return [walk(item) for item in node]
        return node

    tidy = walk(_inline_refs(schema))
    tidy.setdefault("properties", {})
    tidy["type"] = "object"
    return tidy  # type: ignore[no-any-return]


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Inline ``$ref``s to ``$defs`` (unless recursive): one self-contained schema."""
    defs = schema.get("$defs") or {}

    def resolve(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                name = ref.removeprefix("#/$defs/")
                if name in seen or name not in defs:
                    raise RecursionError(name)
                extra = {k: v for k, v in node.items() if k != "$ref"}
                return {**resolve(defs[name], (*seen, name)), **extra}
            return {k: resolve(v, seen) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [resolve(item, seen) for item in node]
        return node

    try:
        return resolve(schema, ())  # type: ignore[no-any-return]
    except RecursionError:
        return schema


def _collapse_optional(node: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [X, null]`` with ``default: null`` becomes ``X`` (small models read it better)."""
    options = node.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or node.get("default", 0) is not None:
        return node
    kept = [option for option in options if option != {"type": "null"}]
    if len(kept) != 1:
        return node
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
    return {**kept[0], **rest}


class ToolOptions(TypedDict, total=False):
    """The keyword options of :func:`tool` (each as :func:`tool_from_function` takes it)."""

    name: str | None
    description: str | None
    read_only: bool
    concurrency_safe: bool | None
    risk: Literal["low", "medium", "high"] | None
    timeout: float | None


def tool_from_function(
    func: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    read_only: bool = False,
    concurrency_safe: bool | None = None,
    risk: Literal["low", "medium", "high"] | None = None,
    timeout: float | None = None,
) -> Tool:
    """Build a :class:`Tool` from a typed function (what :func:`tool` does)."""
    signature = inspect.signature(func)
    hints = get_type_hints(func, include_extras=True)
    doc_description, doc_params = parse_docstring(func.__doc__)
    fields: dict[str, Any] = {}
    call_fields: dict[str, Any] = {}
    paths: dict[str, PathMode] = {}
    path_defaults: dict[str, Any] = {}
    context_param: str | None = None
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        if _is_context_param(param.name, annotation):
            context_param = param.name
            continue
        role = _path_role(annotation, func, param.name)
        base, text, field = _annotation_description(annotation)
        text = text or doc_params.get(param.name)
        if role is not None:
            paths[param.name] = role
            base = str | None if param.default is None else str
        default: Any = ... if param.default is param.empty else param.default
        if isinstance(default, Path):
            default = str(default)
        metadata: list[Any] = [field] if field is not None else []
        if text and not (field is not None and field.description):
            metadata.append(Field(description=text))
        annotated = Annotated[(base, *metadata)] if metadata else base  # type: ignore[valid-type]
        fields[param.name] = (annotated, default)
        if role is None:
            call_fields[param.name] = (annotated, default)
        elif default is not ...:
            path_defaults[param.name] = default
    lazy = ConfigDict(extra="ignore", defer_build=True)  # validators built at the first call
    call_model = create_model(f"{func.__name__}_call", __config__=lazy, **call_fields)
    schema = _input_schema(func, fields)
    text = description if description is not None else doc_description
    try:
        return Tool(
            name=name or func.__name__,
            description=text or (name or func.__name__).replace("_", " "),
            input_schema=schema,
            handler=_ToolFunction(func, call_model, paths, path_defaults, context_param),
            read_only=read_only,
            concurrency_safe=read_only if concurrency_safe is None else concurrency_safe,
            risk=risk or ("low" if read_only else "medium"),
            paths=paths,
            timeout=timeout,
        )
    except ValidationError as exc:
        why = error_line(exc, typed=False).removeprefix("name: ")
        raise ToolDefinitionError(f"@tool {func.__name__}: {why}", _defined_at(func)) from None


def _input_schema(func: Callable[..., Any], fields: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema of a tool's parameters: remembered, or built through pydantic."""
    key = schema_key(func, fields)
    if key is not None and (known := BUILT_SCHEMAS.get(key)) is not None:
        return json.loads(json.dumps(known))  # a copy: callers may change theirs
    config = ConfigDict(extra="ignore")
    model = create_model(f"{func.__name__}_arguments", __config__=config, **fields)
    schema = _tidy_schema(model.model_json_schema())
    if key is not None:
        BUILT_SCHEMAS[key] = json.loads(json.dumps(schema))
    return schema


def _defined_at(func: Callable[..., Any]) -> str:
    """``file:line`` of a function's definition (its decorator line), or ``""``."""
    code = getattr(inspect.unwrap(func), "__code__", None)
    return f"{code.co_filename}:{code.co_firstlineno}" if code is not None else ""


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(**options: Unpack[ToolOptions]) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None, /, **options: Unpack[ToolOptions]
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a :class:`Tool` (bare ``@tool`` or ``@tool(...)``).

    Options: ``name``, ``description`` (default: the docstring), ``read_only`` (allowed in plan
    mode), ``concurrency_safe`` (default: read_only), ``risk`` (``low``/``medium``/``high``),
    ``timeout`` (seconds before a hung call is answered with an error).
    """
    if func is not None:
        return tool_from_function(func, **options)
    return lambda inner: tool_from_function(inner, **options)


def coerce_result(result: Any) -> ToolResult:
    """A handler's return value as a :class:`ToolResult` (blocks kept, other data as JSON)."""
    if isinstance(result, ToolResult):
        return result
    if result is None:
        return ToolResult(content="(no output)")
    if isinstance(result, str):
        return ToolResult(content=result)
    if isinstance(result, BaseModel):
        return ToolResult(content=result.model_dump_json())
    if (
        isinstance(result, list)
        and result
        and all(
            isinstance(b, dict) and b.get("type") in ("text", "image", "image_url") for b in result
        )
    ):
        return ToolResult(content=result)
    try:
        return ToolResult(content=json.dumps(result, ensure_ascii=False, default=_json_default))
    except (TypeError, ValueError):
        return ToolResult(content=str(result))


def _json_default(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, (Path, set, frozenset, tuple)):
        return str(value) if isinstance(value, Path) else list(value)
    raise TypeError(f"not JSON-able: {type(value).__name__}")
