"""A plugin command's ``allowed-tools`` as permission grants for the command's own turn.

Claude Code lets a command pre-approve what its ``allowed-tools`` names while it runs
(``Bash(git add:*)``: ``git add`` without a question). Here each entry becomes a mycode rule
(``run_command(git add:*)``) added to the run's session grants when the command's prompt starts
its turn, and taken back when the next prompt comes. They are allow rules like any other: the
user's deny and ask rules still win and the command sandbox still applies. Only plugin folders'
commands carry them, and those are folders the user named or trusted.
"""

from __future__ import annotations

from mycode_core.api import mycode_rule


def as_rules(allowed: list[str]) -> list[str]:
    """Claude Code's ``allowed-tools`` entries as mycode permission rules (``Bash(git:*)`` →
    ``run_command(git:*)``, ``Read`` → ``read_file``), read as the core reads Claude Code's
    settings rules; an entry that is no rule is left out."""
    return [rule for rule in (mycode_rule(entry) for entry in allowed) if rule is not None]


class CommandGrants:
    """The grants of the command whose prompt is about to run, then of the running one."""

    def __init__(self) -> None:
        self.pending: tuple[str, list[str]] | None = None
        self.active: list[str] = []

    def expect(self, prompt: str, rules: list[str]) -> None:
        """The command's prompt is ``prompt``; grant ``rules`` for the turn it starts."""
        self.pending = (prompt, rules)

    def on_prompt(self, prompts: str, grants: set[str]) -> list[str]:
        """A user turn starts: take the previous command's grants back, then add the pending
        command's when the turn runs its prompt — ``prompts`` is the run's prompts so far
        (``context.prompt``), which ends with this turn's as sent: the hooks see the line the
        user typed (``/stage``), the grant goes with the command's text. Returns the rules
        added."""
        for rule in self.active:
            grants.discard(rule)
        self.active = []
        pending, self.pending = self.pending, None
        if pending is not None and prompts.endswith(pending[0]):
            self.active = [rule for rule in dict.fromkeys(pending[1]) if rule not in grants]
            grants.update(self.active)
        return self.active
