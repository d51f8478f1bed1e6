"""The values a compaction run returns: decisions, stage events, explanation, result.

All are frozen dataclasses with ``to_dict()`` output that ``json.dumps`` accepts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from compactlens.engine.index import PairingProblem
from compactlens.engine.triggers import Trigger
from compactlens.model.display import card_html, card_text
from compactlens.model.messages import Message
from compactlens.summarizers.base import SummaryResponse


@dataclass(frozen=True, slots=True)
class TokenCounts:
    """Token counts of the whole message list before and after (equal on ``cannot-fit``)."""

    before: int
    after: int

    @property
    def saved(self) -> int:
        return self.before - self.after

    def to_dict(self) -> dict[str, int]:
        return {"before": self.before, "after": self.after}


Status = Literal["unchanged", "compacted", "cannot-fit"]
Action = Literal["kept", "excluded", "collapsed", "summarized", "inserted"]


@dataclass(frozen=True, slots=True)
class GroupDecision:
    """What happened to one group (or, for ``inserted``, one new group).

    ``group_id`` is None for inserted groups; ``position`` is the original message
    index the group starts at (or is inserted before).
    """

    group_id: int | None
    kind: str
    action: Action
    strategy: str
    reason: str
    tokens_before: int
    tokens_after: int
    position: int
    message_indices: tuple[int, ...] = ()
    turn: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group_id": self.group_id,
            "kind": self.kind,
            "action": self.action,
            "strategy": self.strategy,
            "reason": self.reason,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "position": self.position,
            "message_indices": list(self.message_indices),
            "turn": self.turn,
        }


class Decisions(Sequence[GroupDecision]):
    """The per-group decisions of a result, built on first access.

    A caller that only wants the compacted messages never pays for one
    :class:`GroupDecision` per group. Compares equal to any sequence holding the
    same decisions.
    """

    __slots__ = ("_build", "_items")

    def __init__(self, build: Callable[[], tuple[GroupDecision, ...]] | tuple[GroupDecision, ...]):
        self._items: tuple[GroupDecision, ...] | None = build if isinstance(build, tuple) else None
        self._build = None if isinstance(build, tuple) else build

    def _all(self) -> tuple[GroupDecision, ...]:
        if self._items is None:
            assert self._build is not None
            self._items = self._build()
            self._build = None
        return self._items

    @overload
    def __getitem__(self, index: int) -> GroupDecision: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[GroupDecision, ...]: ...
    def __getitem__(self, index: int | slice) -> GroupDecision | tuple[GroupDecision, ...]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[GroupDecision]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Decisions):
            return self._all() == other._all()
        if isinstance(other, Sequence) and not isinstance(other, str):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"Decisions({list(self._all())!r})"


@dataclass(frozen=True, slots=True)
class StageEvent:
    """One stage of a run: a strategy's trigger check, what it did, and whether its target held.

    ``event`` is ``skipped`` (trigger false), ``applied`` (target met),
    ``target-missed`` or ``failed`` (for example a summarizer error).
    ``group_ids`` are the groups this stage (and, for a pipeline, its children)
    changed, in the order it changed them; ``inserted`` counts the groups it inserted.
    """

    stage: int
    strategy: str
    event: str
    trigger: str
    trigger_values: dict[str, int]
    target: str
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    groups_changed: int
    target_met: bool
    duration_ms: float
    detail: str = ""
    depth: int = 0
    group_ids: tuple[int, ...] = ()
    inserted: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "strategy": self.strategy,
            "event": self.event,
            "trigger": self.trigger,
            "trigger_values": dict(self.trigger_values),
            "target": self.target,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "groups_changed": self.groups_changed,
            "target_met": self.target_met,
            "duration_ms": round(self.duration_ms, 3),
            "detail": self.detail,
            "depth": self.depth,
            "group_ids": list(self.group_ids),
            "inserted": self.inserted,
        }


@dataclass(frozen=True, slots=True)
class ProtectedItem:
    """Content a strategy may not remove, and why (``system``, ``minimum_preserved``, ...)."""

    why: str
    group_ids: tuple[int, ...]
    tokens: int
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "why": self.why,
            "group_ids": list(self.group_ids),
            "tokens": self.tokens,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A single parameter change that was re-run and reaches the target."""

    change: str
    parameter: str
    value: Any
    tokens_after: int
    spare_tokens: int | None

    def to_dict(self) -> dict[str, Any]:
        value = self.value if isinstance(self.value, int | float | str | bool) else str(self.value)
        return {
            "change": self.change,
            "parameter": self.parameter,
            "value": value,
            "tokens_after": self.tokens_after,
            "spare_tokens": self.spare_tokens,
        }


#: What a met target does not say: the verdict names the run's costs.
MET_NOTE = "(whether that costs anything is the verdict's to say)"


