"""Checking each configuration layer before the merge: core keys by ``Settings``, a plugin's
table by its ``register_settings`` model (a bad value: one :class:`ConfigError` line); unknown
keys are not errors (another mycode version may know them) but get a did-you-mean warning."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ValidationError

from mycode_core.errors import SetupError
from mycode_core.errors import error_line as exception_line

KNOWN_ELSEWHERE = frozenset({  # the tables and keys of plugins SPEC.md documents, even uninstalled
    "sandbox", "subagents", "mcp", "plugin_dirs", "skills", "memory", "stagnation", "batch",
    "context_engine", "claude_compat", "trust", "hooks",
})  # fmt: skip


class ConfigError(Exception):
    """A configuration problem; the message names what to fix (exit code 2)."""


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_CLASS = r"a valid dictionary(?: or instance of \w+)?"  # pydantic's words for a TOML table
# a ``loc`` part pydantic adds for one member of a union (``sandbox.bool``): not a key
_TYPE_TAG = re.compile(r"(bool|str|int|float|none|function-\w+\[.*\]|[a-z_-]+\[.*\])")


def _key(error: Mapping[str, Any], prefix: str) -> str:
    loc = [
        str(p) for p in error.get("loc", ()) if not (isinstance(p, str) and _TYPE_TAG.fullmatch(p))
    ]
    return ".".join([prefix, *loc] if prefix else loc) or "(top level)"


def error_line(
    source: str,
    error: Mapping[str, Any],
    prefix: str = "",
    others: Iterable[Mapping[str, Any]] = (),
) -> str:
    """One readable line for a pydantic error of ``source``, in the user's key names; ``others``
    (the other errors) add the accepted kinds when the value fits none of a union's."""
    key = _key(error, prefix)
    message = str(error.get("msg", "invalid value")).removeprefix("Value error, ")
    message = re.sub(_CLASS, "a table", message)
    alternatives = [
        re.sub(_CLASS, "a table", str(other.get("msg", ""))).removeprefix("Input should be ")
        for other in others
        if other is not error and _key(other, prefix) == key
    ]
    if alternatives and message.startswith("Input should be "):
        kinds = [
            m.removeprefix("Input should be ").removesuffix(", unable to interpret input")
            for m in (message, *alternatives)
        ]
        message = "Input should be " + ", or ".join(dict.fromkeys(kinds))
    shown = "input" in error and error.get("type") != "value_error"
    got = f" (got {_describe(error['input'])})" if shown else ""
    return f"{source}: {key}: {message}{got}"


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a candidate is close to ``name``, else ``""``."""
    close = difflib.get_close_matches(name, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_keys(
    data: Mapping[str, Any], model: type[BaseModel], source: str, table: str
) -> list[str]:
    known = set(model.model_fields)
    notes = []
    for key in data:
        if key not in known:
            hint = did_you_mean(key, known)
            if model.model_config.get("extra") == "allow" and not hint:
                continue  # a table open to extensions (team policies): only likely typos
            notes.append(f"{source}: unknown setting [{table}] {key}{hint}; it is ignored")
    return notes


def check_layer(
    source: str,
    data: Mapping[str, Any],
    settings_model: type[BaseModel],
    tables: Mapping[str, type[BaseModel]],
    other_names: Iterable[str] = (),
) -> list[str]:
    """Validate one layer's raw data from ``source``; return its warnings, raise
    :class:`ConfigError`. ``other_names`` (installed plugins) are not unknown."""
    core_fields = settings_model.model_fields
    known_names = set(core_fields) | set(tables) | KNOWN_ELSEWHERE | set(other_names)
    notes: list[str] = []
    core: dict[str, Any] = {}
    for key, value in data.items():
        if key in core_fields:
            core[key] = value
        elif key in tables:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{source}: [{key}] must be a table (got {_describe(value)})")
            try:
                tables[key].model_validate(dict(value))
            except ValidationError as exc:
                raise ConfigError(error_line(source, exc.errors()[0], key, exc.errors())) from None
            notes += _unknown_keys(value, tables[key], source, key)
        elif key not in known_names:
            hint = did_you_mean(key, known_names)
            notes.append(f"{source}: unknown setting {key!r}{hint}; it is ignored")
    try:
        settings_model.model_validate(core)
    except ValidationError as exc:
        raise ConfigError(error_line(source, exc.errors()[0], others=exc.errors())) from None
    for key, value in core.items():
        model = core_fields[key].annotation
        if isinstance(value, Mapping) and isinstance(model, type) and issubclass(model, BaseModel):
            notes += _unknown_keys(value, model, source, key)
    return notes


def settings_tables(pm: Any, warn: Any = None, failures: Any = None) -> dict[str, type[BaseModel]]:
    """The plugins' ``register_settings`` tables by name; ``warn`` gets each problem line,
    ``failures`` (a list) also those of plugins that raised (strict makes them fatal)."""
    tables: dict[str, type[BaseModel]] = {}

    def register(name: str, model: type[BaseModel]) -> None:
        if isinstance(model, type) and issubclass(model, BaseModel):
            tables[str(name)] = model
        elif warn is not None:
            warn(f"register_settings: {name!r} needs a pydantic model class; ignored")

    try:
        pm.hook.register_settings(register=register)
    except BaseException as exc:  # noqa: BLE001 - a broken plugin must not stop every run
        if isinstance(exc, KeyboardInterrupt | SetupError):
            raise
        tables.clear()  # again, one plugin at a time: the others' tables still count
        impls = pm.hook.register_settings.get_hookimpls()
        for impl in reversed(impls):
            others = [other.plugin for other in impls if other is not impl]
            try:
                pm.subset_hook_caller("register_settings", others)(register=register)
            except BaseException as failure:  # noqa: BLE001 - named, then skipped
                if isinstance(failure, KeyboardInterrupt | SetupError):
                    raise
                line = (
                    f"plugin {impl.plugin_name!r} failed in register_settings: "
                    f"{exception_line(failure)}"
                )
                if warn is not None:
                    warn(line)
                if failures is not None:
                    failures.append(line)
    return tables
