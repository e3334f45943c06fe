"""``/init``: a prompt asking the agent to survey the workspace and write ``AGENTS.md``.

This is the one place mycode writes into the workspace, because the user asked for it; the
agent writes the file with ``write_file`` under the usual permission rules.
"""

from __future__ import annotations

INIT_PROMPT = """\
Survey this workspace and write an AGENTS.md file at its root for future coding agents.

1. Explore first, with read-only tools: the layout (glob), the README, the build and package
   files (pyproject.toml, package.json, Makefile, Cargo.toml, go.mod, ...), CI configuration,
   linters' configuration, and a few representative source and test files.
2. Then write AGENTS.md (with write_file; if it already exists, read it and improve it rather
   than starting over) with short sections:
   - Project: what it is, in two or three sentences.
   - Layout: the main folders and what lives in each.
   - Commands: how to install, build, run the tests (one test too), lint and type-check —
     exactly as this project does it; only commands you found evidence for.
   - Conventions: code style, naming, error handling, testing habits seen in the code.
   - Pitfalls: anything surprising a newcomer would trip on.
3. Keep it concise (under about 150 lines), concrete and true to what you saw; no guesses,
   no generic advice. Do not change any other file.
{extra}"""


def init_prompt(arguments: str) -> str:
    """The ``/init`` prompt; ``arguments`` are the user's extra wishes, if any."""
    extra = f"\nThe user adds: {arguments.strip()}\n" if arguments.strip() else ""
    return INIT_PROMPT.format(extra=extra)
