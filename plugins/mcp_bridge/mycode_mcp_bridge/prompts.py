"""MCP prompts as slash commands: ``/mcp__<server>__<prompt> [args]``, as Claude Code names them.

A server's prompts (``prompts/list``) are read when the session collects its slash commands,
after the servers started. The words after the command fill the prompt's arguments in order
(quote one that holds spaces; the last argument takes the rest of the line); a required one
left out is a usage line, not a request. The text of the messages the server returns
(``prompts/get``) is the prompt the model gets.
"""

from __future__ import annotations

import shlex
from typing import Any

from mycode_core.records import RunContext, SlashCommand, SlashResult
from mycode_mcp_bridge.naming import base_name
from mycode_mcp_bridge.results import render

MAX_PROMPTS = 200
"""Prompts read per server at the most."""


def prompt_commands(bridge: Any, context: RunContext) -> list[SlashCommand]:
    """The slash commands of the prompts of ``bridge``'s running servers."""
    from mycode_mcp_bridge.connection import ServerError

    bridge.wait()
    commands: list[SlashCommand] = []
    for name, connection in sorted(bridge.connections.items()):
        if connection.state != "ready" or not connection.offers("prompts"):
            continue
        try:
            prompts = bridge.request(name, _all_prompts, context)
        except ServerError as exc:
            bridge.report(f"prompts:{name}", f"MCP server '{name}': its prompts: {exc.message}")
            continue
        commands += [_command(bridge, name, prompt) for prompt in prompts]
    return commands


async def _all_prompts(session: Any) -> list[Any]:
    from mycode_mcp_bridge.connection import all_pages

    prompts, _more = await all_pages(session.list_prompts, "prompts", MAX_PROMPTS)
    return prompts


def _hint(arguments: list[Any]) -> str:
    return " ".join(f"<{a.name}>" if a.required else f"[{a.name}]" for a in arguments)


def _command(bridge: Any, server: str, prompt: Any) -> SlashCommand:
    arguments = list(prompt.arguments or [])
    name = base_name(server, prompt.name)

    def run(args: str, context: RunContext) -> SlashResult | str:
        values = _fill(arguments, args)
        missing = [a.name for a in arguments if a.required and a.name not in values]
        if missing:
            return SlashResult(  # a usage error: `mycode -p "/…"` exits 2, as a bad flag does
                output=f"usage: /{name} {_hint(arguments)} ({missing[0]} is needed)", exit_code=2
            )
        return _get(bridge, server, prompt.name, values, context)

    return SlashCommand(
        name=name,
        description=" ".join((prompt.description or prompt.title or "").split())
        or f"MCP prompt {prompt.name} of {server}",
        argument_hint=_hint(arguments),
        run=run,
    )


def _fill(arguments: list[Any], text: str) -> dict[str, str]:
    """The prompt's arguments from the words typed, in order; the last takes the rest."""
    try:
        words = shlex.split(text)
    except ValueError:  # an unbalanced quote: plain words
        words = text.split()
    if not arguments or not words:
        return {}
    count = len(arguments)
    words = [*words[: count - 1], " ".join(words[count - 1 :])] if len(words) > count else words
    return {a.name: word for a, word in zip(arguments, words, strict=False)}


def _get(
    bridge: Any, server: str, prompt: str, values: dict[str, str], context: RunContext
) -> SlashResult | str:
    from mycode_mcp_bridge.connection import ServerError

    try:
        result = bridge.request(
            server, lambda session: session.get_prompt(prompt, values or None), context
        )
    except ServerError as exc:
        return SlashResult(
            output=f"MCP server '{server}' could not give prompt {prompt}: {exc.message}",
            exit_code=1,  # no turn ran: `mycode -p "/…"` did not complete
        )
    blocks, _ = render({"content": [message.content for message in result.messages]})
    text = "\n\n".join(b["text"] for b in blocks if b["type"] == "text").strip()
    return text or SlashResult(output=f"MCP prompt {prompt} of '{server}' is empty", exit_code=1)
