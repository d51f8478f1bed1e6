"""One vocabulary: how every surface words a stage, parameter, decision, condition and number.

Code names (``keep_last_tool_call_groups``, ``tool_result_collapse``, ``tokens <= 4300``) are
what a user types in a configuration, so config JSON, snippets and ``repr`` keep them. Prose
(headlines, cards, Story mode, tables people read, fix descriptions) uses the words here:
a plain label and a one-line explanation per term, conditions as "at most 4,300 tokens",
plurals that agree ("1 destructive fix is hidden") and one number format.

The strategy registry reads its stage and parameter labels from this module, so the builder,
the command line and the pages word them alike. This module imports nothing of the engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Term:
    """A plain label and a one-line explanation."""

    label: str
    explanation: str = ""


# -- numbers ---------------------------------------------------------------------------------

# A bare integer of four or more digits: not part of a word, an id (call_12345), a
# decimal (0.12345), an already grouped number (12,345) or a version (1.23456).
_BARE = re.compile(r"(?<![\w.,])\d{4,}(?![\w.,]\d|\w)")


def num(value: float) -> str:
    """``8,667`` for 8667 (floats are rounded to a whole number first)."""
    return f"{round(value):,}"


def tokens_words(n: float) -> str:
    """``8,667 tokens`` (``1 token``)."""
    return plural(round(n), "token")


def money(amount: float) -> str:
    """Every cost compactlens shows: ``$1,234.57``, dollars to the cent with thousands
    separators (``-$0.42`` for a negative amount); ``under $0.01`` for an amount that is
    not zero but would round to it (a cost is never shown as ``$0.0042`` or ``$0.4``)."""
    if amount != 0 and abs(amount) < 0.005:
        return "under $0.01"
    cents = round(amount, 2) + 0.0  # -0.0 is shown as $0.00
    return f"-${-cents:,.2f}" if cents < 0 else f"${cents:,.2f}"


def price(amount: float) -> str:
    """A price per million tokens: ``$2.50``, to the cent unless the price itself has finer
    digits (``$0.075``): a rate, not a cost, so it is shown as the price list gives it."""
    if round(amount, 2) == amount:
        return money(amount)
    return f"${amount:,.6f}".rstrip("0")


def share(fraction: float) -> str:
    """A fraction as a whole percentage, ``<1%`` / ``>99%`` rather than a misleading 0 / 100."""
    if 0 < fraction < 0.01:
        return "<1%"
    if 0.99 < fraction < 1:
        return ">99%"
    return f"{fraction:.0%}"


def group_digits(text: str) -> str:
    """``text`` with every bare integer of four or more digits grouped: ``tokens > 60000``
    becomes ``tokens > 60,000``; ids such as ``call_12345`` are left alone."""
    return _BARE.sub(lambda m: f"{int(m.group()):,}", text)


_IRREGULAR = {"fix": "fixes", "match": "matches", "is": "are", "was": "were", "has": "have"}


def plural(n: int, singular: str, many: str | None = None) -> str:
    """``1 group``, ``2 groups``, ``1,204 fixes``: the count (grouped) and the agreeing noun."""
    if n == 1:
        return f"1 {singular}"
    word = (
        many
        or _IRREGULAR.get(singular)
        or (
            singular[:-1] + "ies"
            if singular.endswith("y") and singular[-2:-1] not in "aeiou"
            else singular + ("es" if singular.endswith(("s", "x", "ch", "sh")) else "s")
        )
    )
    return f"{n:,} {word}"


def verb(n: int, singular: str) -> str:
    """The verb agreeing with ``n``: ``verb(1, "is")`` is ``is``, ``verb(2, "is")`` ``are``."""
    return singular if n == 1 else _IRREGULAR.get(singular, singular)


# -- decisions -------------------------------------------------------------------------------

#: The longest note tool-result collapse writes for one tool call, in characters (the
#: strategy's cap, named here so every surface that explains a collapse says the same).
COLLAPSE_NOTE_CHARS = 4096
_COLLAPSE_NOTE = f"one note of at most {COLLAPSE_NOTE_CHARS:,} characters"

#: What happened to a group, keyed by the engine's action name.
DECISIONS: dict[str, Term] = {
    "kept": Term("kept", "Sent to the model as it was."),
    "collapsed": Term(
        "collapsed",
        f"A tool call and its results replaced by {_COLLAPSE_NOTE} (the start of each "
        "result's text, or the tool names only).",
    ),
    "summarized": Term("summarized", "Folded into one summary message."),
    "excluded": Term("dropped", "Left out of the history sent to the model."),
    "inserted": Term("inserted", "Added by compaction, such as a summary message."),
}


def decision_term(action: str) -> Term:
    """The label and explanation of a decision (``excluded`` reads ``dropped``)."""
    return DECISIONS.get(action) or Term(action.replace("_", " "))


def stage_term(name: str) -> Term:
    """The label and explanation of a stage type; a custom label is its own label."""
    return STAGES.get(name) or Term(name)


def decision_words(action: str) -> str:
    """``dropped`` for ``excluded``; the action itself when it has no words."""
    term = DECISIONS.get(action)
    return term.label if term else action.replace("_", " ")


#: Reasons the engine records, in words (other reasons are already prose).
REASONS: dict[str, str] = {
    "summarized": "folded into the summary above",
    "oldest first": "dropped oldest first to meet the target",
    "older tool-call group": f"an older tool call, replaced by {_COLLAPSE_NOTE}",
    "protected or not needed": "protected, or the target was met without it",
}


def reason_words(reason: str) -> str:
    """A decision's reason in words: known short codes are spelled out, bare numbers grouped."""
    return REASONS.get(reason, group_digits(reason))


