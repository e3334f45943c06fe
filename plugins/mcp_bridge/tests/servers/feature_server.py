"""A stdio MCP server exercising every feature the bridge supports (used by the tests).

Usage: ``python feature_server.py [--name N] [--crash-on-start] [--hang-on-start]
[--slow-start SECONDS] [--marker FILE]``. ``--marker`` appends this process's pid to FILE at
start, so tests can check that no server process outlives the run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from typing import Literal


def _early_flags() -> argparse.Namespace:
    """Flags acted on before the (slow) ``mcp`` import, so tests never race it."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", default="features")
    parser.add_argument("--crash-on-start", action="store_true")
    parser.add_argument("--hang-on-start", action="store_true")
    parser.add_argument("--slow-start", type=float, default=0.0)
    parser.add_argument("--marker")
    parser.add_argument("--environ-to", metavar="FILE", help="write the environment as JSON")
    parser.add_argument("--crash-at-handshake-leaving-helper", metavar="PID_FILE")
    args = parser.parse_args()
    if args.marker:
        with open(args.marker, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
    if args.environ_to:
        with open(args.environ_to, "w", encoding="utf-8") as fh:
            json.dump(dict(os.environ), fh)
    print(f"{args.name}: starting", file=sys.stderr, flush=True)
    if args.crash_on_start:
        print("error: missing API token FOO_TOKEN", file=sys.stderr, flush=True)
        sys.exit(2)
    if args.hang_on_start:
        time.sleep(3600)
    if args.crash_at_handshake_leaving_helper:
        sys.stdin.readline()  # the client's initialize request
        # the helper inherits stdout, the pipe to the client, and keeps it open after we exit
        helper = subprocess.Popen(["sleep", "600"])
        with open(args.crash_at_handshake_leaving_helper, "w", encoding="utf-8") as fh:
            fh.write(f"{helper.pid}\n")
        print("fatal: crashed at the handshake", file=sys.stderr, flush=True)
        os._exit(5)
    return args


ARGS = _early_flags() if __name__ == "__main__" else None
WIRE = os.dup(1)
"""The pipe to the client: the SDK moves it off fd 1 (which then writes to stderr)."""

from mcp.server.mcpserver import Context, MCPServer  # noqa: E402
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402
from mcp.server.mcpserver.utilities.types import Image  # noqa: E402
from mcp_types import CallToolResult, ResourceLink, TextContent, ToolAnnotations  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402

# A 1x1 transparent PNG.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


class Limits(BaseModel):
    """Nested object in an input schema."""

    depth: int = Field(ge=1, le=5, description="how deep")
    tags: list[str] = Field(default_factory=list)


class Weather(BaseModel):
    """Structured output."""

    city: str
    celsius: float
    sky: Literal["clear", "cloudy"]


def build(name: str) -> MCPServer:
    """The server and its tools."""
    server = MCPServer(name, instructions=f"Call {name}'s peek before wipe.")

    @server.tool(description="Echo the text back.")
    def echo(text: str) -> str:
        return text

    @server.tool(description="Configure with a nested object and an enum.")
    def configure(limits: Limits, mode: Literal["fast", "safe"] = "safe") -> str:
        return f"mode={mode} depth={limits.depth} tags={','.join(limits.tags)}"

    @server.tool(
        description="Read something (read-only).",
        annotations=ToolAnnotations(read_only_hint=True),
    )
    def peek(key: str) -> str:
        return f"value of {key}"

    @server.tool(
        description="Delete everything (destructive).",
        annotations=ToolAnnotations(destructive_hint=True, read_only_hint=False),
    )
    def wipe(target: str) -> str:
        return f"wiped {target}"

    @server.tool(description="Structured weather.")
    def weather(city: str) -> Weather:
        return Weather(city=city, celsius=21.5, sky="clear")

    @server.tool(description="Only structured content, no text block.")
    def only_structured() -> CallToolResult:
        return CallToolResult(content=[], structured_content={"answer": 42, "ok": True})

    @server.tool(description="An image.", structured_output=False)
    def picture() -> list[object]:
        return [TextContent(type="text", text="here is a picture"), Image(data=PNG, format="png")]

    @server.tool(description="Resource links.", structured_output=False)
    def links() -> list[object]:
        return [
            TextContent(type="text", text="two links"),
            ResourceLink(
                type="resource_link",
                uri="file:///tmp/report.txt",
                name="report",
                mime_type="text/plain",
                description="the report",
            ),
            ResourceLink(type="resource_link", uri="https://example.com/x", name="x"),
        ]

    @server.resource(
        "notes://today", name="today", description="Today's notes", mime_type="text/plain"
    )
    def today() -> str:
        return "buy milk"

    @server.resource("notes://logo", name="logo", mime_type="image/png")
    def logo() -> bytes:
        return PNG

    @server.resource("notes://day/{day}", name="day", description="The notes of one day")
    def day(day: str) -> str:
        return f"notes of {day}"

    @server.prompt(description="Review a file for one kind of problem.")
    def review(file: str, focus: str = "bugs") -> str:
        return f"Review {file} for {focus}."

    @server.prompt(description="A prompt the server cannot give.")
    def broken(topic: str) -> str:
        raise ValueError(f"no notes about {topic}")

    @server.tool(description="Always fails.")
    def fail(reason: str = "bad input") -> str:
        raise ToolError(f"failed because {reason}")

    @server.tool(description="Reports progress.")
    async def slow_count(steps: int, ctx: Context) -> str:
        for i in range(1, steps + 1):
            await ctx.report_progress(i, steps, f"step {i}")
            await asyncio.sleep(0.01)
        return f"counted {steps}"

    @server.tool(description="Report progress every `every` seconds, answer after `seconds`.")
    async def busy(seconds: float, ctx: Context, every: float = 0.1) -> str:
        began, step = time.monotonic(), 0
        while time.monotonic() - began < seconds:
            step += 1
            await ctx.report_progress(step, None, f"still busy ({step})")
            await asyncio.sleep(every)
        return f"busy for {step} steps"

    @server.tool(description="Add a tool at run time (sends tools/list_changed).")
    async def grow(tool_name: str, ctx: Context) -> str:
        def dynamic(x: int = 1) -> str:
            return f"{tool_name} says {x}"

        server.add_tool(dynamic, name=tool_name, description=f"dynamic {tool_name}")
        await ctx.session.send_tool_list_changed()
        return f"added {tool_name}"

    @server.tool(description="Remove a tool at run time (sends tools/list_changed).")
    async def shrink(tool_name: str, ctx: Context) -> str:
        server.remove_tool(tool_name)
        await ctx.session.send_tool_list_changed()
        return f"removed {tool_name}"

    @server.tool(description="Crash the server process.")
    def crash() -> str:
        print("fatal: simulated crash", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool(description="Start a helper that keeps stdout open, then crash.")
    def crash_leaving_helper(pid_file: str) -> str:
        # The helper's stdout is the pipe to the client, so it stays open after we exit.
        helper = subprocess.Popen(["sleep", "600"], stdout=WIRE)
        with open(pid_file, "w", encoding="utf-8") as fh:
            fh.write(f"{helper.pid}\n")
        print("fatal: crashed, leaving a helper behind", file=sys.stderr, flush=True)
        os._exit(4)

    @server.tool(description="Block the whole server (never answers).")
    async def hang(seconds: float = 3600) -> str:
        print("hanging now", file=sys.stderr, flush=True)
        time.sleep(seconds)  # blocks the event loop on purpose
        return "woke up"

    @server.tool(description="Sleep without blocking, then answer.")
    async def nap(seconds: float) -> str:
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool(description="Return a lot of text.")
    def huge(chars: int) -> str:
        line = "0123456789" * 9 + "abcdefghi\n"
        return (line * (chars // len(line) + 1))[:chars]

    @server.tool(description="Write to stderr.")
    def noisy() -> str:
        print("noise on stderr " * 5, file=sys.stderr, flush=True)
        return "quiet on stdout"

    @server.tool(description="Write a line that is not JSON to stdout, then answer.")
    def stdout_junk() -> str:
        os.write(WIRE, b"debug: this line is not JSON-RPC\n")
        return "answered after junk"

    @server.tool(description="Write bytes that are not UTF-8 to stdout, then answer.")
    def stdout_binary() -> str:
        os.write(WIRE, b"\xff\xfe\x00 binary noise\n")
        # a well-formed message whose text is Latin-1, not UTF-8
        os.write(WIRE, b'{"jsonrpc":"2.0","method":"notifications/message",'
                       b'"params":{"level":"info","data":"caf\xe9"}}\n')  # fmt: skip
        return "answered after binary"

    @server.tool(description="Send log messages to the client.")
    async def chatter(ctx: Context) -> str:
        await ctx.info("indexing 3 files")
        await ctx.warning("cache is cold")
        return "chattered"

    @server.tool(description="Return an environment variable.")
    def getenv(var: str) -> str:
        return os.environ.get(var, "<unset>")

    @server.tool(description="Return the working directory.")
    def whereami() -> str:
        return os.getcwd()

    return server


def main() -> None:
    """Serve over stdio (after the early flags were handled)."""
    args = ARGS or _early_flags()
    if args.slow_start:
        time.sleep(args.slow_start)
    build(args.name).run("stdio")


if __name__ == "__main__":
    main()
