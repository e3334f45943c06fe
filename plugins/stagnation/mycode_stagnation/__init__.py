"""mycode's default stagnation policy: notice when the agent goes round in circles.

The default ``stagnation_verdict`` policy, loaded by default (entry point ``stagnation``; switch it
off with ``MYCODE_DISABLE_PLUGINS=stagnation`` or ``[stagnation] enabled = false``). It is marked
``trylast``, so a team's own policy (any other plugin implementing ``stagnation_verdict``) is
asked first and replaces it by returning a verdict; returning ``None`` hands the decision back.

Modules: :mod:`.policy` (the patterns and the verdicts), :mod:`.settings` (the ``[stagnation]``
table the core validates).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mycode_core import hookimpl

if TYPE_CHECKING:
    from mycode_core.records import Observation, RunContext, StagnationVerdict

__all__ = ["register_settings", "stagnation_verdict"]


@hookimpl(trylast=True)
def stagnation_verdict(
    observations: list[Observation], context: RunContext
) -> StagnationVerdict | None:
    """Guide once per episode of repetition, stop if it goes on (see :mod:`.policy`)."""
    from mycode_stagnation.policy import verdict

    return verdict(observations, context)


@hookimpl
def register_settings(register: Callable[[str, type], None]) -> None:
    """Declare the ``[stagnation]`` config table so the core validates it."""
    from mycode_stagnation.settings import StagnationSettings

    register("stagnation", StagnationSettings)