# -- stages and parameters ----------------------------------------------------------------

#: Every stage type, by its config ``type``.
STAGES: dict[str, Term] = {
    "clamp": Term(
        "Clamp oversized content",
        "Cut every text or tool output above a token limit to its head and tail.",
    ),
    "truncation": Term(
        "Truncation", "Drop the oldest groups one at a time until the target holds."
    ),
    "sliding_window": Term("Sliding window", "Drop whole user turns, oldest first."),
    "tool_result_collapse": Term(
        "Tool-result collapse",
        f"Replace each older tool call and its results by {_COLLAPSE_NOTE}.",
    ),
    "selective_tool_calls": Term(
        "Selective tool-call removal",
        "Remove older tool-call groups entirely (call and results together).",
    ),
    "summarization": Term(
        "Summarization",
        "Replace older groups by one summary message (extractive offline by default).",
    ),
    "pipeline": Term(
        "Pipeline",
        "Run strategies in order, each checking its own trigger against what the previous left.",
    ),
    "provider_repair": Term(
        "Provider repair",
        "Open the conversation with a user turn where the API needs one (a short note that "
        "earlier messages were removed).",
    ),
    "token_budget": Term(
        "Token-budget fallback",
        "If still over the budget, drop the oldest groups (system kept unless allowed).",
    ),
}


def stage_words(name: str) -> str:
    """A stage's label: ``Summarization`` for ``summarization``; a custom label stays."""
    term = STAGES.get(name)
    return term.label if term else name


