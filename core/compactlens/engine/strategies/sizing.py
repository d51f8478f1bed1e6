"""A strategy configuration sized to another token budget (the post-mortem's "at the
agent's size", the inspector's lab configuration on a transcript it was not made for).

Every token threshold of the configuration (``tokens`` triggers and targets, children of
``all`` / ``any`` included, a ``token_budget`` stage's budget), through pipelines, is
scaled by one factor, so that its first ``tokens > n`` trigger (else its token target)
becomes the budget. Everything else (counts of messages, turns or groups, parameters
that are not token thresholds) is kept as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from compactlens.engine.triggers import Trigger

#: A token threshold scaled to the new budget.
Scale = Callable[[int], int]


def _exceed_tokens(trigger: Any) -> int | None:
    """The threshold of a ``tokens > n`` trigger (the first among ``all`` / ``any``)."""
    if not isinstance(trigger, Mapping):
        return None
    n = trigger.get("n")
    if trigger.get("op") == "exceed" and trigger.get("metric") == "tokens":
        return n if isinstance(n, int) and not isinstance(n, bool) else None
    if trigger.get("op") in ("all", "any"):
        children = trigger.get("children")
        for child in children if isinstance(children, list) else ():
            found = _exceed_tokens(child)
            if found is not None:
                return found
    return None


def _stages(config: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    """The configuration and every stage under it, depth first, in order."""
    yield config
    children = config.get("strategies")
    for child in children if isinstance(children, list) else ():
        if isinstance(child, Mapping):
            yield from _stages(child)


def _token_limit(target: Any) -> int | None:
    if not isinstance(target, Mapping):
        return None
    try:
        return Trigger.from_dict(dict(target)).token_limit
    except (TypeError, ValueError):
        return None


def reference_tokens(config: Mapping[str, Any]) -> int | None:
    """The token threshold a configuration is sized by: its first ``tokens > n`` trigger,
    else its token target (the pipeline's own, else the last stage's target or token
    budget); None when it has no token threshold."""
    stages = list(_stages(config))
    for stage in stages:
        found = _exceed_tokens(stage.get("trigger"))
        if found is not None:
            return found
    for stage in reversed(stages):
        budget = stage.get("token_budget")
        if stage.get("type") == "token_budget" and isinstance(budget, int):
            return budget
        found = _token_limit(stage.get("target"))
        if found is not None:
            return found
    return None


def scaled_trigger(trigger: Any, scale: Scale) -> Any:
    """A trigger (or target) dict with its ``tokens`` thresholds scaled (children too);
    anything else unchanged."""
    if not isinstance(trigger, Mapping):
        return trigger
    out = dict(trigger)
    n = out.get("n")
    if out.get("metric") == "tokens" and isinstance(n, int) and not isinstance(n, bool):
        out["n"] = scale(n)
    children = out.get("children")
    if isinstance(children, list):
        out["children"] = [scaled_trigger(c, scale) for c in children]
    return out


def scaled_config(config: Mapping[str, Any], scale: Scale) -> dict[str, Any]:
    """``config`` with every token threshold passed through ``scale`` (see the module)."""
    out = dict(config)
    for key in ("trigger", "target"):
        if key in out:
            out[key] = scaled_trigger(out[key], scale)
    budget = out.get("token_budget")
    if out.get("type") == "token_budget" and isinstance(budget, int):
        out["token_budget"] = scale(budget)
    children = out.get("strategies")
    if isinstance(children, list):
        out["strategies"] = [
            scaled_config(c, scale) if isinstance(c, Mapping) else c for c in children
        ]
    return out


def sized_config(config: Mapping[str, Any], budget: int) -> dict[str, Any]:
    """``config`` (a strategy configuration, as ``strategy_from_config`` takes it) sized to
    ``budget`` tokens: every token threshold scaled by ``budget / reference_tokens(config)``
    (at least 1), so its first ``tokens > n`` trigger becomes ``budget``. A configuration
    with no token threshold is returned as it is (a copy)."""
    budget = max(1, int(budget))
    reference = reference_tokens(config)
    if not reference:
        return dict(config)

    def scale(n: int) -> int:
        return max(1, round(n * budget / reference))

    return scaled_config(config, scale)


__all__ = ["reference_tokens", "scaled_config", "scaled_trigger", "sized_config"]
