"""Replays of a transcript turn by turn: what an agent would have sent at each turn.

:func:`replay_session` drives a real :class:`compactlens.CompactionSession` (checkpoints,
triggers, lifecycle events); :func:`replay_engine` runs the engine alone. Every evaluation
that compacted (or tried to) carries the verdict of that compaction
(:func:`compactlens.verdict`, with :func:`compactlens.analyze` of the history it was given),
so the replay reads, turn by turn, as every other page reads one run. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens import (
    CompactionSession,
    Message,
    MessageIndex,
    Summarizer,
    Tokenizer,
    Trigger,
    Verdict,
    analyze,
    strategy_from_config,
    tokens_exceed,
    verdict,
)
from compactlens.engine import GroupKind, StageEvent, always, index_counter, memo_tokenizer
from compactlens.viz import TimelineEvent
from compactlens_inspector.lab.config import LabConfig
from compactlens_inspector.lab.runs import run_config
from compactlens_inspector.style.numbers import num


@dataclass(frozen=True, slots=True)
class ReplayStep:
    """One evaluation of a replay (the end of a turn): what the agent would send.

    ``lifecycle`` holds the session's events of this evaluation (``restored``,
    ``started``, ``completed``, ``failed``) as dicts; ``events`` the engine stage
    events when the replay ran the engine directly.
    """

    turn: int
    messages_in: int
    tokens_in: int
    fired: bool
    status: str
    tokens_out: int
    messages_out: int
    events: tuple[StageEvent, ...] = ()
    detail: str = ""
    lifecycle: tuple[Mapping[str, Any], ...] = ()
    trigger_index: int | None = None
    verdict: Verdict | None = None
    """The verdict of this evaluation's compaction; None when no trigger fired (the
    history went as it was)."""

    @property
    def verdict_text(self) -> str:
        """The verdict's headline, or what happened when nothing was judged."""
        if self.verdict is not None:
            return self.verdict.headline
        return "no compaction" if not self.fired else "not judged"


def step_verdict(
    history: Sequence[Any], result: Any, triggers: Sequence[Trigger], tokenizer: Tokenizer
) -> Verdict:
    """The verdict of one evaluation's compaction of ``history`` (the messages it was
    given), analyzed with the replay's ``triggers``."""
    report = analyze(list(history), result, triggers=list(triggers), tokenizer=tokenizer)
    return verdict(result, report)


def turn_ends(index: MessageIndex, max_steps: int | None = None) -> list[int]:
    """Message counts at the end of each turn (the history before each next user message),
    evenly thinned to at most ``max_steps``."""
    starts = [g.first for g in index.groups if g.kind is GroupKind.USER]
    ends = sorted({*(s for s in starts if s > 0), index.total_messages})
    if max_steps is not None and len(ends) > max_steps >= 2:
        picked = {ends[round(i * (len(ends) - 1) / (max_steps - 1))] for i in range(max_steps)}
        ends = sorted(picked)
    return ends


def replay_engine(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    max_steps: int = 60,
) -> list[ReplayStep]:
    """Replay turn by turn with the engine alone (no session): before each model request,
    the history so far (with the earlier compacted prefix in place) is run through the
    configuration, and a compacted history becomes the new prefix."""
    tokenizer = memo_tokenizer(index)
    triggers = _stage_triggers(config)
    prefix: list[Message] = []
    consumed = 0
    steps: list[ReplayStep] = []
    for turn, end in enumerate(turn_ends(index, max_steps), start=1):
        history = prefix + list(index.messages[consumed:end])
        sub = MessageIndex.build(history, tokenizer)
        outcome = run_config(sub, config, summarizer, explain=False)
        r = outcome.result
        if r is None:
            steps.append(
                ReplayStep(
                    turn=turn,
                    messages_in=len(history),
                    tokens_in=sub.total_tokens,
                    fired=False,
                    status="error",
                    tokens_out=0,
                    messages_out=0,
                    detail=outcome.error or "",
                )
            )
            break
        steps.append(
            ReplayStep(
                turn=turn,
                messages_in=len(history),
                tokens_in=sub.total_tokens,
                fired=r.status != "unchanged",
                status=r.status,
                tokens_out=r.tokens_after,
                messages_out=r.messages_after,
                events=r.events,
                detail=r.reason or "",
                verdict=(
                    step_verdict(history, r, triggers, tokenizer)
                    if r.status != "unchanged"
                    else None
                ),
            )
        )
        prefix = list(r.projection) if r.status == "compacted" else history
        consumed = end
    return steps