#: Every parameter people edit, whatever the stage.
PARAMETERS: dict[str, Term] = {
    "keep_last_tool_call_groups": Term(
        "newest tool calls kept verbatim", "The newest tool-call groups that are never changed."
    ),
    "minimum_preserved": Term(
        "newest groups never touched", "The newest non-system groups that are never changed."
    ),
    "max_input_tokens": Term(
        "summarizer input cap (tokens)",
        "The summarizer reads at most this many tokens, oldest groups first.",
    ),
    "max_summary_tokens": Term("summary length cap (tokens)", "The longest summary it writes."),
    "keep_last_turns": Term("newest turns kept", "Start when there are more turns than this."),
    "keep_last_groups": Term("newest groups kept", "Start when there are more groups than this."),
    "token_budget": Term("token budget", "The most tokens the history may hold."),
    "keep_last_messages": Term("newest messages kept verbatim"),
    "target_tokens": Term("target (tokens)", "The most tokens the compacted history may hold."),
    "trigger_tokens": Term("trigger (tokens)", "Compaction starts above this many tokens."),
    "max_tokens": Term(
        "limit per text or tool output (tokens)",
        "Longer content keeps its head and tail, with a marker of what was cut.",
    ),
    "formatter": Term(
        "collapsed line",
        f"What the note ({_COLLAPSE_NOTE}) keeps: the start of each result's text, or the "
        "tool names only.",
    ),
    "max_chars": Term(
        "collapsed line length (characters)",
        "The most characters a collapsed tool call's line keeps of its results.",
    ),
    "preserve_system": Term("system messages kept", "System messages are never dropped."),
    "preserve_first_user_group": Term(
        "first user message kept", "The first user message is never dropped."
    ),
    "drop_system_if_needed": Term(
        "system messages may be dropped", "As a last resort, system messages may go too."
    ),
    "skip_if_larger": Term(
        "keep a group its collapsed line would enlarge",
        "A group whose collapsed line would cost more tokens than the group stays verbatim.",
    ),
    "max_n": Term(
        "start above (reference count)",
        "The reference keyword max_n: start above this many tokens (with a tokenizer) or messages.",
    ),
    "compact_to": Term(
        "stop at (reference count)",
        "The reference keyword compact_to: stop at this many tokens (with a tokenizer) or "
        "messages.",
    ),
    "target_count": Term(
        "messages kept (reference count)",
        "The reference keyword target_count: the non-system messages summarization keeps.",
    ),
    "threshold": Term(
        "messages over the count before it starts",
        "The reference keyword threshold: summarization starts above the kept count plus "
        "this many messages.",
    ),
    "instructions": Term("summarizer instructions", "Extra instructions for the summary."),
}

#: Words for a parameter of one stage type, where the general words would mislead.
STAGE_PARAMETERS: dict[tuple[str, str], Term] = {
    ("sliding_window", "minimum_preserved"): Term(
        "newest turns never dropped", "The newest turns that are never dropped."
    ),
    ("truncation", "minimum_preserved"): Term(
        "newest groups never dropped", "The newest non-system groups that are never dropped."
    ),
    ("summarization", "minimum_preserved"): Term(
        "newest groups never summarized",
        "The newest non-system groups that are never summarized.",
    ),
    ("selective_tool_calls", "keep_last_tool_call_groups"): Term(
        "newest tool calls kept", "The newest tool-call groups that are never removed."
    ),
    ("clamp", "minimum_preserved"): Term(
        "newest groups never clamped",
        "The newest non-system groups that are never clamped (with a trigger).",
    ),
}

#: Words for the values of a choice parameter.
VALUES: dict[tuple[str, str], str] = {
    ("formatter", "names"): "tool names only",
    ("formatter", "results"): "a short text of each result",
}


def parameter_term(name: str, stage_type: str = "") -> Term:
    """The label and explanation of parameter ``name`` (of a stage of ``stage_type``)."""
    found = STAGE_PARAMETERS.get((stage_type, name)) or PARAMETERS.get(name)
    return found or Term(name.replace("_", " "))


def param_words(name: str, stage_type: str = "") -> str:
    """Words for parameter ``name``; the name with spaces for one without words of its own."""
    return parameter_term(name, stage_type).label


