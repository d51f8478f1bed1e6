"""Compacting every call at the cost of the kept window (issue 26, item 2).

A pydantic-ai processor or an Agents SDK session view hands the compactor the whole
stored history on every call, and a history over budget stays over budget: a truncation
drops the same old groups again and again, and only the cut point moves. After a
compacting call :func:`remember` notes where the next call may start reading: a user
request ``s`` a little before the cut (so the window holds at least one group the call
dropped) at which no group and no tool link is split, with the kept messages before it
(the *head*: system messages only). The next call on the same history grown (nothing
before ``s`` re-read) runs the strategy on the head and the messages from ``s`` on only
(:func:`window_run`), and its answer is the from-scratch answer when:

- the strategy is a truncation that keeps system groups, its trigger and target look at
  tokens or messages only (the running totals know them for the whole history) and its
  target gets easier as groups go (``at_most`` / ``below``);
- no message is pinned by position, and the window holds the latest user request (the
  guard's lock is then where a full run puts it);
- the window's grouping is the whole history's from ``s`` on: no result, approval or
  hosted item in the window answers a call before ``s`` (a late tool result that would
  merge groups far back shows as an orphan, and the call is then a full run);
- the window run dropped at least one group after the head. Dropping it means the target
  failed on a plan with fewer tokens than any plan a full run sees while it drops the
  groups before ``s``, so (the target being monotone) a full run drops all of them, and
  then goes on from exactly the window run's state;
- nothing else happened: one stage, status ``compacted``, no provider repair.

Otherwise the call is a full run. The result's numbers, events and explanation are the
window run's, moved to the whole history's group ids and totals; its per-group decisions
(one per group of the whole history) are built by a full run when first read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from compactlens.engine.explain import met_explanation
from compactlens.engine.guards import Guards, latest_request_index
from compactlens.engine.index import GroupKind, MessageIndex
from compactlens.engine.profiles import profile_guards
from compactlens.engine.result import CompactionResult, Decisions, GroupDecision
from compactlens.engine.strategies.base import Strategy, resolve
from compactlens.engine.strategies.truncation import TruncationStrategy
from compactlens.engine.triggers import ALWAYS, Trigger
from compactlens.formats import get_format
from compactlens.formats.caller import CallerMessages
from compactlens.integrations.loop import Totals
from compactlens.model.messages import Message
from compactlens.model.tokens import CharEstimator, Tokenizer, count_messages, message_sizes

_COUNTED = ("tokens", "messages")  # the metrics the running totals know
_EASIER = ("at_most", "below")  # targets that only get easier as groups are dropped
_FIRES = ("exceed", "below", "at_most", "at_least")
#: Pairing problems a window shows exactly where the whole history shows them.
_LOCAL_PROBLEMS = ("unresolved_call", "split_pair")


@dataclass(frozen=True, slots=True)
class Window:
    """Where the next call may start reading (see the module docstring).

    ``start`` is the whole history's message index of the window's first message and
    ``group`` the id of its group; ``head`` the kept messages before it (with their token
    ``counts`` and group ids ``head_groups``); ``dropped`` the ids of every other group
    before it, in order (a full run drops them all, oldest first). ``owner`` is the
    compactor whose runs this window follows."""

    owner: object
    start: int
    group: int
    head: tuple[Message, ...]
    counts: tuple[int, ...]
    head_groups: tuple[int, ...]
    dropped: tuple[int, ...]


def _triggers(strategy: TruncationStrategy, tokenizer_given: bool) -> tuple[Trigger, Trigger]:
    if strategy.max_n is not None and strategy.compact_to is not None:
        metric = "tokens" if tokenizer_given else "messages"
        return Trigger("exceed", metric, strategy.max_n), Trigger(
            "at_most", metric, strategy.compact_to
        )
    trigger, target = resolve(strategy.trigger, strategy.target)
    assert trigger is not None and target is not None
    return trigger, target


def firing(strategy: TruncationStrategy, tokenizer_given: bool) -> TruncationStrategy:
    """``strategy`` with its trigger already fired (the whole history's running totals
    decide it; the window alone holds fewer tokens), aiming at the same target."""
    _, target = _triggers(strategy, tokenizer_given)
    return replace(strategy, trigger=ALWAYS, target=target, max_n=None, compact_to=None)


def windowed(strategy: Strategy, guards: Guards | None, profile: str | None, given: bool) -> bool:
    """Whether runs of ``strategy`` (with the profile applied) may follow a window."""
    if not isinstance(strategy, TruncationStrategy):
        return False
    if not strategy.preserve_system or strategy.preserve_first_user_group:
        return False
    if (guards if guards is not None else profile_guards(profile)).pins:
        return False
    trigger, target = _triggers(strategy, given)
    return (
        trigger.op in _FIRES
        and trigger.metric in _COUNTED
        and target.op in _EASIER
        and target.metric in _COUNTED
    )


def window_read(
    window: Window,
    messages: Sequence[Message],
    counts: Sequence[int],
    counter: Tokenizer | None,
    format: str,
    grouping: Any,
) -> tuple[CallerMessages, MessageIndex] | None:
    """The head and ``messages[window.start:]`` (the whole history's messages, as the
    memory keeps them) read and indexed, or None when the window's grouping may differ
    from the whole history's (see the module docstring)."""
    tail = messages[window.start :]
    chosen = [*window.head, *tail]
    every = [*window.counts, *counts[window.start :]]
    sizes = [message_sizes(m)[1] for m in chosen]
    index = MessageIndex.from_counts(
        chosen, every, sizes, counter or CharEstimator(), grouping=grouping
    )
    # A call still waiting for its result, or a result apart from its call (both in the
    # window: a result whose call is not there is an orphan; the Responses API's parallel
    # calls are one item each), is the whole history's problem too; any other (an orphan
    # result, a reused id) may involve the prefix.
    if any(p.kind not in _LOCAL_PROBLEMS for p in index.problems):
        return None
    if latest_request_index(tail) is None:
        return None
    head = len(window.head)
    seen = {index.group_of[i] for i in range(head)}
    if len(seen) != len(window.head_groups) or any(g >= len(seen) for g in seen):
        return None
    for g in index.groups:
        if "orphan" in g.flags or "hosted" in g.flags:
            return None
    caller = CallerMessages(index.messages, tuple(chosen), "wire", get_format(format))
    return caller, index


