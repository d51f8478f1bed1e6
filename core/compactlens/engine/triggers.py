"""Triggers and targets: the one predicate type of compactlens.

A :class:`Trigger` is a value evaluated against any object with the :class:`Metrics`
(a plan during a run, or a session's request, :class:`compactlens.session.TriggerContext`).
A trigger says when a strategy (or a session) starts; a target says when it may stop (by
default the negation of its trigger). All comparisons are strict:
``tokens_exceed(1000)`` is false at exactly 1000 tokens. :func:`cache_likely_cold` looks at
the prompt cache's age, which only a session request knows (a plan has no cache age, so
there it is always false).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from compactlens.model.errors import ConfigError
from compactlens.model.validation import check_int


class Metrics(Protocol):
    """What a trigger may look at. Every value is O(1) to read."""

    @property
    def tokens(self) -> int: ...
    @property
    def messages(self) -> int: ...
    @property
    def groups(self) -> int: ...
    @property
    def turns(self) -> int: ...
    @property
    def tool_call_groups(self) -> int: ...


_METRICS = ("tokens", "messages", "turns", "groups")


def _threshold(value: object, name: str) -> int:
    return check_int(f"{name} threshold", value)


def _cache_cold(m: Metrics, retention_ms: int) -> bool:
    """A known cache age at least the retention window (``retention_ms``, else the metrics')."""
    retention = retention_ms or getattr(m, "cache_retention_ms", None)
    age = getattr(m, "cache_age_ms", None)
    if retention is None or age is None:
        return False
    if isinstance(age, bool) or not isinstance(age, int | float) or not math.isfinite(age):
        return False
    return bool(age >= retention)


@dataclass(frozen=True, slots=True)
class Trigger:
    """A predicate over :class:`Metrics`.

    ``op`` is one of ``exceed`` / ``below`` / ``at_most`` / ``at_least`` (with ``metric``
    and ``n``), ``has_tool_calls``, ``always``, ``never``, ``cache_cold`` (``n`` the
    retention window in ms, 0 for the one the metrics know), ``all``, ``any`` or ``not``
    (with ``children``). Build them with the functions of this module.
    """

    op: str
    metric: str = ""
    n: int = 0
    children: tuple[Trigger, ...] = ()

    def __call__(self, m: Metrics) -> bool:
        op = self.op
        if op == "exceed":
            return bool(getattr(m, self.metric) > self.n)
        if op == "below":
            return bool(getattr(m, self.metric) < self.n)
        if op == "at_most":
            return bool(getattr(m, self.metric) <= self.n)
        if op == "at_least":
            return bool(getattr(m, self.metric) >= self.n)
        if op == "has_tool_calls":
            return m.tool_call_groups > 0
        if op == "cache_cold":
            return _cache_cold(m, self.n)
        if op == "always":
            return True
        if op == "never":
            return False
        if op == "all":
            return all(c(m) for c in self.children)
        if op == "any":
            return any(c(m) for c in self.children)
        if op == "not":
            return not self.children[0](m)
        raise ConfigError(f"unknown trigger op {op!r}")

    def negate(self) -> Trigger:
        """The logical negation, simplified where it has a direct form."""
        flips = {"exceed": "at_most", "at_most": "exceed", "below": "at_least", "at_least": "below"}
        if self.op in flips:
            return Trigger(flips[self.op], self.metric, self.n)
        if self.op == "always":
            return NEVER
        if self.op == "never":
            return ALWAYS
        if self.op == "not":
            return self.children[0]
        return Trigger("not", children=(self,))

    @property
    def token_limit(self) -> int | None:
        """For a pure token comparison, the largest token count that satisfies it (else None)."""
        if self.metric == "tokens":
            if self.op == "at_most":
                return self.n
            if self.op == "below":
                return self.n - 1
        if self.op == "all":
            limits = [c.token_limit for c in self.children if c.token_limit is not None]
            return min(limits) if limits else None
        return None

    def describe(self) -> str:
        """A short human description, for example ``tokens > 32000``."""
        symbols = {"exceed": ">", "below": "<", "at_most": "<=", "at_least": ">="}
        if self.op in symbols:
            return f"{self.metric} {symbols[self.op]} {self.n}"
        if self.op in ("has_tool_calls", "always", "never"):
            return self.op
        if self.op == "cache_cold":
            return f"cache age >= {f'{self.n} ms' if self.n else 'known retention'}"
        if self.op == "not":
            return f"not ({self.children[0].describe()})"
        joiner = " and " if self.op == "all" else " or "
        if not self.children:
            return "always" if self.op == "all" else "never"
        return "(" + joiner.join(c.describe() for c in self.children) + ")"

    def values(self, m: Metrics) -> dict[str, int]:
        """The metric values this trigger looks at, for event records."""
        out: dict[str, int] = {}
        if self.metric:
            out[self.metric] = int(getattr(m, self.metric))
        if self.op == "has_tool_calls":
            out["tool_call_groups"] = m.tool_call_groups
        age = getattr(m, "cache_age_ms", None) if self.op == "cache_cold" else None
        if isinstance(age, int | float) and not isinstance(age, bool) and math.isfinite(age):
            out["cache_age_ms"] = int(age)
        for c in self.children:
            out.update(c.values(m))
        return out

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op}
        if self.metric:
            out["metric"] = self.metric
            out["n"] = self.n
        if self.op == "cache_cold" and self.n:
            out["retention_ms"] = self.n
        if self.children or self.op in ("all", "any"):
            out["children"] = [c.to_dict() for c in self.children]
        return out

    @classmethod
    def from_dict(cls, data: Any) -> Trigger:
        """Rebuild a trigger from :meth:`to_dict` output (validating thresholds)."""
        if not isinstance(data, dict) or "op" not in data:
            raise ConfigError(f"a trigger must be an object with 'op', got {data!r}")
        op = data["op"]
        if op in ("exceed", "below", "at_most", "at_least"):
            metric = data.get("metric")
            if metric not in _METRICS:
                raise ConfigError(f"unknown trigger metric {metric!r}; expected one of {_METRICS}")
            return cls(op, metric, _threshold(data.get("n"), metric))
        if op in ("has_tool_calls", "always", "never"):
            return cls(op)
        if op == "cache_cold":
            retention = data.get("retention_ms")
            return cache_likely_cold(None if retention is None else retention)
        if op in ("all", "any", "not"):
            raw = data.get("children", [])
            if not isinstance(raw, list | tuple):
                raise ConfigError(f"'{op}' children must be a list of triggers, got {raw!r}")
            children = tuple(cls.from_dict(c) for c in raw)
            if op == "not" and len(children) != 1:
                raise ConfigError("a 'not' trigger needs exactly one child")
            return cls(op, children=children)
        raise ConfigError(f"unknown trigger op {op!r}")