def value_words(name: str, value: Any) -> str:
    """A parameter value in words: ``tool names only``, ``on``/``off``, ``4,300``."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return num(value)
    if value is None:
        return "off"
    return VALUES.get((name, str(value)), str(value))


def change_words(name: str, value: Any, stage_type: str = "") -> str:
    """One parameter change in words: ``set "newest tool calls kept verbatim" to 0``; a
    yes/no parameter reads as the thing it allows (``allow system messages may be dropped``
    would not read, so booleans say ``turn on``/``turn off``)."""
    label = param_words(name, stage_type)
    if isinstance(value, bool):
        return f"turn {'on' if value else 'off'} “{label}”"
    return f"set “{label}” to {value_words(name, value)}"


def stage_change_words(stage: str, name: str, value: Any, stage_type: str = "") -> str:
    """A change of one stage's parameter: ``Tool-result collapse: set "collapsed line" to
    tool names only``."""
    return f"{stage_words(stage)}: {change_words(name, value, stage_type or stage)}"


#: Why content was kept, keyed by the engine's protection kind (parameters read as their label).
PROTECTIONS: dict[str, str] = {
    "system": "system messages",
    "not_a_tool_call": "not a tool call (the tool-call stage cannot touch it)",
    "leading-system": "leading system messages",
    "keep-last": "newest messages kept verbatim",
    "later-system": "a later system message",
    "media": "media",
    "opaque": "opaque provider content",
    "unresolved-call": "an unresolved tool call",
    "pending-approval": "a pending approval",
    "tool-pair": "a tool call/result pair",
    "approval-pair": "an approval pair",
    "pinned": "pinned messages",
    "latest user request": "the latest user request",
    "replacement_text": "collapsed lines and summaries",
    "summary_wrapper": "the summary's wrapper",
    "summary_range": "the range to be summarized",
}


def protection_words(kind: str) -> str:
    """Why content was kept, in words: ``newest groups never touched`` for
    ``minimum_preserved``, ``system messages`` for ``system``."""
    if kind in PROTECTIONS:
        return PROTECTIONS[kind]
    if kind in PARAMETERS:
        return PARAMETERS[kind].label
    return kind.replace("_", " ")


#: Why ``compact()`` could not fit, in words, keyed by its ``reason`` code.
CANNOT_FIT_REASONS: dict[str, str] = {
    "no-safe-boundary": "No safe place to end the summary",
    "protected-history": "No room for a summary",
    "incomplete-summary": "The summary was cut off",
    "empty-summary": "The summary came back empty",
    "summary-too-large": "The summary is too long for the room left",
}


def cannot_fit_words(reason: str) -> str:
    """Why ``compact()`` could not fit, in words: ``No room for a summary`` for
    ``protected-history``."""
    return CANNOT_FIT_REASONS.get(reason, reason.replace("-", " ").capitalize())


#: Tool-call pairing problems in words, keyed by ``PairingProblem.kind``.
PAIRING_PROBLEMS: dict[str, str] = {
    "orphan_result": "result without its call",
    "unresolved_call": "call without a result",
    "duplicate_id": "call id used twice",
    "split_pair": "result apart from its call",
    "tool_result_not_next": "result not right after its call",
}


def pairing_words(kind: str) -> str:
    """A pairing problem's kind in words: ``call without a result`` for ``unresolved_call``."""
    return PAIRING_PROBLEMS.get(kind, kind.replace("_", " "))


#: What a run's lifecycle and stage events are, in words (the engine's ``event`` names).
EVENTS: dict[str, str] = {
    "started": "started",
    "skipped": "skipped",
    "applied": "applied",
    "target-missed": "missed its target",
    "failed": "failed",
    "completed": "completed",
}


def event_words(kind: str) -> str:
    """An event in words: ``missed its target`` for ``target-missed``."""
    return EVENTS.get(kind, kind.replace("-", " ").replace("_", " "))


#: The agents and formats that record compactions, in words (a recorded source's prefix).
RECORDERS: dict[str, str] = {
    "claude_code": "Claude Code",
    "codex": "Codex",
    "openhands": "OpenHands",
    "inspect": "Inspect",
    "compactlens": "compactlens",
    "gemini_cli": "Gemini CLI",
    "atif": "ATIF",
    "langchain": "LangChain",
    "anthropic": "Anthropic",
    "openai": "OpenAI",
    "otel": "OpenTelemetry",
}

#: Where a recorded compaction was read from, in words (``RecordedCompaction.source``).
RECORDED_SOURCES: dict[str, str] = {
    "claude_code.compact_boundary": "Claude Code compaction marker",
    "claude_code.compact_summary": "Claude Code compaction summary",
    "claude_code.summary_message": "Claude Code summary",
    "claude_code.compaction_subagent": "Claude Code compaction sub-agent",
    "codex.compacted": "Codex compaction",
    "openhands.condensation": "OpenHands condensation",
    "inspect.compaction": "Inspect compaction",
    "compactlens.recording": "compactlens recording",
    "gemini_cli.set_messages": "Gemini CLI history reset",
    "atif.summarization_step": "ATIF summarization step",
    "anthropic.compaction": "Anthropic compaction block",
    "openai.compaction": "OpenAI compaction item",
    "otel.compaction": "OpenTelemetry compaction event",
}


