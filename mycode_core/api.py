"""The facade for the few runtime and CLI services a plugin legitimately needs.

Plugins import only the core's public surface: the package root, ``records``, ``events``,
``hookspecs``, ``paths``, ``config``, ``trust``, ``tokens``, ``safegit``, ``project_files``,
``sessions``, ``testing`` and this module (import-linter holds the built-in plugins to it).
Names resolve lazily (importing this module imports nothing else).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_INLINE = "mycode_core.cli.inline_commands"
NAMES: dict[str, tuple[str, str]] = {  # name → (the module defining it, what it is for)
    "AgentRequest": ("mycode_core.agents", "what a plugin asks of ``context.spawn_agent``"),
    "AgentOutcome": ("mycode_core.agents", "what ``context.spawn_agent`` returns"),
    "SetupError": ("mycode_core.errors", "raise it to refuse a run (exit code 2)"),
    "error_line": ("mycode_core.errors", "an exception as one readable line"),
    "ModelError": ("mycode_core.providers.base", "a failed model call (``retryable`` or not)"),
    "ContextOverflow": ("mycode_core.runtime.context", "the view cannot be made to fit"),
    "mode_layer": ("mycode_core.runtime.tools", "the config layer that set the permission mode"),
    "mycode_rule": ("mycode_core.claude_rules", "a Claude Code rule in mycode's words"),
    "split_rules": ("mycode_core.claude_rules", "a rule list split outside parentheses"),
    "mycode_tool_name": ("mycode_core.claude_rules", "the tool a Claude Code name stands for"),
    "fill_arguments": ("mycode_core.cli.slash_args", "arguments filled into a command's text"),
    "run_inline_commands": (_INLINE, "a text's ``!`cmd``` run and replaced by their output"),
    "InlineCommandRefused": (_INLINE, "an inline command that may not run"),
    "INLINE_CALL_PREFIX": (_INLINE, "the call ids of inline commands"),
    "command_output": (_INLINE, "what a ``run_command`` printed"),
    "DEFAULT_VALIDATORS": (
        "mycode_core.runtime.observation",
        "the command patterns that count as validation (test, lint, types, build)",
    ),
    "SECRET_ENV": ("mycode_core.secret_env", "name patterns of the environment's secrets"),
    "is_secret_name": ("mycode_core.secret_env", "whether an environment variable is a secret"),
    "scrub_env": ("mycode_core.secret_env", "an environment without its API keys and secrets"),
    "NOISE_DIRS": ("mycode_core.workspace", "folder names a walk of the workspace skips"),
    "BUILD_DIRS": ("mycode_core.workspace", "folder names of build output"),
    "safeopen": ("mycode_core.safeopen", "opening files following no symlink (``open_read``)"),
    "replace_atomically": (
        "mycode_core.safeopen",
        "write a file by renaming a temporary one over it, following no symlink",
    ),
    "get_plugin_manager": ("mycode_core.plugins", "the plugin manager a run would use"),
    "allowed_entry_points": ("mycode_core.plugins", "the ``mycode`` entry points allowed here"),
    "core_report": ("mycode_core.cli.diagnostics", "the core's part of ``mycode doctor``"),
    "local_servers": (
        "mycode_core.cli.local_models",
        "the local model servers that answer ``/v1/models`` (300 ms in all)",
    ),
    "rewound": ("mycode_core.cli.rewind", "a transcript's events without the turns rewound"),
    "neutralise": ("mycode_core.cli.output", "text with its control characters shown as ``^[``"),
    "main": ("mycode_core.cli.main", "the ``mycode`` command line (batch's warm start runs it)"),
    "watch_group": ("mycode_core.cli.lifeline", "kill a process group should mycode be SIGKILLed"),
    "unwatch_group": ("mycode_core.cli.lifeline", "that group has been dealt with"),
    "plugin_dir_option": (
        "mycode_core.cli.options",
        "the ``--plugin-dir`` option of a plugin's command, as a run has it",
    ),
}

__all__ = sorted(NAMES)

if TYPE_CHECKING:
    from mycode_core import safeopen as safeopen
    from mycode_core.agents import AgentOutcome as AgentOutcome
    from mycode_core.agents import AgentRequest as AgentRequest
    from mycode_core.claude_rules import mycode_rule as mycode_rule
    from mycode_core.claude_rules import mycode_tool_name as mycode_tool_name
    from mycode_core.claude_rules import split_rules as split_rules
    from mycode_core.cli.diagnostics import core_report as core_report
    from mycode_core.cli.inline_commands import INLINE_CALL_PREFIX as INLINE_CALL_PREFIX
    from mycode_core.cli.inline_commands import InlineCommandRefused as InlineCommandRefused
    from mycode_core.cli.inline_commands import command_output as command_output
    from mycode_core.cli.inline_commands import run_inline_commands as run_inline_commands
    from mycode_core.cli.lifeline import unwatch_group as unwatch_group
    from mycode_core.cli.lifeline import watch_group as watch_group
    from mycode_core.cli.local_models import local_servers as local_servers
    from mycode_core.cli.main import main as main
    from mycode_core.cli.options import plugin_dir_option as plugin_dir_option
    from mycode_core.cli.output import neutralise as neutralise
    from mycode_core.cli.rewind import rewound as rewound
    from mycode_core.cli.slash_args import fill_arguments as fill_arguments
    from mycode_core.errors import SetupError as SetupError
    from mycode_core.errors import error_line as error_line
    from mycode_core.plugins import allowed_entry_points as allowed_entry_points
    from mycode_core.plugins import get_plugin_manager as get_plugin_manager
    from mycode_core.providers.base import ModelError as ModelError
    from mycode_core.runtime.context import ContextOverflow as ContextOverflow
    from mycode_core.runtime.observation import DEFAULT_VALIDATORS as DEFAULT_VALIDATORS
    from mycode_core.runtime.tools import mode_layer as mode_layer
    from mycode_core.safeopen import replace_atomically as replace_atomically
    from mycode_core.secret_env import SECRET_ENV as SECRET_ENV
    from mycode_core.secret_env import is_secret_name as is_secret_name
    from mycode_core.secret_env import scrub_env as scrub_env
    from mycode_core.workspace import BUILD_DIRS as BUILD_DIRS
    from mycode_core.workspace import NOISE_DIRS as NOISE_DIRS


def __getattr__(name: str) -> Any:
    entry = NAMES.get(name)
    if entry is None:
        raise AttributeError(f"module 'mycode_core.api' has no attribute {name!r}")
    module = importlib.import_module(entry[0])
    if entry[0] == f"mycode_core.{name}":  # the name is a module of the core itself
        return module
    return getattr(module, name)