ALWAYS = Trigger("always")
NEVER = Trigger("never")
always = ALWAYS
never = NEVER


def tokens_exceed(n: int) -> Trigger:
    """True when included tokens are strictly greater than ``n``."""
    return Trigger("exceed", "tokens", _threshold(n, "tokens"))


def tokens_below(n: int) -> Trigger:
    """True when included tokens are strictly less than ``n``."""
    return Trigger("below", "tokens", _threshold(n, "tokens"))


def tokens_at_most(n: int) -> Trigger:
    """True when included tokens are at most ``n`` (the usual target)."""
    return Trigger("at_most", "tokens", _threshold(n, "tokens"))


def messages_exceed(n: int) -> Trigger:
    """True when included messages are strictly more than ``n``."""
    return Trigger("exceed", "messages", _threshold(n, "messages"))


def turns_exceed(n: int) -> Trigger:
    """True when included user turns are strictly more than ``n``."""
    return Trigger("exceed", "turns", _threshold(n, "turns"))


def groups_exceed(n: int) -> Trigger:
    """True when included non-system groups are strictly more than ``n``."""
    return Trigger("exceed", "groups", _threshold(n, "groups"))


def has_tool_calls() -> Trigger:
    """True when at least one tool-call group is included (uncollapsed)."""
    return Trigger("has_tool_calls")


def cache_likely_cold(retention_ms: int | None = None) -> Trigger:
    """True when the prompt cache is probably gone: a known cache age is at least the
    retention window (equality matches). ``retention_ms`` overrides the window the
    session knows (see :func:`compactlens.session.infer_cache_retention_ms`); with
    neither, or an unknown age, it is false."""
    if retention_ms is None:
        return Trigger("cache_cold")
    return Trigger("cache_cold", n=check_int("retention_ms", retention_ms))


def describe_trigger(trigger: Any) -> str:
    """A short label for a trigger (its ``describe()``, or a custom predicate's name)."""
    describe = getattr(trigger, "describe", None)
    if callable(describe):
        text = describe()
        if isinstance(text, str):
            return text
    return str(getattr(trigger, "__name__", type(trigger).__name__))


def all_of(*triggers: Trigger) -> Trigger:
    """True when every trigger is true (an empty ``all_of`` is true)."""
    return Trigger("all", children=tuple(triggers))


def any_of(*triggers: Trigger) -> Trigger:
    """True when any trigger is true (an empty ``any_of`` is false)."""
    return Trigger("any", children=tuple(triggers))


def not_(trigger: Trigger) -> Trigger:
    """The negation of a trigger."""
    return trigger.negate()
