"""Tool-result collapse: replace older tool-call groups by one short assistant line each."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from compactlens.engine.index import GroupKind, MessageIndex, hosted_part_id
from compactlens.engine.plan import Plan
from compactlens.engine.profiles import check_profile, get_profile
from compactlens.engine.result import ProtectedItem
from compactlens.engine.strategies.base import (
    RunContext,
    StageOutcome,
    Variant,
    check_count,
    countdown_variants,
    exclude_until,
    newest_tool_groups,
    open_tool_stage,
    protected_newest,
    protection,
    resolve,
    trigger_dict,
)
from compactlens.engine.triggers import Trigger
from compactlens.engine.vocabulary import COLLAPSE_NOTE_CHARS, change_words, plural
from compactlens.engine.wire_index import wire_tool_results
from compactlens.formats._common import parts_and_blocks
from compactlens.model.errors import ConfigError, InputTypeError
from compactlens.model.messages import (
    Message,
    OpaquePart,
    ToolCallPart,
    ToolResultPart,
    is_hosted_tool,
    is_hosted_tool_call,
    is_hosted_tool_result,
    text_message,
)
from compactlens.model.tokens import CharEstimator, estimate_from_lengths

MAX_SUMMARY_CHARS = COLLAPSE_NOTE_CHARS
#: What a one-text assistant message adds to its text when counted: the role and a newline.
_ASSISTANT_TEXT = len("assistant\n")
TRUNCATION_MARKER = "... [truncated]"

ToolGroupFormatter = Callable[[Sequence[Message]], str]


def _cap(prefix: str, body: str, suffix: str, limit: int, *, raw: bool = False) -> str:
    text = f"{prefix}{body}{suffix}"
    if len(text) <= limit:
        return text
    room = max(0, limit - len(prefix) - len(suffix) - len(TRUNCATION_MARKER))
    cut = body[:room].rstrip() if raw else body[:room]
    return f"{prefix}{cut}{TRUNCATION_MARKER}{suffix}"


def _label(name: str, output: str, limit: int, *, raw: bool = False) -> str:
    if raw:  # MAF: the output as it is, the label stripped
        return (f"{name}: {output}" if name else output).strip()
    # Only the first ``limit`` characters of the line can show: fold no more of the
    # output than that (one more tells that it was cut).
    output = fold_whitespace_prefix(output, limit + 1)
    if len(output) > limit:
        return f"{name}: {output}" if name else output
    return f"{name}: {output}".strip() if name else output


def _json_object(text: str) -> dict[str, Any] | None:
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _hosted_name(part: OpaquePart) -> str:
    """A hosted call's tool name: ``tool_name`` / ``name`` of its JSON text, else its first word."""
    shown = _json_object(part.text)
    if shown is not None:
        name = shown.get("tool_name") or shown.get("name")
        return name if isinstance(name, str) else ""
    return part.text.split(" ", 1)[0] if part.text else ""


def _output_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [
            v["text"]
            for v in value
            if isinstance(v, dict) and v.get("type") == "text" and isinstance(v.get("text"), str)
        ]
        if texts:
            return "\n".join(texts)
    return json.dumps(value, ensure_ascii=False, default=str)


def _hosted_output(part: OpaquePart) -> str | None:
    """A hosted result's output text: ``output`` / ``result`` of its JSON text, else its
    plain text; None when it has neither (a call without output, metadata only)."""
    shown = _json_object(part.text)
    if shown is not None:
        for key in ("output", "result"):
            if shown.get(key) is not None:
                return _output_text(shown[key])
        return None
    if is_hosted_tool_result(part) and part.text:
        return part.text
    return None


def format_tool_results(
    messages: Sequence[Message], limit: int = MAX_SUMMARY_CHARS, *, raw: bool = False
) -> str:
    """``[Tool results: get_weather: sunny, 18°C; search_docs: found 3 docs]``, capped.

    Function results and hosted (MCP, provider-executed) results, in message order,
    each labelled with the name of the call it answers. Whitespace runs are folded to
    one space; with ``raw`` (the maf profile) outputs are kept as they are and only
    each label and the cut line are stripped, as MAF writes them.
    """
    prefix, suffix = "[Tool results: ", "]"
    # Only the first ``room + 1`` characters of the labels joined decide the line (all of
    # it, or its cut form): a label is built no longer than what is left of them, and
    # once they are full, later labels are not built at all.
    room = limit - len(prefix) - len(suffix)
    labels: list[str] = []
    size = -2
    for name, output in _named_results(messages):
        if raw:
            label = _label(name, output, limit, raw=True)
        else:
            label = _label_head(name, output, limit, max(0, room - size - 1))
        labels.append(label)
        size += len(label) + 2
        if size > room:
            break
    body = "; ".join(labels) if labels else "no results"
    if size > room and not raw:  # _cap's cut form, without first joining the whole line
        return f"{prefix}{body[: max(0, room - len(TRUNCATION_MARKER))]}{TRUNCATION_MARKER}{suffix}"
    return _cap(prefix, body, suffix, limit, raw=raw)