def _mover(window: Window, head: int) -> Callable[[int], int]:
    """Window group id -> the whole history's group id."""
    head_groups, shift = window.head_groups, window.group - head

    def move(g: int) -> int:
        return head_groups[g] if g < head else g + shift

    return move


def window_result(
    window: Window,
    result: CompactionResult,
    index: MessageIndex,
    strategy: TruncationStrategy,
    tokenizer_given: bool,
    totals: tuple[int, int],
    full_decisions: Callable[[], tuple[GroupDecision, ...]],
) -> CompactionResult | None:
    """The whole history's result from the window run's ``result``, or None when the
    window run may differ from a full run (see the module docstring)."""
    if result.status != "compacted" or len(result.events) != 1:
        return None
    event = result.events[0]
    head = len(window.head_groups)
    changed = [g for g in event.group_ids if g >= head]
    if not changed or len(changed) != len(event.group_ids):
        return None  # no evidence that a full run drops every group before the window
    tokens, count = totals
    extra_tokens = tokens - index.total_tokens
    extra_messages = count - index.total_messages
    trigger, _ = _triggers(strategy, tokenizer_given)
    whole = Totals(tokens, count)
    if not trigger(whole):
        return None
    move = _mover(window, head)
    moved = replace(
        event,
        trigger=trigger.describe(),
        tokens_before=event.tokens_before + extra_tokens,
        messages_before=event.messages_before + extra_messages,
        trigger_values=trigger.values(whole),
        groups_changed=event.groups_changed + len(window.dropped),
        group_ids=window.dropped + tuple(move(g) for g in changed),
    )
    protected = tuple(
        replace(p, group_ids=tuple(move(g) for g in p.group_ids))
        for p in result.explanation.protected
    )
    explanation = met_explanation(
        tokens, result.tokens_after, protected, result.explanation.target_tokens
    )
    return replace(
        result,
        tokens_before=tokens,
        messages_before=count,
        decisions=Decisions(full_decisions),
        events=(moved,),
        explanation=explanation,
    )


def _between(first: int, end: int, held: Sequence[int]) -> tuple[int, ...]:
    """The ids ``first`` to ``end - 1`` but ``held`` (sorted), built range by range."""
    out: list[int] = []
    at = first
    for g in held:
        if first <= g < end:
            out.extend(range(at, g))
            at = g + 1
    out.extend(range(at, end))
    return tuple(out)


def remember(
    owner: object,
    result: CompactionResult,
    index: MessageIndex,
    counter: Tokenizer | None,
    window: Window | None = None,
) -> Window | None:
    """Where the call after ``result`` (a run over ``index``: the whole history, or the
    ``window`` it followed) may start reading, or None. Walks back from the newest
    message over the kept tail to a little before the cut, then on to the first message
    only to place the kept head (system messages)."""
    if result.status != "compacted":
        return None
    kept = result.projection
    messages, group_of, groups = index.messages, index.group_of, index.groups
    head = 0 if window is None else len(window.head)
    p = len(kept) - 1
    lowest = len(messages)  # the first message of any group seen so far
    dropped = False
    start = -1
    for i in range(len(messages) - 1, head - 1, -1):
        m = messages[i]
        g = groups[group_of[i]]
        lowest = min(lowest, g.first)
        if p >= 0 and kept[p] is m:
            p -= 1
        elif g.kind is GroupKind.SYSTEM:
            return None
        else:
            dropped = True
        if (
            dropped
            and lowest >= i
            and g.first == i
            and g.kind is GroupKind.USER
            and latest_request_index([m]) == 0
        ):
            start = i
            break
    if start < 0:
        return None
    # The kept messages before the start (kept[: p + 1]): system messages only, found from
    # the first message on (a system prompt is found at once).
    places: list[int] = []
    j = 0
    for i in range(start):
        if j > p:
            break
        if kept[j] is messages[i]:
            if groups[group_of[i]].kind is not GroupKind.SYSTEM:
                return None
            places.append(i)
            j += 1
    if j <= p:
        return None  # something kept is not in the index (an inserted message)
    if window is None:
        base, start_group = start, group_of[start]
        moved = [group_of[i] for i in places]
        held = sorted(set(moved))
        dropped_ids: tuple[int, ...] = _between(0, start_group, held)
    else:
        move = _mover(window, len(window.head_groups))
        base = start - head + window.start
        start_group = move(group_of[start])
        held = sorted({move(group_of[i]) for i in places})
        dropped_ids = window.dropped + _between(window.group, start_group, held)
    head_messages = tuple(messages[i] for i in places)
    counts = tuple(index.message_tokens[i] for i in places)
    if counts != tuple(count_messages(head_messages, counter or CharEstimator())):
        return None
    return Window(
        owner=owner,
        start=base,
        group=start_group,
        head=head_messages,
        counts=counts,
        head_groups=tuple(held),
        dropped=dropped_ids,
    )


__all__ = ["Window", "firing", "remember", "window_read", "window_result", "windowed"]
