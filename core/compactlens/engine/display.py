"""Notebook views of engine values: table rows, pandas DataFrames and display cards.

``MessageIndex.to_pandas()``, ``CompactionResult.to_pandas()`` and the ``_repr_html_`` /
``__repr__`` of indexes, results and explanations are thin methods over these functions.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from compactlens.engine.result import summary_words
from compactlens.engine.vocabulary import decision_words, plural, protection_words
from compactlens.model import Card, data_frame

if TYPE_CHECKING:
    from compactlens.engine.index import MessageIndex
    from compactlens.engine.result import CompactionResult, Explanation

#: Columns of :func:`index_rows`, in order.
INDEX_COLUMNS = (
    "group",
    "kind",
    "turn",
    "first_message",
    "last_message",
    "messages",
    "roles",
    "tokens",
    "bytes",
    "tools",
    "flags",
)
#: Columns of :func:`decision_rows`, in order.
DECISION_COLUMNS = (
    "position",
    "group",
    "kind",
    "decision",
    "decision_label",
    "stage",
    "reason",
    "turn",
    "messages",
    "tokens_before",
    "tokens_after",
)
#: How a card names each decision (``excluded`` reads as ``dropped``).
COUNT_NAMES = {
    "kept": "kept",
    "collapsed": "collapsed",
    "summarized": "summarized",
    "excluded": "dropped",
    "inserted": "inserted",
}


def index_rows(index: MessageIndex) -> list[dict[str, Any]]:
    """One row per group: kind, turn, message span, roles, tokens, tools and flags."""
    return [
        {
            "group": g.id,
            "kind": g.kind.value,
            "turn": g.turn,
            "first_message": g.first,
            "last_message": g.last,
            "messages": g.message_count,
            "roles": ", ".join(dict.fromkeys(index.messages[k].role for k in g.indices)),
            "tokens": g.tokens,
            "bytes": g.bytes,
            "tools": ", ".join(g.tool_names),
            "flags": ", ".join(sorted(g.flags)),
        }
        for g in index.groups
    ]


def decision_rows(result: CompactionResult) -> list[dict[str, Any]]:
    """One row per decision, in output order: the decision, the stage that made it, why.
    ``decision`` is the engine's code (``kept``, ``collapsed``, ``summarized``,
    ``excluded``, ``inserted``: stable, for programs); ``decision_label`` is the word every
    card, figure and page shows for it (``excluded`` reads ``dropped``)."""
    return [
        {
            "position": d.position,
            "group": d.group_id,
            "kind": d.kind,
            "decision": d.action,
            "decision_label": decision_words(d.action),
            "stage": d.strategy,
            "reason": d.reason,
            "turn": d.turn,
            "messages": len(d.message_indices),
            "tokens_before": d.tokens_before,
            "tokens_after": d.tokens_after,
        }
        for d in result.decisions
    ]


def index_frame(index: MessageIndex) -> Any:
    return data_frame(index_rows(index), INDEX_COLUMNS, integers=("turn",))


def decision_frame(result: CompactionResult) -> Any:
    return data_frame(decision_rows(result), DECISION_COLUMNS, integers=("group", "turn"))


def decision_counts(result: CompactionResult) -> dict[str, int]:
    """Groups per decision, in the card's order, named as a card names them."""
    seen: Counter[str] = Counter(d.action for d in result.decisions)
    return {word: seen[action] for action, word in COUNT_NAMES.items() if seen[action]}


def index_card(index: MessageIndex) -> Card:
    kinds = Counter(g.kind.value for g in index.groups)
    return Card(
        title="MessageIndex",
        tokens_before=index.total_tokens,
        facts=(
            (
                "size",
                f"{plural(index.total_messages, 'message')}, "
                f"{plural(index.total_groups, 'group')}, {plural(index.total_turns, 'turn')}",
            ),
            ("groups", ", ".join(f"{n:,} {kind}" for kind, n in kinds.most_common())),
            ("tokenizer", index.tokenizer_name),
            ("pairing problems", f"{len(index.problems):,}"),
        ),
    )


#: A run that did not fit points to the fix search: the explanation's first suggestion
#: (often "a target of at least N") is not the verdict's next step, which the fix search
#: ranks (a notebook's ``debug()``, the command line's ``--explain``).
#: The next step of a card that has no strategy to search fixes for (a cannot-fit
#: result; a verdict judged without the fix search): the search that names it.
NO_FIT_STEP = (
    "Search for the change to make: debug(result, strategy, transcript) re-runs the "
    "changes that could fix this run and names the one to take (on the command line: "
    "compactlens compact --explain)."
)


#: What the card of a result that ran says in place of a verdict: a result cannot know
#: its own costs (lost facts, the next trigger, protocol problems), so the card draws no
#: green and names the judge.
JUDGE_STEP = (
    "not judged here: analyze(transcript, result) gives the verdict, which names the "
    "run's costs (facts lost, the next trigger, protocol problems)."
)


def result_card(result: CompactionResult, budget: int | None = None) -> Card:
    explanation = result.explanation
    target = budget if budget is not None else explanation.target_tokens
    return Card(
        title="CompactionResult",
        status=result.status,
        tokens_before=result.tokens_before,
        tokens_after=result.tokens_after,
        budget=target,
        counts=decision_counts(result),
        facts=(
            ("strategy", result.strategy),
            ("messages", f"{result.messages_before:,} → {result.messages_after:,}"),
        ),
        reason=result.reason or summary_words(explanation),
        fix=NO_FIT_STEP if result.status == "cannot-fit" else JUDGE_STEP,
        fix_label="next step" if result.status == "cannot-fit" else "verdict",
    )


def _with_tokens(label: str, tokens: int) -> str:
    """``label (N tokens)``, inside the label's own parentheses when it ends with some."""
    if label.endswith(")"):
        return f"{label[:-1]}; {tokens:,} tokens)"
    return f"{label} ({tokens:,} tokens)"


def explanation_card(explanation: Explanation) -> Card:
    protected = ", ".join(
        _with_tokens(protection_words(item.why), item.tokens) for item in explanation.protected[:4]
    )
    facts = [("protected", protected)] if protected else []
    if explanation.smallest_target is not None:
        # What the parameters reach with the triggers as they are; the target a fix sets
        # (which may move the trigger too) is the fix's to say.
        facts.append(("best the parameters reach", f"{explanation.smallest_target:,} tokens"))
    return Card(
        title="Explanation",
        budget=explanation.target_tokens,
        facts=tuple(facts),
        reason=summary_words(explanation),
        # A change that fits, checked by re-running (the target bound is a fact above).
        fix=next((s.change for s in explanation.suggestions if s.parameter != "target_tokens"), ""),
    )
