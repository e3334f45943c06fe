"""Interactive ``/model [NAME]``: show the model in use, or switch it for the rest of the session.

The new model is built by the same provider lookup as at start-up (``--model``); a name no
provider can build leaves the current model in place and says why in one line. Leaving a model
that takes images for one not known to, with images already in the conversation, the line says
they stay (their server may refuse them). The cost meter
prices each reply at the model in use when it arrived, so a switch keeps the run's cost right.
"""

from __future__ import annotations

from typing import Any


def switch_model(runner: Any, name: str, notice: Any = None) -> str:
    """Switch ``runner`` to model ``name`` (no name: report the current one); the line to show."""
    from mycode_core.errors import SetupError
    from mycode_core.pricing import accepts_images
    from mycode_core.runtime.setup import make_model

    current, took_images = str(runner.settings.model or ""), accepts_images(runner.settings)
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
    line = f"model: {name} (was {current}; for the rest of this session)"
    if took_images and not accepts_images(runner.settings) and _holds_images(runner):
        line += (
            f"; {name} is not known to take images and earlier images stay in this "
            "conversation: if its server refuses them, /clear starts anew"
        )
    return line


def _holds_images(runner: Any) -> bool:
    """Whether the conversation so far sends an image (a prompt's or a tool result's)."""
    history = getattr(runner, "history", None)
    return any(
        isinstance(message.get("content"), list)
        and any(isinstance(p, dict) and p.get("type") == "image_url" for p in message["content"])
        for message in (history.messages() if history is not None else ())
    )
