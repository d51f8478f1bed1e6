"""The transcript as groups: badges, token counts, collapsible tool calls, inert text."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import streamlit as st

from compactlens import Message, MessageIndex
from compactlens.engine import GroupDecision
from compactlens.model import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    OpaquePart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from compactlens_inspector.components import badges
from compactlens_inspector.numbers import num
from compactlens_inspector.safety import clip, md_escape, neutralize_markdown

#: Text longer than this is cut, with an expander to see all of it.
TEXT_LIMIT = 2500


def show_text(
    text: str, *, markdown: bool = False, limit: int = TEXT_LIMIT, nested: bool = False
) -> None:
    """Transcript text, verbatim by default (``st.code``); Markdown only when asked, and
    then neutralized (no raw HTML, no script links, no remote images).

    Text over ``limit`` characters is cut, with an expander (a popover when ``nested``
    inside an expander) holding all of it.
    """
    if not text:
        st.caption("(empty)")
        return
    shown, cut = clip(text, limit)
    if markdown:
        st.markdown(neutralize_markdown(shown))
    else:
        st.code(shown, language=None, wrap_lines=True)
    if cut:
        label = f"Show all ({num(len(text))} characters, {num(len(text) - limit)} more)"
        with st.popover(label) if nested else st.expander(label):
            st.code(text, language=None, wrap_lines=True)


def _arguments(raw: str) -> tuple[str, str]:
    try:
        return json.dumps(json.loads(raw), indent=2, ensure_ascii=False), "json"
    except (ValueError, TypeError):
        return raw, "text"


def show_message(
    message: Message,
    position: int,
    tokens: int | None,
    *,
    markdown: bool = False,
    call_names: Mapping[str, str] | None = None,
) -> None:
    """One message: a header line, then each part (tool calls and results collapsible)."""
    head = f"**#{position}** · {badges.badge(message.role, 'gray')}"
    if message.name:
        head += f" · {md_escape(message.name)}"
    if tokens is not None:
        head += f" · {badges.tokens(tokens)}"
    st.markdown(head)
    names = call_names or {}
    for part in message.parts:
        if isinstance(part, TextPart):
            show_text(part.text, markdown=markdown)
        elif isinstance(part, ReasoningPart):
            with st.expander(f"Reasoning ({num(len(part.text))} characters)"):
                show_text(part.text, nested=True)
        elif isinstance(part, ToolCallPart):
            body, lang = _arguments(part.arguments)
            label = f"→ call {md_escape(part.name)} · id {md_escape(part.id)}"
            with st.expander(label):
                # Long arguments scroll inside a fixed-height block.
                if len(body) > TEXT_LIMIT:
                    st.code(body, language=lang, wrap_lines=True, height=400)
                else:
                    st.code(body, language=lang, wrap_lines=True)
        elif isinstance(part, ToolResultPart):
            name = part.name or names.get(part.call_id, "")
            err = " · error" if part.is_error else ""
            label = f"← result{' of ' + md_escape(name) if name else ''} · id "
            label += f"{md_escape(part.call_id)}{err} · {num(len(part.output))} characters"
            with st.expander(label):
                show_text(part.output, nested=True)
        elif isinstance(part, MediaPart):
            what = part.filename or part.url or "inline data"
            st.caption(
                f"Media ({md_escape(part.media_type)}): {md_escape(what[:200])} (not loaded)"
            )
        elif isinstance(part, OpaquePart):
            st.caption(
                f"Opaque provider content ({md_escape(part.provider)} "
                f"{md_escape(part.type)}), carried as is"
            )
        elif isinstance(part, ApprovalRequestPart):
            st.caption(f"Approval requested for {md_escape(part.name or part.call_id or part.id)}")
        elif isinstance(part, ApprovalResponsePart):
            verdict = "granted" if part.approved else "denied"
            reason = f": {md_escape(part.reason)}" if part.reason else ""
            st.caption(f"Approval {verdict}{reason}")


def call_names(index: MessageIndex) -> dict[str, str]:
    return {link.call_id: link.name for link in index.links}


def show_groups(
    index: MessageIndex,
    group_ids: Sequence[int],
    *,
    markdown: bool = False,
    decisions: Mapping[int, GroupDecision] | None = None,
    expanded: bool = True,
) -> None:
    """A list of groups, each in a bordered box with its badges and its messages."""
    names = call_names(index)
    for gid in group_ids:
        g = index.groups[gid]
        span = f"message {g.first}" if g.first == g.last else f"messages {g.first}–{g.last}"
        head = (
            f"{badges.kind(g.kind.value)} {badges.turn(g.turn)} {badges.tokens(g.tokens)} "
            f"**group {g.id}** · {span}"
        )
        for f in sorted(g.flags):
            head += f" {badges.flag(f)}"
        if g.tool_names:
            head += " · tools: " + ", ".join(md_escape(n) for n in g.tool_names[:6])
            if len(g.tool_names) > 6:
                head += f" (+{len(g.tool_names) - 6})"
        d = decisions.get(gid) if decisions else None
        with st.container(border=True):
            st.markdown(head)
            if d is not None:
                st.markdown(
                    f"{badges.decision(d.action)} {md_escape(d.reason)}"
                    + (f" · by {md_escape(d.strategy)}" if d.strategy else "")
                    + f" · {num(d.tokens_before)} → {num(d.tokens_after)} tokens"
                )
            if expanded:
                for k in g.indices:
                    show_message(
                        index.messages[k],
                        k,
                        index.message_tokens[k],
                        markdown=markdown,
                        call_names=names,
                    )