def _named_results(messages: Sequence[Message]) -> Iterator[tuple[str, str]]:
    """Each result's label name and output text, in message order: read from the wire
    dicts when ``messages`` are unread Chat messages (:func:`wire_tool_results`), else
    from their parts."""
    wire = wire_tool_results(messages)
    if wire is None:
        return _part_results(messages)
    names, results = wire
    return ((names.get(call_id) or name or "", output) for call_id, name, output in results)


def _part_results(messages: Sequence[Message]) -> Iterator[tuple[str, str]]:
    """:func:`_named_results` from the messages' parts (any message, hosted results too)."""
    names: dict[str, str] = {}
    for m in messages:
        for j, part in enumerate(m.parts):
            if isinstance(part, ToolCallPart):
                names[part.id] = part.name
            elif isinstance(part, OpaquePart) and is_hosted_tool_call(part):
                call_id = hosted_part_id(part, _block(m, j))
                if call_id is not None:
                    names[call_id] = _hosted_name(part)
    for m in messages:
        for j, part in enumerate(m.parts):
            if isinstance(part, ToolResultPart):
                yield names.get(part.call_id) or part.name or "", part.output
            elif isinstance(part, OpaquePart) and is_hosted_tool(part):
                output = _hosted_output(part)
                if output is None:
                    continue
                call_id = hosted_part_id(part, _block(m, j))
                if is_hosted_tool_call(part):
                    name = _hosted_name(part)
                else:
                    name = names.get(call_id, "") if call_id is not None else ""
                yield name, output


def _label_head(name: str, output: str, limit: int, n: int) -> str:
    """``_label(name, output, limit)[:n]`` for ``n <= limit``, folding only the start of
    ``output`` that can show.

    The folded output has no outer whitespace, so the strip of a short label changes it
    only when the name starts with whitespace (left to :func:`_label`) or the output folds
    to nothing (``"name:"``).
    """
    if not name:
        return fold_whitespace_prefix(output, n)
    if name[0].isspace():
        return _label(name, output, limit)[:n]
    if not output or output.isspace():
        return f"{name}:"[:n]
    head = f"{name}: "
    if n <= len(head):
        return head[:n]
    return head + fold_whitespace_prefix(output, n - len(head))


def _block(message: Message, j: int) -> Mapping[str, Any] | None:
    """The wire block of part ``j`` (read only for hosted parts, which carry their id there)."""
    return parts_and_blocks(message)[j][1]


def fold_whitespace_prefix(text: str, n: int) -> str:
    """``" ".join(text.split())[:n]`` without folding all of a long ``text``.

    A start already spaced as the fold spaces it (:func:`_spaced_start`) is taken as it
    is. Otherwise a prefix is folded: that gives the same words, except that the last one
    may be cut where the prefix ends; everything before that word is exact. The prefix
    grows until the exact part holds ``n`` characters.
    """
    spaced = _spaced_start(text, n)
    if spaced is not None:
        return spaced
    size = n + n // 4 + 64
    while size < len(text):
        folded = _fold(text[:size])
        # The last word may be cut where the prefix ends: the exact part stops before it.
        exact = len(folded) if text[size].isspace() else max(0, folded.rfind(" "))
        if exact >= n:
            return folded[:n]
        size *= 2
    return _fold(text)[:n]


def _spaces_only(text: str) -> bool:
    """True when ``text`` is ASCII and its only whitespace is spaces and newlines (the ASCII
    whitespace of ``str.split`` is those and the eight looked for here, each found by a
    byte search: much cheaper than looking at every character)."""
    return (
        text.isascii()
        and "\t" not in text
        and "\r" not in text
        and "\x0b" not in text
        and "\x0c" not in text
        and "\x1c" not in text
        and "\x1d" not in text
        and "\x1e" not in text
        and "\x1f" not in text
    )


def _fold(text: str) -> str:
    """``" ".join(text.split())``: for a text of :func:`_spaces_only`, by writing newlines
    as spaces and each run of spaces as one, which makes no object per word as a split
    does (about a sixth of the collapse on outputs of indented code)."""
    if _spaces_only(text):
        return _SPACE_RUN.sub(" ", text.replace("\n", " ")).strip(" ")
    return " ".join(text.split())