def summary_words(explanation: Explanation) -> str:
    """The explanation's summary as a surface shows it: a met target adds that the verdict
    judges the run (``Target met: 8,667 → 2,336 tokens (whether that costs anything is the
    verdict's to say).``): "Target met" alone read as "all good" beside a run with costs."""
    if not explanation.target_met:
        return explanation.summary
    return f"{explanation.summary.rstrip('.')} {MET_NOTE}."


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a run ended as it did: protected content, smallest reachable target, fixes."""

    summary: str
    protected: tuple[ProtectedItem, ...] = ()
    target_tokens: int | None = None
    smallest_target: int | None = None
    suggestions: tuple[Suggestion, ...] = ()
    target_met: bool = False
    """The run met its target. That is all a result knows: whether it is safe (facts
    kept, room before the next trigger, no new protocol problem) is the verdict's to say,
    and a surface that shows this summary says so (:func:`summary_words`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary,
            "protected": [p.to_dict() for p in self.protected],
            "target_tokens": self.target_tokens,
            "smallest_target": self.smallest_target,
            "suggestions": [s.to_dict() for s in self.suggestions],
        }

    def __repr__(self) -> str:
        from compactlens.engine.display import explanation_card

        return card_text(explanation_card(self))

    def _repr_html_(self) -> str:
        from compactlens.engine.display import explanation_card

        return card_html(explanation_card(self))


@dataclass(frozen=True, slots=True)
class CompactionResult:
    """The outcome of :func:`compactlens.apply_compaction`.

    ``messages`` is the projection in the caller's own kind (unchanged messages are
    the caller's own objects); ``projection`` holds the same as :class:`Message`.
    ``status`` is ``unchanged`` (no trigger fired), ``compacted`` (target met) or
    ``cannot-fit`` (a trigger fired but protected content kept the target out of
    reach; ``messages`` is then the best-effort projection and ``reason`` says why).
    """

    status: Status
    messages: list[Any] = field(repr=False)
    projection: tuple[Message, ...] = field(repr=False)
    tokens_before: int
    tokens_after: int
    messages_before: int
    messages_after: int
    decisions: Decisions
    events: tuple[StageEvent, ...]
    explanation: Explanation
    strategy: str
    tokenizer: str
    reason: str | None = None
    problems: tuple[PairingProblem, ...] = ()
    duration_ms: float = 0.0
    #: The summarizer answers of the run by request, so re-runs (explanations, the fix
    #: search) can replay them instead of calling a model again.
    summaries: Mapping[str, SummaryResponse] = field(
        default_factory=dict, repr=False, compare=False
    )
    #: The triggers that start the run's strategy (any one fires it), as the engine read
    #: them when it ran; :func:`compactlens.analysis.analyze` projects the next compaction
    #: with them when it is given none. None: not known (a result built by hand).
    triggers: tuple[Trigger, ...] | None = field(default=None, repr=False, compare=False)

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    @property
    def tokens(self) -> TokenCounts:
        """Tokens before and after, as on the one-shot :class:`compactlens.CompactResult`."""
        return TokenCounts(self.tokens_before, self.tokens_after)

    def to_dict(self, *, include_messages: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "status": self.status,
            "reason": self.reason,
            "strategy": self.strategy,
            "tokenizer": self.tokenizer,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "messages_before": self.messages_before,
            "messages_after": self.messages_after,
            "duration_ms": round(self.duration_ms, 3),
            "decisions": [d.to_dict() for d in self.decisions],
            "events": [e.to_dict() for e in self.events],
            "explanation": self.explanation.to_dict(),
            "problems": [p.to_dict() for p in self.problems],
        }
        if include_messages:
            out["messages"] = [
                m if isinstance(m, dict) else _message_json(m) for m in self.messages
            ]
        return out

    def to_json(self, *, indent: int | None = 2, include_messages: bool = True) -> str:
        return json.dumps(
            self.to_dict(include_messages=include_messages), indent=indent, ensure_ascii=False
        )

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one row per decision, in output order: the group,
        its kind, the decision, the stage that made it and why, tokens before and after
        (pandas: the notebook extra). ``decision`` holds the engine's code (``excluded``
        for a dropped group, stable for programs); ``decision_label`` the word the cards
        and figures show (``dropped``): group by it for a table a reader sees."""
        from compactlens.engine.display import decision_frame

        return decision_frame(self)

    def __repr__(self) -> str:
        from compactlens.engine.display import result_card

        return card_text(result_card(self))

    def _repr_html_(self) -> str:
        from compactlens.engine.display import result_card

        return card_html(result_card(self))


def _message_json(m: Any) -> Any:
    if isinstance(m, Message):
        if m.wire is not None:
            return m.wire
        from compactlens.formats import OPENAI_CHAT

        return dict(OPENAI_CHAT.from_message(m))
    return m
