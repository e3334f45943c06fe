"""Interactive ``/model [NAME]``: show the model in use, or switch it for the rest of the session.

The new model is built by the same provider lookup as at start-up (``--model``); a name no
provider can build leaves the current model in place and says why in one line. The cost meter
prices each reply at the model in use when it arrived, so a switch keeps the run's cost right.
"""

from __future__ import annotations

from typing import Any


def switch_model(runner: Any, name: str, notice: Any = None) -> str:
    """Switch ``runner`` to model ``name`` (no name: report the current one); the line to show."""
    from mycode_core.errors import SetupError
    from mycode_core.runtime.setup import make_model

    current = str(runner.settings.model or "")
    if not name:
        return f"model: {current} (switch with /model NAME)"
    if name == current:
        return f"model: {current} (already in use)"
    runner.settings.model = name
    try:
        model = make_model(runner.pm, runner.settings, notice or (lambda message: None))
    except SetupError as exc:
        runner.settings.model = current
        return f"cannot switch to {name}: {exc} (still {current})"
    runner.model = model
    caller = getattr(runner, "caller", None)
    if caller is not None:
        caller.model = model
    return f"model: {name} (was {current}; for the rest of this session)"