#: A run of two or more spaces, written as two spaces and any more ("   *", not "  +"): the
#: regular expression engine then looks for its two-space start before trying a match,
#: instead of trying one at each single space between words (the fold a fifth faster).
_SPACE_RUN = re.compile("   *")


def _spaced_start(text: str, n: int) -> str | None:
    """The fold's first ``n`` characters when the text's first ``n + 1`` (all of it when
    shorter) are :func:`_spaces_only` and neither start (nor, when that is all, end) with
    whitespace nor hold two whitespace characters in a row: each space or newline is then
    a whole run of one, which the fold writes as one space. None when not (looking at the
    characters is much cheaper than splitting the text into words)."""
    if not text or text[0].isspace() or text.find("  ", 0, n + 1) >= 0:
        return None  # (indented text fails at its first double space, before any copy)
    head = text[: n + 1]
    if not head.isascii():
        return None
    if len(text) <= n and head[-1].isspace():
        return None
    spaced = head.replace("\n", " ")
    if "  " in spaced or not _spaces_only(spaced):
        return None
    return spaced[:n]


def format_tool_names(messages: Sequence[Message], limit: int = MAX_SUMMARY_CHARS) -> str:
    """``[Tool calls: get_weather, search_docs]``: names only, capped."""
    names = [c.name for m in messages for c in m.tool_calls]
    if not names:
        names = [r.name or r.call_id for m in messages for r in m.tool_results]
    return _cap("[Tool calls: ", ", ".join(names) or "none", "]", limit)


FORMATTERS: dict[str, Callable[[Sequence[Message], int], str]] = {
    "results": format_tool_results,
    "names": format_tool_names,
}


