"""Make a finished plan valid for its provider (the last step of every run).

Strategies keep tool calls with their results by construction (groups are kept or dropped
whole). A plan that would send nothing keeps its newest group (no API takes an empty
request; the run then reports cannot-fit). What a cut can still break is the role order
some APIs enforce: Anthropic's Messages API and Gemini need the conversation (after the
system part) to open with a user turn. When a plan's first conversation message is not a
user message, a short user note is inserted before it, saying that earlier messages were
removed. It costs a few tokens and drops nothing (dropping the leading assistant groups
instead would lose work the cut chose to keep, and can empty a history that has no user
message left).
"""

from __future__ import annotations

from itertools import chain

from compactlens.engine.index import GroupKind
from compactlens.engine.plan import Insertion, Plan
from compactlens.engine.providers import USER_FIRST, has_content, opens_with_user_turn
from compactlens.model.messages import Message, TextPart

#: The note placed before a history that would otherwise open with an assistant turn.
OMITTED_NOTE = "[Earlier messages of this conversation were removed to fit the context window.]"
REPAIR_STAGE = "provider_repair"


def needs_user_first(plan: Plan) -> int | None:
    """Where a user note must go for the plan's provider, or None when none is needed.

    Only a history the cut changed is repaired: an input that does not open with a user
    turn is the caller's to fix, and an untouched plan is returned as it is. Reads the
    projection only up to its first turn.
    """
    if plan.locks.provider not in USER_FIRST or (not plan.log and not plan.insertions):
        return None
    if not opens_with_user_turn(plan.index.messages):
        return None
    conversation = ((i, m) for i, m in plan.positioned() if not m.is_system)
    first = next(conversation, None)
    if first is None or opens_with_user_turn(chain([first[1]], (m for _, m in conversation))):
        return None
    return first[0]


def needs_a_message(plan: Plan) -> int | None:
    """The newest excluded group to put back when the plan would send no message (every
    API rejects an empty request; Anthropic and Gemini also one without a conversation
    turn), or None."""
    provider = plan.locks.provider
    # Anthropic and Gemini need a conversation turn: a system prompt alone is no request.
    turns_needed = provider in USER_FIRST
    if provider == "any" or (plan.groups if turns_needed else plan.messages):
        return None
    ix = plan.index
    dropped = [
        g
        for g in reversed(ix.groups)
        if plan.action[g.id] == "excluded" and not (turns_needed and g.is_system)
    ]
    # The newest group that says something (an empty message is rejected too).
    with_content = (g for g in dropped if any(has_content(ix.messages[k]) for k in g.indices))
    chosen = next(with_content, dropped[0] if dropped else None)
    return chosen.id if chosen is not None else None


def keep_one(plan: Plan, gid: int) -> str:
    """Put back group ``gid`` (what :func:`needs_a_message` named); a sentence saying so."""
    plan.restore(gid, REPAIR_STAGE, "an empty request is invalid")
    return f"kept group {gid}: {plan.locks.provider} rejects an empty request"


def add_user_note(plan: Plan, at: int, count: int) -> str:
    """Insert the user note before original position ``at`` (what
    :func:`needs_user_first` named); ``count`` is its token count. A sentence saying so."""
    plan.insert(
        Insertion(
            position=at,
            messages=(omitted_note(),),
            tokens=count,
            kind=GroupKind.USER,
            strategy=REPAIR_STAGE,
            reason=f"{plan.locks.provider} needs the conversation to open with a user turn",
        )
    )
    return (
        f"inserted a {count}-token user note before message {at}: {plan.locks.provider} "
        "rejects a history that opens with an assistant turn"
    )


def omitted_note() -> Message:
    return Message(role="user", parts=(TextPart(OMITTED_NOTE),))
