"""What a run costs and how full its context is (``result.cost_usd`` and ``result.context``)."""

from __future__ import annotations

from typing import Any

from mycode_core.pricing import cost_usd, price_for


class CostMeter:
    """Adds up the price of every model reply (the model may change within a session)."""

    def __init__(self, settings: Any) -> None:
        self.settings = settings
        self.cost: float | None = 0.0
        self.last_prompt_tokens = 0

    def add(self, usage: dict[str, int] | None) -> None:
        """Count one reply's usage at the price of the model in use now."""
        if not usage:
            return
        self.last_prompt_tokens = int(usage.get("input_tokens", 0) or 0)
        price = price_for(str(self.settings.model or ""), dict(self.settings.models or {}))
        spent = cost_usd(price, usage)
        if spent is None:
            self.cost = None
        elif self.cost is not None:
            self.cost += spent

    def total(self) -> float | None:
        """USD so far (None when a reply's model has no known price)."""
        if self.cost is None:
            return None
        if price_for(str(self.settings.model or ""), dict(self.settings.models or {})) is None:
            return None
        return round(self.cost, 6)

    def over_budget(self) -> str | None:
        """The stop message once the cost passes ``--max-budget-usd``, else None."""
        budget = getattr(self.settings, "max_budget_usd", None)
        if budget is None or self.cost is None or self.cost <= float(budget):
            return None
        return f"cost budget of ${float(budget):g} used up (${self.cost:.4f})"

    def context(self, window: int) -> dict[str, Any]:
        """``{window, used, percent}`` of the last request."""
        used = self.last_prompt_tokens
        percent = round(100.0 * used / window, 1) if window else None
        return {"window": window, "used": used, "percent": percent}