def replay_session(
    index: MessageIndex,
    config: LabConfig,
    summarizer: Summarizer,
    *,
    max_steps: int = 60,
) -> list[ReplayStep]:
    """Replay the transcript turn by turn through a :class:`CompactionSession`.

    At the end of each turn the full original history so far goes to
    ``session.prepare()``, which restores its checkpoint, checks the triggers and
    compacts (``compact()`` in compact mode; the lab's strategy otherwise). The session's
    lifecycle events are recorded per evaluation. Configurations the session cannot
    express (no token target) are replayed with the engine alone (:func:`replay_engine`).
    """
    counter = index_counter(index)
    tokenizer = memo_tokenizer(index)
    events: list[Any] = []
    if config.mode == "compact":
        c = config.compact
        trigger: Any = always if c.trigger_tokens is None else tokens_exceed(c.trigger_tokens)
        triggers = [trigger]
        session = CompactionSession(
            triggers=[trigger],
            target_tokens=c.target_tokens,
            summarizer=summarizer,
            keep_last_messages=c.keep_last_messages,
            count_tokens=counter,
            on_event=events.append,
            on_error="return",
        )
    else:
        target = config.target_tokens
        try:
            strategy = strategy_from_config(config.strategy_config(), summarizer=summarizer)
            triggers = _stage_triggers(config)
        except ValueError:
            return replay_engine(index, config, summarizer, max_steps=max_steps)
        if target is None or not triggers:
            return replay_engine(index, config, summarizer, max_steps=max_steps)
        session = CompactionSession(
            triggers=triggers,
            target_tokens=target,
            strategy=strategy,
            tokenizer=tokenizer,
            count_tokens=counter,
            on_event=events.append,
            on_error="return",
        )
    steps: list[ReplayStep] = []
    for turn, end in enumerate(turn_ends(index, max_steps), start=1):
        history = list(index.messages[:end])
        working = _working(session, history)
        prior = session.last_result
        events.clear()
        sent = session.prepare(history)
        lifecycle = tuple(e.to_dict() for e in events)
        started = next((e for e in events if e.type == "started"), None)
        completed = next((e for e in events if e.type == "completed"), None)
        failed = next((e for e in events if e.type == "failed"), None)
        tokens_out = counter(sent)
        if completed is not None:
            status = "compacted"
        elif failed is not None:
            status = "cannot-fit" if failed.reason != "error" else "error"
        else:
            status = "unchanged"
        detail = ""
        if failed is not None:
            detail = f"{failed.phase}: {failed.reason}"
            if failed.error_type:
                detail += f" ({failed.error_type})"
        steps.append(
            ReplayStep(
                turn=turn,
                messages_in=len(history),
                tokens_in=started.tokens_before if started is not None else tokens_out,
                fired=started is not None,
                status=status,
                tokens_out=tokens_out,
                messages_out=len(sent),
                detail=detail,
                lifecycle=lifecycle,
                trigger_index=started.trigger_index if started is not None else None,
                verdict=(
                    step_verdict(working, session.last_result, triggers, tokenizer)
                    if started is not None
                    and session.last_result is not None
                    and session.last_result is not prior
                    else None
                ),
            )
        )
    return steps


def _working(session: CompactionSession, history: list[Message]) -> list[Message]:
    """What the session will work on for ``history``: its checkpoint's replacement in
    place of the prefix it covers (the messages a compaction of this turn indexes)."""
    cp = session.checkpoint()
    if cp is None or cp.kind != "messages" or not cp.covers(history):
        return history
    return [*cp.replacement, *history[cp.prefix_length :]]


def _stage_triggers(config: LabConfig) -> list[Any]:
    """The engine triggers of the stages, in order (the session's trigger list)."""
    out: list[Any] = []
    for stage in config.stages:
        t = stage.get("trigger")
        if isinstance(t, Mapping):
            out.append(Trigger.from_dict(dict(t)))
        elif stage.get("type") == "token_budget" and isinstance(stage.get("token_budget"), int):
            out.append(tokens_exceed(int(stage["token_budget"])))
    return out


def replay_timeline(steps: Sequence[ReplayStep]) -> list[TimelineEvent]:
    """The session's lifecycle events of a replay as timeline events, in order."""
    out: list[TimelineEvent] = []
    for step in steps:
        for ev in step.lifecycle:
            kind = str(ev.get("type"))
            before = int(ev.get("tokens_before") or step.tokens_in)
            after = int(ev.get("tokens_after") or (before if kind != "completed" else 0))
            if kind in ("restored", "failed"):
                before = after = step.tokens_in
            rng = ev.get("replaced_range")
            detail = ""
            if kind == "restored":
                detail = (
                    f"checkpoint replaced the first {ev.get('source_message_count')} messages "
                    f"by {ev.get('replacement_message_count')}"
                )
            elif kind == "started":
                detail = f"trigger {ev.get('trigger_index')} fired at {num(before)} tokens"
            elif kind == "failed":
                detail = f"{ev.get('phase')}: {ev.get('reason')}"
            elif kind == "completed":
                detail = f"{num(before)} → {num(after)} tokens"
            out.append(
                TimelineEvent(
                    len(out),
                    kind,
                    f"evaluation {step.turn}",
                    f"eval {step.turn}: {kind}",
                    before,
                    after,
                    trigger=f"trigger {ev.get('trigger_index')}" if kind == "started" else "",
                    detail=detail,
                    message_range=(int(rng[0]), int(rng[1]) - 1) if rng else None,
                )
            )
    return out
