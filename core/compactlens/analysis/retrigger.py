"""Re-trigger guard: how many turns until compaction fires again on the compacted history.

A compaction that leaves the history just under its trigger fires again on the very
next turn, and then on every turn: a compaction loop. Given the configured triggers
and a per-turn growth (measured on the transcript itself, or given), the compacted
history's metrics are projected turn by turn::

    metrics(k) = metrics(0) + k · growth      (tokens, messages, groups, tool-call groups)
    turns(k)   = turns(0) + k

and ``turns_until_trigger`` is the first ``k`` at which any trigger is true (``0`` when
the compacted history already triggers; ``None`` when none fires within ``horizon``
turns).

The measured growth (a *typical turn*) is the median, over the transcript's latest
:data:`RECENT_TURNS` user turns, of what one turn added: a single huge tool output is not
the median of three or more turns, and recent turns say more about the next one than the
first ones do.

An agent log (SWE-agent, OpenHands...) has one or two user turns and many steps: each
model call adds one group (a tool call and its results, or a reply). With fewer than
:data:`MIN_TURNS` user turns the growth is measured per *step* instead (``source="steps"``):
the median of the latest :data:`RECENT_TURNS` groups, and the projection counts steps
(``k`` steps add no user turn). With fewer than :data:`MIN_TURNS` groups as well (a log
of one request and a reply or two), a median would be a guess: the growth is *estimated*
from what exists, cautiously, as the largest of those one or two steps
(``source="few"``, labelled so wherever it is shown), so a history left just under its
trigger is still seen to fire again on the next step. Only a transcript without any
user request or step has no growth (``source="none"``): the projection assumes none and
says so.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from compactlens.engine.index import GroupKind, MessageIndex

# Re-exported: the analysis API has always offered it here.
from compactlens.engine.strategies.registry import strategy_triggers as strategy_triggers
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import condition_words
from compactlens.model.errors import ConfigError
from compactlens.model.validation import check_int

GrowthSource = Literal["transcript", "steps", "few", "given", "none"]

#: How far ahead the projection looks by default.
DEFAULT_HORIZON = 1000

#: Warn when the compacted history uses more than this share of the context window.
DEFAULT_MAX_FRACTION = 0.8
#: The model's context window every surface judges with when none is given (the
#: inspector's Analysis page, the command line, the notebook tools): the default model's
#: (gpt-4o, 128,000 tokens). Each takes another, or 0 for none.
DEFAULT_CONTEXT_WINDOW = 128_000

#: The per-turn growth is measured on at most this many of the latest user turns.
RECENT_TURNS = 20

#: The fewest user turns a per-turn growth is measured on (fewer: not measured).
MIN_TURNS = 3


@dataclass(frozen=True, slots=True)
class Growth:
    """What one user turn adds, on average (tokens, messages, non-system groups...); with
    ``source="steps"``, what one agent step (one group) adds, and ``turns_measured`` counts
    the steps measured; with ``source="few"``, the largest of the only one or two steps
    the log has (an estimate, not a median)."""

    tokens: float
    messages: float = 0.0
    groups: float = 0.0
    tool_call_groups: float = 0.0
    source: GrowthSource = "given"
    turns_measured: int = 0
    #: The tokens of the largest turn (or step) a median was taken over (None: no
    #: median), so a reader can be told when the median hides a much larger one.
    largest: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tokens": self.tokens,
            "messages": self.messages,
            "groups": self.groups,
            "tool_call_groups": self.tool_call_groups,
            "source": self.source,
            "turns_measured": self.turns_measured,
            "unit": self.unit,
            "largest": self.largest,
        }

    @property
    def unit(self) -> Literal["turn", "step"]:
        """What one projection step is: a user turn, or (``source="steps"``) an agent step."""
        return "step" if self.source in ("steps", "few") else "turn"


NO_GROWTH = Growth(0.0, source="none")


def growth_from_index(index: MessageIndex) -> Growth:
    """The typical turn of a transcript: the median of what each of its latest
    :data:`RECENT_TURNS` user turns added. With fewer than :data:`MIN_TURNS` user turns,
    the typical agent step: the median of its latest :data:`RECENT_TURNS` groups
    (``source="steps"``); with fewer groups too, the largest of those one or two
    (``source="few"``); without any, ``source="none"`` and growth 0 (``turns_measured``
    says how many turns there were)."""
    per_turn: dict[int, list[int]] = {}
    for g in index.groups:
        if g.turn is None or g.turn < 1:
            continue
        slot = per_turn.setdefault(g.turn, [0, 0, 0, 0])
        slot[0] += g.tokens
        slot[1] += g.message_count
        slot[2] += 1
        slot[3] += int(g.kind is GroupKind.TOOL_CALL)
    rows = [per_turn[t] for t in sorted(per_turn)][-RECENT_TURNS:]
    if len(rows) < MIN_TURNS:
        return _step_growth(index, len(rows))
    return Growth(
        tokens=float(statistics.median(r[0] for r in rows)),
        messages=float(statistics.median(r[1] for r in rows)),
        groups=float(statistics.median(r[2] for r in rows)),
        tool_call_groups=float(statistics.median(r[3] for r in rows)),
        source="transcript",
        turns_measured=len(rows),
        largest=float(max(r[0] for r in rows)),
    )


def _step_growth(index: MessageIndex, turns: int) -> Growth:
    """What one agent step adds: the median of the latest :data:`RECENT_TURNS` groups
    after the first user request (a step is one model call: a tool call with its results,
    or a reply)."""
    steps = [g for g in index.groups if g.turn is not None and g.turn >= 1][-RECENT_TURNS:]
    if not steps:
        return Growth(0.0, source="none", turns_measured=turns)
    if len(steps) < MIN_TURNS:
        # Too few for a median: the largest step, a cautious estimate (a history left
        # just under its trigger fires again if the next step is like the largest one).
        return Growth(
            tokens=float(max(g.tokens for g in steps)),
            messages=float(max(g.message_count for g in steps)),
            groups=1.0,
            tool_call_groups=float(max(int(g.kind is GroupKind.TOOL_CALL) for g in steps)),
            source="few",
            turns_measured=len(steps),
        )
    return Growth(
        tokens=float(statistics.median(g.tokens for g in steps)),
        messages=float(statistics.median(g.message_count for g in steps)),
        groups=1.0,
        tool_call_groups=float(
            statistics.median(int(g.kind is GroupKind.TOOL_CALL) for g in steps)
        ),
        source="steps",
        turns_measured=len(steps),
        largest=float(max(g.tokens for g in steps)),
    )


@dataclass(frozen=True, slots=True)
class HistoryMetrics:
    """The metrics a trigger reads (the :class:`compactlens.engine.triggers.Metrics` protocol)."""

    tokens: int
    messages: int
    groups: int
    turns: int
    tool_call_groups: int

    @classmethod
    def of(cls, index: MessageIndex, *, tokens: int | None = None) -> HistoryMetrics:
        """Metrics of a whole transcript (``tokens`` overrides the index's count)."""
        return cls(
            tokens=index.total_tokens if tokens is None else tokens,
            messages=index.total_messages,
            groups=index.non_system_groups,
            turns=index.total_turns,
            tool_call_groups=sum(1 for g in index.groups if g.kind is GroupKind.TOOL_CALL),
        )

    def after(self, turns: int, growth: Growth) -> HistoryMetrics:
        """The projected metrics ``turns`` turns (or agent steps: no new user turn) later."""
        return HistoryMetrics(
            tokens=self.tokens + round(turns * growth.tokens),
            messages=self.messages + round(turns * growth.messages),
            groups=self.groups + round(turns * growth.groups),
            turns=self.turns + (0 if growth.unit == "step" else turns),
            tool_call_groups=self.tool_call_groups + round(turns * growth.tool_call_groups),
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "tokens": self.tokens,
            "messages": self.messages,
            "groups": self.groups,
            "turns": self.turns,
            "tool_call_groups": self.tool_call_groups,
        }


@dataclass(frozen=True, slots=True)
class RetriggerEstimate:
    """When compaction would fire again, and the warnings that follow from it."""

    triggers: tuple[str, ...]
    growth: Growth
    start: HistoryMetrics
    turns_until_trigger: int | None
    firing_trigger: str | None
    horizon: int
    context_window: int | None = None
    max_fraction: float = DEFAULT_MAX_FRACTION
    warnings: tuple[str, ...] = ()
    #: The most tokens the history may hold before a token trigger fires (the lowest
    #: ``tokens > n`` of the triggers; None when no trigger counts tokens alone).
    token_limit: int | None = None
    #: False when no trigger was given and the run's own are not known: the next
    #: compaction was not checked (not "no trigger": nothing says the run has none).
    checked: bool = True

    @property
    def room_tokens(self) -> int | None:
        """Tokens the compacted history may still grow by before a token trigger fires
        (None without a token trigger; 0 when it is already over)."""
        if self.token_limit is None:
            return None
        return max(0, self.token_limit - self.start.tokens)

    @property
    def window_fraction(self) -> float | None:
        """Share of the context window the compacted history uses (None without a window)."""
        if not self.context_window:
            return None
        return self.start.tokens / self.context_window

    @property
    def loops(self) -> bool:
        """True when compaction would fire again now or on the very next turn."""
        return self.turns_until_trigger is not None and self.turns_until_trigger <= 1

    def to_dict(self) -> dict[str, Any]:
        fraction = self.window_fraction
        return {
            "triggers": list(self.triggers),
            "growth": self.growth.to_dict(),
            "start": self.start.to_dict(),
            "turns_until_trigger": self.turns_until_trigger,
            "firing_trigger": self.firing_trigger,
            "horizon": self.horizon,
            "context_window": self.context_window,
            "window_fraction": round(fraction, 6) if fraction is not None else None,
            "max_fraction": self.max_fraction,
            "loops": self.loops,
            "warnings": list(self.warnings),
            "token_limit": self.token_limit,
            "checked": self.checked,
        }


def token_ceiling(trigger: Trigger) -> int | None:
    """The most tokens at which ``trigger`` cannot fire on tokens alone (``tokens > n``:
    ``n``; any of several: the lowest), else None."""
    if trigger.metric == "tokens" and trigger.op == "exceed":
        return trigger.n
    if trigger.metric == "tokens" and trigger.op == "at_least":
        return trigger.n - 1
    if trigger.op == "any":
        found = [c for c in map(token_ceiling, trigger.children) if c is not None]
        return min(found) if found else None
    return None


def estimate_retrigger(
    start: HistoryMetrics,
    triggers: Sequence[Trigger],
    growth: Growth,
    *,
    context_window: int | None = None,
    max_fraction: float = DEFAULT_MAX_FRACTION,
    horizon: int = DEFAULT_HORIZON,
) -> RetriggerEstimate:
    """Project ``start`` turn by turn and find the first turn at which a trigger fires."""
    if context_window is not None:
        check_int("context_window", context_window)
    if not 0 < max_fraction <= 1:
        raise ConfigError(f"max_fraction must be in (0, 1], got {max_fraction!r}")
    if horizon < 0:
        raise ConfigError("horizon must be >= 0")
    until: int | None = None
    firing: str | None = None
    if triggers:
        for k in range(horizon + 1):
            metrics = start.after(k, growth)
            fired = next((t for t in triggers if t(metrics)), None)
            if fired is not None:
                until, firing = k, condition_words(fired.describe())
                break
    warnings: list[str] = []
    if until == 0:
        warnings.append(
            f"the compacted history already triggers compaction ({firing}): "
            "it would compact again before the next request"
        )
    elif until == 1:
        warnings.append(
            f"compaction would fire again on the very next {growth.unit} ({firing}); "
            "leave more room between the trigger and the target"
        )
    if triggers and growth.source == "none" and until is None:
        warnings.append(
            "no user turn or agent step to measure what a turn adds; the estimate assumes none"
        )
    elif triggers and growth.source == "few":
        only = (
            "the log's only agent step"
            if growth.turns_measured == 1
            else f"the larger of the log's only {growth.turns_measured} agent steps"
        )
        warnings.append(
            f"what a step adds ({growth.tokens:,.0f} tokens) is estimated from {only} "
            f"(at least {MIN_TURNS} are needed for a typical one)"
        )
    if context_window:
        fraction = start.tokens / context_window
        if fraction > max_fraction:
            why = (
                "over the window: the model would reject the request"
                if start.tokens > context_window
                else f"more than {max_fraction:.0%}"
            )
            warnings.append(
                f"the compacted history uses {fraction:.0%} of the {context_window:,}-token "
                f"context window ({why})"
            )
    return RetriggerEstimate(
        triggers=tuple(t.describe() for t in triggers),
        growth=growth,
        start=start,
        turns_until_trigger=until,
        firing_trigger=firing,
        horizon=horizon,
        context_window=context_window,
        max_fraction=max_fraction,
        warnings=tuple(warnings),
        token_limit=min((c for c in map(token_ceiling, triggers) if c is not None), default=None),
    )
