"""The tool-authoring API: ``@tool`` makes a typed function a :class:`~mycode_core.records.Tool`
(schema from type hints and docstring; ``ReadPath``/``WritePath`` resolved in the workspace; a
``context`` parameter gets the run's context; sync or async)."""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import re
import types
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import (
    Annotated,
    Any,
    Literal,
    TypedDict,
    Union,
    Unpack,
    get_args,
    get_origin,
    get_type_hints,
    overload,
)

from pydantic import VERSION as PYDANTIC_VERSION
from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model
from pydantic.fields import FieldInfo

from mycode_core.errors import ToolDefinitionError, error_line
from mycode_core.records import PathAccess, RunContext, Tool, ToolResult

# input schemas built, by :func:`schema_key`; the CLI keeps them in MYCODE_HOME across start-ups
BUILT_SCHEMAS: dict[str, dict[str, Any]] = {}


@dataclass(frozen=True)
class PathRole:
    """Marker inside ``Annotated`` telling the core a parameter is a path to resolve."""

    mode: PathAccess


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


def _path_role(annotation: Any, func: Callable[..., Any], name: str) -> PathAccess | None:
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
    base, *extras = get_args(annotation)  # never Annotated itself: Python flattens nested ones
    description = next((e for e in extras if isinstance(e, str)), None)
    field = next((e for e in extras if isinstance(e, FieldInfo)), None)
    if kept := [e for e in extras if not isinstance(e, (str, FieldInfo, PathRole))]:
        base = Annotated[(base, *kept)]  # type: ignore[valid-type]
    return base, description, field


def _handler(
    func: Callable[..., Any],
    model: type[BaseModel],
    paths: dict[str, PathAccess],
    path_defaults: dict[str, Any],
    context_param: str | None,
) -> Callable[[dict[str, Any], Any], Any]:
    """Calls ``func`` with validated arguments, resolved paths and the context."""

    @functools.wraps(func)
    def handler(arguments: dict[str, Any], context: Any) -> Any:
        from mycode_core.paths import BoundaryError, bind_argument

        kwargs: dict[str, Any] = {}
        for name, mode in paths.items():
            value = arguments.get(name, path_defaults.get(name))
            if value is not None and not isinstance(value, Path):  # else resolved by the core
                try:  # called directly, not through the orchestrator: the same boundary
                    value = bind_argument(value, context, write=mode == "write")
                except BoundaryError as exc:
                    return ToolResult.error(str(exc))
            kwargs[name] = value
        try:
            parsed = model.model_validate({k: v for k, v in arguments.items() if k not in paths})
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            return ToolResult.error(
                f"Invalid arguments for {func.__name__}: {where}: {first['msg']}"
            )
        kwargs.update({field: getattr(parsed, field) for field in type(parsed).model_fields})
        if context_param is not None:
            kwargs[context_param] = context
        result = func(**kwargs)
        if not inspect.isawaitable(result):
            return result
        import asyncio  # only for async tools: importing it costs every start-up 15 ms

        async def wait() -> Any:  # on a fresh event loop: tool calls run in worker threads
            return await result

        return asyncio.run(wait())

    return handler


def _tidy_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema the model sees, small and self-contained: ``$ref``s inlined (unless recursive),
    ``anyOf: [X, null]`` with ``default: null`` as ``X``, no pydantic ``title``s."""

    def walk(node: Any, defs: Any, seen: tuple[str, ...], in_properties: bool = False) -> Any:
        if isinstance(node, list):
            return [walk(item, defs, seen) for item in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if defs is not None and isinstance(ref, str) and ref.startswith("#/$defs/"):
            name = ref.removeprefix("#/$defs/")
            if name in seen or name not in defs:
                raise RecursionError(name)
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return walk({**defs[name], **extra}, defs, (*seen, name), in_properties)
        options = node.get("anyOf")
        if not in_properties and isinstance(options, list) and node.get("default", 0) is None:
            kept = [option for option in options if option != {"type": "null"}]
            if len(options) == 2 and len(kept) == 1:
                rest = {k: v for k, v in node.items() if k not in ("anyOf", "default")}
                return walk({**kept[0], **rest}, defs, seen)
        return {
            key: walk(value, defs, seen, key == "properties")
            for key, value in node.items()
            if (in_properties or key != "title") and (defs is None or key != "$defs")
        }

    try:
        tidy = walk(schema, schema.get("$defs") or {}, ())
    except RecursionError:
        tidy = walk(schema, None, ())
    tidy.setdefault("properties", {})
    tidy["type"] = "object"
    return tidy  # type: ignore[no-any-return]


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
    paths: dict[str, PathAccess] = {}
    context_param: str | None = None
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        if annotation is RunContext or (param.name == "context" and annotation is Any):
            context_param = param.name  # typed RunContext, or untyped and called context
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
    call_fields = {key: value for key, value in fields.items() if key not in paths}
    path_defaults = {key: fields[key][1] for key in paths if fields[key][1] is not ...}
    lazy = ConfigDict(extra="ignore", defer_build=True)  # validators built at the first call
    call_model = create_model(f"{func.__name__}_call", __config__=lazy, **call_fields)
    text = description if description is not None else doc_description
    try:
        return Tool(
            name=name or func.__name__,
            description=text or (name or func.__name__).replace("_", " "),
            input_schema=_input_schema(func, fields),
            handler=_handler(func, call_model, paths, path_defaults, context_param),
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


def schema_key(func: Callable[..., Any], fields: dict[str, Any]) -> str | None:
    """A key for all the schema of ``fields`` (name → (annotation, default)) is made of, or
    ``None`` when a ``repr`` would not show it all (a model, an enum, a custom class)."""
    if not all(_plain(annotation) for annotation, _ in fields.values()):
        return None
    parts = [
        (name, repr(annotation), repr(default)) for name, (annotation, default) in fields.items()
    ]
    text = repr((func.__module__, func.__qualname__, PYDANTIC_VERSION, parts))
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()


_PLAIN_TYPES = (str, int, float, bool, bytes, type(None))
_PLAIN_ORIGINS = (list, dict, tuple, set, frozenset, types.UnionType)


def _plain(annotation: Any) -> bool:
    """Whether ``repr(annotation)`` names all that its schema depends on."""
    if annotation is Any or annotation in _PLAIN_TYPES:
        return True
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal:
        return all(isinstance(arg, _PLAIN_TYPES) for arg in args)
    if origin is Annotated:
        return _plain(args[0]) and all(_plain_metadata(extra) for extra in args[1:])
    if origin in _PLAIN_ORIGINS or origin is Union:
        return all(arg is Ellipsis or _plain(arg) for arg in args)
    return False


def _plain_metadata(extra: Any) -> bool:
    if isinstance(extra, str):
        return True
    if isinstance(extra, FieldInfo):
        return not callable(extra.json_schema_extra)
    kind = type(extra)
    if kind.__module__ == "pydantic.json_schema" and kind.__name__ == "WithJsonSchema":
        return isinstance(getattr(extra, "json_schema", None), dict)  # a dataclass: full repr
    return kind.__module__ == "annotated_types"  # constraints: dataclasses, full repr


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
