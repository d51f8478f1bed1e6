"""Conversations that read like conversations: role-aware messages and bound groups.

Each message is a chat bubble with its role's icon and colour; text reads as prose,
reasoning is folded and dimmed, a tool call is a collapsible card (name, id, arguments)
and a tool result is folded with its size. The messages of one group sit together in one
bordered box under the group's badges. Every transcript string is shown inert: prose is
escaped line by line (:func:`~compactlens_inspector.views.message.prose`), bodies of
calls and results are code blocks, and no HTML is ever written from transcript text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import streamlit as st

from compactlens import Message, MessageIndex
from compactlens.engine import GroupDecision
from compactlens.model import ToolCallPart
from compactlens_inspector.components import badges
from compactlens_inspector.style.numbers import num
from compactlens_inspector.style.safety import clip, md_escape, neutralize_markdown
from compactlens_inspector.style.wording import reason_words, stage_words
from compactlens_inspector.views.message import (
    Block,
    MessageCard,
    call_label,
    call_names,
    message_card,
    prose,
    size,
)

#: Text longer than this is cut, with a fold (a popover inside a fold) holding all of it.
TEXT_LIMIT = 2500
#: Bodies of calls and results longer than this scroll inside a fixed-height block.
SCROLL_LIMIT = 2500


def _show_all(text: str, limit: int, nested: bool) -> None:
    label = f"Show all ({size(len(text))}, {num(len(text) - limit)} more)"
    with st.popover(label) if nested else st.expander(label):
        st.code(text, language=None, wrap_lines=True)


def show_text(
    text: str, *, markdown: bool = False, limit: int = TEXT_LIMIT, nested: bool = False
) -> None:
    """Transcript prose, shown literally (escaped line by line); with ``markdown``,
    rendered as neutralized Markdown (no raw HTML, no script links, no remote images).

    Text over ``limit`` characters is cut, with a fold (a popover when ``nested``) that
    holds all of it verbatim.
    """
    if not text:
        st.caption("(empty)")
        return
    shown, cut = clip(text, limit)
    st.markdown(neutralize_markdown(shown) if markdown else prose(shown))
    if cut:
        _show_all(text, limit, nested)


def _code(body: str, language: str | None, limit: int) -> None:
    if not body:
        st.caption("(empty)")
        return
    shown, cut = clip(body, limit)
    if len(shown) > SCROLL_LIMIT:
        st.code(shown, language=language, wrap_lines=True, height=360)
    else:
        st.code(shown, language=language, wrap_lines=True)
    if cut:
        _show_all(body, limit, nested=True)


def _block(block: Block, *, markdown: bool, limit: int) -> None:
    if block.kind == "text":
        show_text(block.body, markdown=markdown, limit=limit)
    elif block.kind == "reasoning":
        with st.expander(f":gray[{md_escape(block.title)}]", icon=":material/psychology:"):
            shown, cut = clip(block.body, limit)
            st.caption(prose(shown))
            if cut:
                _show_all(block.body, limit, nested=True)
    elif block.kind == "tool_call":
        with st.expander(f"**{md_escape(block.title)}**", icon=":material/build:"):
            _code(block.body, block.language, limit)
    elif block.kind == "tool_result":
        icon = ":material/error:" if block.is_error else ":material/output:"
        with st.expander(md_escape(block.title), icon=icon):
            _code(block.body, None, limit)
    else:
        st.caption(md_escape(block.body))


def card_header(card: MessageCard) -> str:
    """The message's first line: role badge, position, name, tokens (all escaped)."""
    head = badges.badge(card.label, card.badge)
    if card.position is not None:
        head += f" **#{card.position}**"
    if card.name:
        head += f" · {md_escape(card.name)}"
    if card.tokens is not None:
        head += f" · {badges.tokens(card.tokens)}"
    return head


def show_card(card: MessageCard, *, markdown: bool = False, limit: int = TEXT_LIMIT) -> None:
    """One message as a chat bubble: its header, then each block."""
    with st.chat_message(card.role, avatar=card.icon):
        st.markdown(card_header(card))
        for block in card.blocks:
            _block(block, markdown=markdown, limit=limit)


def show_message(
    message: Message,
    position: int | None,
    tokens: int | None,
    *,
    markdown: bool = False,
    call_names: Mapping[str, str] | None = None,
    limit: int = TEXT_LIMIT,
) -> None:
    show_card(message_card(message, position, tokens, call_names), markdown=markdown, limit=limit)


def group_tools(index: MessageIndex, gid: int, limit: int = 4) -> list[str]:
    """The labels of a group's tool calls (``bash: git log``), at most ``limit``."""
    out: list[str] = []
    for k in index.groups[gid].indices:
        for p in index.messages[k].parts:
            if isinstance(p, ToolCallPart):
                out.append(call_label(p.name, p.arguments))
    return out[:limit] + ([f"+{len(out) - limit} more"] if len(out) > limit else [])


def group_header(index: MessageIndex, gid: int) -> str:
    """A group's badges: kind, turn, tokens, id and span, flags, tools (escaped)."""
    g = index.groups[gid]
    span = f"message {g.first}" if g.first == g.last else f"messages {g.first}–{g.last}"
    head = (
        f"{badges.kind(g.kind.value)} {badges.turn(g.turn)} {badges.tokens(g.tokens)} "
        f"**group {g.id}** · {span}"
    )
    for f in sorted(g.flags):
        head += f" {badges.flag(f)}"
    tools = group_tools(index, gid)
    if tools:
        head += " · " + ", ".join(md_escape(n) for n in tools)
    return head


def decision_line(d: GroupDecision) -> str:
    return (
        f"{badges.decision(d.action)} {md_escape(reason_words(d.reason))}"
        + (f" · by {md_escape(stage_words(d.strategy))}" if d.strategy else "")
        + f" · {num(d.tokens_before)} → {num(d.tokens_after)} tokens"
    )


def show_groups(
    index: MessageIndex,
    group_ids: Sequence[int],
    *,
    markdown: bool = False,
    decisions: Mapping[int, GroupDecision] | None = None,
    expanded: bool = True,
) -> None:
    """Groups, each in one bordered box: its badges, its decision, its messages."""
    names = call_names(index)
    for gid in group_ids:
        d = decisions.get(gid) if decisions else None
        with st.container(border=True):
            st.markdown(group_header(index, gid))
            if d is not None:
                st.markdown(decision_line(d))
            if expanded:
                for k in index.groups[gid].indices:
                    show_message(
                        index.messages[k],
                        k,
                        index.message_tokens[k],
                        markdown=markdown,
                        call_names=names,
                    )