def source_words(source: str) -> str:
    """Where a recorded compaction was read from, in words: ``Claude Code summary`` for
    ``claude_code.summary_message``; an unknown ``<form>.summary_message`` reads as the
    form's summary, any other source with spaces for its separators."""
    if source in RECORDED_SOURCES:
        return RECORDED_SOURCES[source]
    form, _, what = source.partition(".")
    who = RECORDERS.get(form, form.replace("_", " "))
    if what == "summary_message":
        return f"{who} summary"
    return f"{who} {what.replace('_', ' ')}".strip()


# -- conditions --------------------------------------------------------------------------------

_COMPARISON = re.compile(
    r"\b(tokens|messages|groups|turns|tool_call_groups)\s*(<=|>=|≤|≥|<|>|==|=)\s*([\d,]+)"
)
_OPS = {
    "<=": "at most",
    "≤": "at most",
    ">=": "at least",
    "≥": "at least",
    "<": "fewer than",
    ">": "more than",
    "==": "exactly",
    "=": "exactly",
}
_METRIC_WORDS = {"tool_call_groups": "tool-call groups"}


def comparison_words(op: str, metric: str, n: int) -> str:
    """``at most 4,300 tokens`` for ``("<=", "tokens", 4300)``."""
    noun = _METRIC_WORDS.get(metric, metric)
    if n == 1 and noun.endswith("s"):
        noun = noun[:-1]
    return f"{_OPS.get(op, op)} {num(n)} {noun}"


#: A stage event's condition when the stage has none (``(none)`` on the event).
NO_CONDITION = "(none)"


def condition_words(text: str, absent: str = "always") -> str:
    """A trigger or target description in prose: ``tokens <= 4300`` becomes ``at most 4,300
    tokens``, ``(tokens > 60000 or turns > 40)`` ``more than 60,000 tokens or more than 40
    turns``; ``cache age >= ...`` reads ``cache age at least ...``; other words stay. A
    stage event without a condition (``(none)``) reads ``absent``: ``always`` for a trigger
    (such a stage runs whenever it is reached), a caller's words for a target."""
    if text.strip() == NO_CONDITION:
        return absent

    def one(m: re.Match[str]) -> str:
        return comparison_words(m.group(2), m.group(1), int(m.group(3).replace(",", "")))

    out = _COMPARISON.sub(one, text)
    out = out.replace(" >= ", " at least ").replace(" <= ", " at most ")
    out = out.replace("has_tool_calls", "the history has tool calls")
    if out.startswith("(") and out.endswith(")") and out.count("(") == 1:
        out = out[1:-1]
    return group_digits(out)


def start_words(trigger: str, strategy: str) -> str:
    """When a stage event's stage starts, in prose: its trigger's words, or, without one,
    ``a stage's trigger fires`` for a pipeline (each stage checks its own) and
    ``always`` for a stage."""
    absent = "a stage's trigger fires" if strategy == "pipeline" else "always"
    return condition_words(trigger, absent)


def stop_words(target: str) -> str:
    """Where a stage event's stage stops, in prose: its target's words, or ``no target``."""
    return condition_words(target, "no target")


__all__ = [
    "CANNOT_FIT_REASONS",
    "COLLAPSE_NOTE_CHARS",
    "DECISIONS",
    "EVENTS",
    "PAIRING_PROBLEMS",
    "PARAMETERS",
    "PROTECTIONS",
    "REASONS",
    "RECORDED_SOURCES",
    "RECORDERS",
    "STAGES",
    "STAGE_PARAMETERS",
    "VALUES",
    "Term",
    "cannot_fit_words",
    "change_words",
    "comparison_words",
    "condition_words",
    "decision_term",
    "decision_words",
    "event_words",
    "group_digits",
    "money",
    "num",
    "pairing_words",
    "param_words",
    "parameter_term",
    "plural",
    "protection_words",
    "reason_words",
    "share",
    "source_words",
    "stage_change_words",
    "stage_term",
    "stage_words",
    "start_words",
    "stop_words",
    "tokens_words",
    "value_words",
    "verb",
]
