"""mycode's subagents: the ``delegate_task`` tool and the agent profiles it runs.

* :mod:`.profiles` — Markdown profiles with front matter (``name``, ``description``,
  ``tools``, ``model``; the body is the child's instructions), in Claude Code's format, from
  ``.mycode/agents/``, ``.claude/agents/``, ``$MYCODE_HOME/agents/`` and packages
  (hook ``register_agent_profiles``), plus the built-ins ``explore`` and ``general``.
* :mod:`.settings` — the ``[subagents]`` config table.
* :mod:`.delegate` — the tool: picks the profile, runs the child through
  ``context.spawn_agent`` (:mod:`mycode_core.agents`) and shapes its result.
* :mod:`.plugin` — the hook implementations (entry point ``subagents``).
"""

from __future__ import annotations

__all__: list[str] = []