@dataclass(frozen=True, slots=True)
class ToolResultCompactionStrategy:
    """Collapse older tool-call groups into one assistant message each.

    The newest ``keep_last_tool_call_groups`` tool-call groups stay verbatim. With a
    ``trigger``, groups are collapsed oldest first until the ``target`` holds and
    the newest ``minimum_preserved`` non-system groups are never touched; without
    one (the reference Python style), every eligible group is collapsed. The
    ``formatter`` is ``"results"`` (default), ``"names"`` or a callable taking the
    group's messages. Collapsing again is a no-op: collapsed lines are plain text.
    With ``skip_if_larger`` (default; unset takes the ``profile``'s, off under ``maf``)
    a group whose collapsed line would cost more tokens than the group itself is left
    verbatim (the stage event says how many).
    """

    trigger: Trigger | None = None
    target: Trigger | None = None
    keep_last_tool_call_groups: int = 1
    minimum_preserved: int = 2
    formatter: str | ToolGroupFormatter = "results"
    max_chars: int = MAX_SUMMARY_CHARS
    skip_if_larger: bool | None = None
    label: str = "tool_result_collapse"
    profile: str | None = None

    def __post_init__(self) -> None:
        check_count(self.keep_last_tool_call_groups, "keep_last_tool_call_groups")
        check_count(self.minimum_preserved, "minimum_preserved")
        check_count(self.max_chars, "max_chars", minimum=len(TRUNCATION_MARKER) + 16)
        if self.profile is not None:
            check_profile(self.profile)
        if isinstance(self.formatter, str) and self.formatter not in FORMATTERS:
            raise ConfigError(f"formatter must be one of {sorted(FORMATTERS)} or a callable")

    @property
    def name(self) -> str:
        return self.label

    @property
    def skips_larger(self) -> bool:
        """``skip_if_larger``, or the profile's default when unset."""
        if self.skip_if_larger is not None:
            return self.skip_if_larger
        return get_profile(self.profile).skip_if_larger

    def _formatter(self) -> ToolGroupFormatter:
        """The formatter of a group's messages, its settings bound."""
        if self.formatter == "results" and get_profile(self.profile).raw_tool_results:
            return partial(format_tool_results, limit=self.max_chars, raw=True)
        if isinstance(self.formatter, str):
            named, limit = FORMATTERS[self.formatter], self.max_chars
            return lambda messages: named(messages, limit)
        custom = self.formatter

        def checked(messages: Sequence[Message]) -> str:
            text = custom(messages)
            if not isinstance(text, str):
                raise InputTypeError("a tool-group formatter must return a string")
            return text

        return checked

    def _lines(self, ix: MessageIndex, ctx: RunContext) -> Callable[[int], tuple[Message, int]]:
        """A group's collapsed line and its tokens, by group id; kept in the index's memo
        of lines (:mod:`compactlens.engine.line_memo`) for the next plan over it, and
        taken from there when a plan built it before. A custom formatter's lines are not
        kept (it may not be a pure function of the group)."""
        format_group = self._formatter()
        memo = ix.lines if ctx.tokenizer is ix.tokenizer else None
        if not isinstance(self.formatter, str):
            memo = None
        raw = self.formatter == "results" and get_profile(self.profile).raw_tool_results
        settings = (self.formatter, raw, self.max_chars)

        messages, groups = ix.messages, ix.groups
        count = ctx.count
        estimator = ctx.tokenizer if type(ctx.tokenizer) is CharEstimator else None

        def line(gid: int) -> tuple[Message, int]:
            key = (gid, settings)
            got = memo.get(key) if memo is not None else None
            if got is not None:
                return got
            text = format_group([messages[k] for k in groups[gid].indices])
            message = text_message("assistant", text)
            # The estimate of "assistant", a newline and the text (count_messages's).
            tokens = (
                count(message)
                if estimator is None
                else estimate_from_lengths(estimator, [len(text) + _ASSISTANT_TEXT])[0]
            )
            if memo is not None:
                memo.put(key, message, tokens, len(text))
            return message, tokens

        return line

    def _protected(self, plan: Plan) -> tuple[set[int], set[int]]:
        newest_tools = newest_tool_groups(plan, self.keep_last_tool_call_groups)
        newest = protected_newest(plan, self.minimum_preserved) if self.trigger else set()
        return newest_tools, newest

    def run(self, plan: Plan, ctx: RunContext) -> StageOutcome:
        trigger, target = resolve(self.trigger, self.target)
        newest_tools, newest = self._protected(plan)
        stage, candidates, idle = open_tool_stage(
            plan, ctx, self.name, trigger, target, newest_tools | newest, untouched_only=True
        )
        if idle is not None:
            return idle
        ix = plan.index

        kept_larger = 0
        skips_larger = self.skips_larger
        line = self._lines(ix, ctx)

        def collapse(gid: int) -> bool:
            nonlocal kept_larger
            message, tokens = line(gid)
            if skips_larger and tokens > ix.groups[gid].tokens:
                kept_larger += 1
                return False
            plan.collapse(gid, message, tokens, self.name, "older tool-call group")
            return True

        changed = exclude_until(plan, candidates, target, self.name, "", step=collapse)
        met = target is None or target(plan)
        detail = (
            f"{plural(kept_larger, 'group')} kept verbatim: "
            f"{'its' if kept_larger == 1 else 'their'} collapsed line would be larger"
            if kept_larger
            else ""
        )
        if trigger is None and not changed:
            stage.done("skipped", 0, True, detail)
            return StageOutcome(False, True, None)
        stage.done("applied" if met else "target-missed", changed, met, detail)
        return StageOutcome(True, met, target)

    def protections(self, plan: Plan) -> list[ProtectedItem]:
        newest_tools, newest = self._protected(plan)
        items = [
            protection(
                plan,
                "keep_last_tool_call_groups",
                newest_tools,
                (
                    "the newest tool call stays verbatim"
                    if self.keep_last_tool_call_groups == 1
                    else f"the newest {self.keep_last_tool_call_groups} tool calls stay verbatim"
                ),
            ),
            protection(plan, "minimum_preserved", newest, "the newest non-system groups"),
            protection(
                plan,
                "not_a_tool_call",
                [g.id for g in plan.index.groups if g.kind is not GroupKind.TOOL_CALL],
                "Tool-result collapse only collapses tool-call groups",
            ),
        ]
        return [i for i in items if i is not None]

    def variants(self) -> list[Variant]:
        out = countdown_variants(
            self, "keep_last_tool_call_groups", self.keep_last_tool_call_groups
        )
        out.extend(countdown_variants(self, "minimum_preserved", self.minimum_preserved))
        if self.formatter == "results":
            out.append(
                Variant(
                    change_words("formatter", "names", "tool_result_collapse"),
                    "formatter",
                    "names",
                    replace(self, formatter="names"),
                )
            )
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "tool_result_collapse",
            "trigger": trigger_dict(self.trigger),
            "target": trigger_dict(self.target),
            "keep_last_tool_call_groups": self.keep_last_tool_call_groups,
            "minimum_preserved": self.minimum_preserved,
            "formatter": self.formatter if isinstance(self.formatter, str) else "custom",
            "max_chars": self.max_chars,
            "skip_if_larger": self.skips_larger,
        } | ({"profile": self.profile} if self.profile is not None else {})
