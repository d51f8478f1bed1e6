"""An offline, deterministic summarizer that quotes instead of paraphrasing.

:class:`ExtractiveSummarizer` needs no model and no key: it is the inspector's
default so that the demo always works. Its summary is labelled as extractive (a
first line ``[Extractive summary ...]`` and ``model="extractive"``) and keeps, in
order of priority: the latest user request, any earlier summary, where the
assistant stopped, the other user requests, failures, identifiers (paths, URLs,
ids, numbers with units), tool calls with their key results, and the assistant's
decision sentences. It fits its output allowance measured the way
:func:`compactlens.compact.contract.estimate_tokens` measures it (UTF-16 units of the JSON
text / 4), so with the default counter its summary never overflows the target.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from compactlens.model.messages import (
    SUMMARY_PREFIX,
    ApprovalRequestPart,
    ApprovalResponsePart,
    Message,
)
from compactlens.model.noise import noise_kind
from compactlens.summarizers.base import FINISH_STOP, SummaryRequest, SummaryResponse

HEADER = "[Extractive summary: quoted from the conversation offline, no model was used]"
SHORT_HEADER = "[extractive]"

_SECTIONS = (
    "Earlier summary:",
    "User requests:",
    "Assistant decisions and statements:",
    "Tool calls and results:",
    "Failures:",
    "Identifiers:",
    "Where it stopped:",
)

_DECISION = re.compile(
    r"\b(decid\w*|chose|choose|will|going to|because|since|plan\w*|next|should|must|"
    r"fix\w*|found|agreed?|use|using|instead|error|fail\w*|done|completed?|created?|"
    r"updated?|added|removed|renamed)\b",
    re.IGNORECASE,
)
_ERROR = re.compile(r"\b(error|exception|traceback|failed|failure|denied|not found)\b", re.I)
_IDENT_PATTERNS = (
    re.compile(r"https?://[^\s\"'<>)\]]+"),
    re.compile(r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+"),
    re.compile(
        r"\b[\w-]+\.(?:py|js|ts|tsx|jsx|json|md|txt|yaml|yml|toml|csv|sql|sh|go|rs|"
        r"java|rb|c|h|cpp|html|css|ini|cfg|lock|log)\b"
    ),
    re.compile(r"`([^`\n]{2,80})`"),
    re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b"),
    re.compile(r"\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,12}\b"),
    re.compile(r"(?<!\w)#\d+\b"),
    re.compile(r"\b[0-9a-f]{7,40}\b"),
    re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b"),
    re.compile(r"\b\d+(?:[.,]\d+)?\s?(?:%|ms|s|KB|MB|GB|TB|k|USD|EUR|tokens?)(?!\w)"),
    re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b"),
    re.compile(r"\b[a-z]+[A-Z][A-Za-z0-9]*\b"),
)
_TIMESTAMP_PIECE = re.compile(r"^\d+T\d+$")
#: A collapsed tool-result line that quotes no output: ``[Tool results: execute_bash:]``.
#: (Names hold no space, ``:`` or ``;``, so each repeat takes one whole ``name:``: linear.)
_EMPTY_RESULTS = re.compile(r"^\[Tool results: (?:[^\s:;\[\]]+:(?:; )?)*(?:no results)?\]$")
_ARG_KEYS = ("path", "file", "filename", "url", "id", "name", "query", "command", "branch")


def _cost(text: str) -> int:
    """UTF-16 units ``text`` adds to a JSON string (escapes included)."""
    encoded = json.dumps(text, ensure_ascii=False)[1:-1]
    return len(encoded.encode("utf-16-le", "surrogatepass")) // 2


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + "…"


def _fit(text: str, budget: int) -> str:
    """The longest prefix of ``text`` whose JSON cost is at most ``budget``."""
    if _cost(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _cost(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo]


def _sentences(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])\s+|\n+", text)
    return [p.strip() for p in parts if p.strip()]


@dataclass(frozen=True, slots=True)
class _Item:
    """One quoted line: chosen by (priority, rank), printed by (section, order)."""

    section: int
    priority: int
    rank: int
    order: int
    text: str


def _identifiers(texts: Iterable[str], limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for text in texts:
        for pattern in _IDENT_PATTERNS:
            for match in pattern.finditer(text):
                if text[match.end() : match.end() + 2] == '":':
                    continue  # a JSON key, not an identifier
                value = match.group(1) if pattern.groups else match.group(0)
                value = value.strip().rstrip(".,;:")
                if not 2 <= len(value) <= 120 or _TIMESTAMP_PIECE.match(value):
                    continue
                if noise_kind(value) not in (None, "number"):
                    continue  # an address, a hash, a date, a progress percentage...
                # (a long number stays: here nothing says whether a tool printed it)
                if any(value in known for known in seen):
                    continue
                seen[value] = None
                if len(seen) >= limit:
                    return list(seen)
    return list(seen)


def _arg_summary(arguments: str, limit: int) -> tuple[str, list[str]]:
    """A short rendering of tool arguments and the identifier-like values they hold."""
    values: list[str] = []
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return _clip(arguments, limit), values
    if isinstance(parsed, dict):
        for key, value in parsed.items():
            scalar = isinstance(value, str | int | float) and not isinstance(value, bool)
            if scalar and any(k in key.lower() for k in _ARG_KEYS):
                values.append(str(value))
        rendered = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in parsed.items())
        return _clip(rendered, limit), values
    return _clip(json.dumps(parsed, ensure_ascii=False), limit), values


class ExtractiveSummarizer:
    """Offline, deterministic, model-free summarizer (labelled as extractive).

    ``user_chars``, ``result_chars``, ``args_chars`` and ``statement_chars`` cap the
    length of each quoted excerpt; ``max_identifiers`` caps the identifier list.
    """

    name = "extractive"
    label = "Extractive (offline, no model)"
    model = "extractive"
    #: No model call, no cost, same answer every time: explanations may re-run it.
    offline = True

    def __init__(
        self,
        *,
        user_chars: int = 300,
        result_chars: int = 160,
        args_chars: int = 120,
        statement_chars: int = 220,
        max_identifiers: int = 40,
    ) -> None:
        self.user_chars = user_chars
        self.result_chars = result_chars
        self.args_chars = args_chars
        self.statement_chars = statement_chars
        self.max_identifiers = max_identifiers

    def _items(self, messages: tuple[Message, ...]) -> list[_Item]:
        items: list[_Item] = []
        user_idx = [
            i
            for i, m in enumerate(messages)
            if m.role == "user" and not m.is_summary and m.text.strip() and not m.tool_results
        ]
        latest_user = user_idx[-1] if user_idx else None
        calls: dict[str, tuple[int, str, str]] = {}
        results: dict[str, tuple[str, bool]] = {}
        ident_texts: list[str] = []
        last_assistant: int | None = None
        seq = 0
        for i, m in enumerate(messages):
            if m.is_summary:
                body = (
                    m.text[len(SUMMARY_PREFIX) :] if m.text.startswith(SUMMARY_PREFIX) else m.text
                )
                lines = [ln.strip() for ln in body.splitlines() if ln.strip()]
                for line in lines:
                    if line.startswith(("[Extractive summary", SHORT_HEADER)) or line in _SECTIONS:
                        continue
                    seq += 1
                    items.append(_Item(0, 2, seq, seq, "  " + _clip(line, 400)))
                ident_texts.append(body)
                continue
            text = m.text.strip()
            if m.role == "user" and text and not m.tool_results:
                latest = i == latest_user
                label = "(latest) " if latest else ""
                line = f"- {label}{_clip(text, self.user_chars)}"
                items.append(_Item(1, 1 if latest else 3, -i, i, line))
                ident_texts.append(text)
            elif m.role == "assistant" and text and not _EMPTY_RESULTS.match(text):
                last_assistant = i
                chosen = [s for s in _sentences(text) if _DECISION.search(s)][:2]
                if not chosen:
                    chosen = _sentences(text)[:1]
                for k, sentence in enumerate(chosen):
                    line = f"- {_clip(sentence, self.statement_chars)}"
                    items.append(_Item(2, 5, -i, i * 10 + k, line))
                ident_texts.append(text)
            elif m.is_system and text:
                line = f"- (system) {_clip(text, self.statement_chars)}"
                items.append(_Item(2, 4, -i, i * 10, line))
            for call in m.tool_calls:
                args, values = _arg_summary(call.arguments, self.args_chars)
                calls[call.id] = (i, call.name, args)
                ident_texts.extend(values)
            for res in m.tool_results:
                results[res.call_id] = (res.output, res.is_error)
                ident_texts.append(res.output[:2000])
            for part in m.parts:
                if isinstance(part, ApprovalRequestPart):
                    what = part.name or part.call_id or part.id
                    items.append(_Item(3, 4, -i, i * 10, f"- approval requested for {what}"))
                elif isinstance(part, ApprovalResponsePart):
                    verdict = "granted" if part.approved else "denied"
                    reason = f": {_clip(part.reason, 120)}" if part.reason else ""
                    items.append(_Item(3, 4, -i, i * 10 + 1, f"- approval {verdict}{reason}"))
        for k, (call_id, (i, name, args)) in enumerate(calls.items()):
            output, is_error = results.get(call_id, ("", False))
            first = next((ln for ln in output.splitlines() if ln.strip()), "")
            if call_id not in results:
                outcome = "(no result)"
            elif is_error:
                outcome = f"ERROR {_clip(first, self.result_chars)}"
            else:
                outcome = _clip(first, self.result_chars) or "(empty result)"
            items.append(_Item(3, 4, -i, i * 10 + 2 + k, f"- {name}({args}) -> {outcome}"))
            if is_error or (output and _ERROR.search(output[:500])):
                line = f"- {name} ({call_id}): {_clip(first, self.result_chars)}"
                items.append(_Item(4, 3, -i, i, line))
        for k, ident in enumerate(_identifiers(ident_texts, self.max_identifiers)):
            items.append(_Item(5, 3, k, k, f"- {ident}"))
        if last_assistant is not None:
            text = messages[last_assistant].text.strip()
            items.append(_Item(6, 2, 0, 0, f"- {_clip(text, self.statement_chars * 2)}"))
        return items

    def compose(self, messages: tuple[Message, ...], budget_units: int) -> str:
        """The summary text for ``messages`` in at most ``budget_units`` JSON UTF-16 units."""
        items = self._items(messages)
        header_cost = _cost(HEADER + "\n")
        if budget_units < header_cost + 24:
            best = min(items, key=lambda it: (it.priority, it.rank), default=None)
            text = f"{SHORT_HEADER} {best.text.lstrip('- ').strip()}" if best else SHORT_HEADER
            return _fit(text, budget_units).strip()
        used = header_cost
        chosen: list[_Item] = []
        opened: set[int] = set()
        for item in sorted(items, key=lambda it: (it.priority, it.rank, it.section)):
            cost = _cost(item.text + "\n")
            if item.section not in opened:
                cost += _cost(_SECTIONS[item.section] + "\n")
            if used + cost <= budget_units:
                used += cost
                chosen.append(item)
                opened.add(item.section)
        lines = [HEADER]
        for section, title in enumerate(_SECTIONS):
            members = sorted(
                (it for it in chosen if it.section == section), key=lambda it: it.order
            )
            if members:
                lines.append(title)
                lines.extend(it.text for it in members)
        return "\n".join(lines)

    def summarize(self, request: SummaryRequest) -> SummaryResponse:
        budget = max(request.max_output_tokens, 0) * 4
        text = self.compose(request.messages, budget)
        return SummaryResponse(
            text=text, usage=None, finish_reason=FINISH_STOP, has_tool_call=False, model=self.model
        )

    async def asummarize(self, request: SummaryRequest) -> SummaryResponse:
        return self.summarize(request)


def estimated_tokens(text: str) -> int:
    """The tokens ``text`` adds inside JSON, the way the default estimate counts."""
    return math.ceil(_cost(text) / 4)


__all__ = ["HEADER", "ExtractiveSummarizer", "estimated_tokens"]
