"""The session's incremental prefix digest: always the digest ``prefix_digest`` gives (so
checkpoints written before it still restore), whatever the history does between calls."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import messages_exceed, tokens_exceed
from compactlens.formats import from_caller
from compactlens.model.errors import ConfigError
from compactlens.model.messages import Message, TextPart, ToolCallPart, ToolResultPart
from compactlens.session import (
    Checkpoint,
    CompactionSession,
    InMemoryCheckpointStore,
    JsonFileCheckpointStore,
)
from compactlens.session.checkpoints import prefix_digest
from compactlens.session.digest import MAX_STATES, PrefixDigest
from compactlens.summarizers import FakeSummarizer

KEY = "conversation-26"

# Quotes, escapes, non-ASCII and a lone surrogate: what the canonical JSON must spell alike.
TEXT = st.text(alphabet=st.sampled_from(["a", "b", " ", '"', "\\", "é", "😀", "\n", "\ud800"]))
PARTS = st.one_of(
    st.builds(TextPart, TEXT),
    st.builds(ToolCallPart, st.sampled_from(["c1", "c2"]), st.sampled_from(["ls", "cat"]), TEXT),
    st.builds(ToolResultPart, st.sampled_from(["c1", "c2"]), TEXT, is_error=st.booleans()),
)
MESSAGES = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    parts=st.lists(PARTS, max_size=3).map(tuple),
    name=st.none() | st.sampled_from(["alice", "bob"]),
)


def copied(m: Message) -> Message:
    """An equal message that is another object (what reading the same history again gives)."""
    return dataclasses.replace(m)


OPS = st.one_of(
    st.tuples(st.just("append"), st.lists(MESSAGES, min_size=1, max_size=4)),
    st.tuples(st.just("rewind"), st.integers(min_value=0, max_value=40)),
    st.tuples(st.just("edit"), st.integers(min_value=0, max_value=40), MESSAGES),
    st.tuples(st.just("reread"), st.none()),
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(OPS, min_size=1, max_size=25), data=st.data())
def test_the_incremental_digest_is_prefix_digest(ops: list[Any], data: st.DataObject) -> None:
    digest = PrefixDigest()
    history: list[Message] = []
    for op, arg, *rest in ops:
        if op == "append":
            history = [*history, *arg]
        elif op == "rewind":
            history = history[: min(arg, len(history))]
        elif op == "edit" and history:
            history = list(history)
            history[arg % len(history)] = rest[0]
        elif op == "reread":
            history = [copied(m) for m in history]
        # The session asks for the whole history and for shorter prefixes (a baseline, a
        # checkpoint's prefix) in the same call.
        short = data.draw(st.integers(min_value=0, max_value=len(history)), label="length")
        assert digest.digest(history, short) == prefix_digest(history[:short])
        assert digest.digest(tuple(history)) == prefix_digest(history)


def test_states_kept_are_bounded_and_cleared() -> None:
    digest = PrefixDigest()
    history = [Message("user", (TextPart(f"turn {i}"),)) for i in range(50)]
    for n in range(1, 51):
        assert digest.digest(history, n) == prefix_digest(history[:n])
    assert len(digest._states) <= MAX_STATES
    digest.clear()
    assert digest._states == {} and digest._seen == []
    assert digest.digest(history) == prefix_digest(history)
    with pytest.raises(ConfigError, match="outside"):
        digest.digest(history, 51)


def chat(n: int) -> list[dict[str, Any]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": f"message {i} é " + "x" * 40} for i in range(n)]


def session(store: Any, events: list[Any], **kw: Any) -> CompactionSession:
    kw.setdefault("triggers", [messages_exceed(8)])
    return CompactionSession(
        target_tokens=100_000,
        summarizer=FakeSummarizer(text="the summary"),
        keep_last_messages=2,
        store=store,
        key=KEY,
        on_event=events.append,
        **kw,
    )


def test_a_checkpoint_written_before_the_incremental_digest_still_restores(
    tmp_path: Path,
) -> None:
    history = chat(10)
    # The stored digest spelled out independently: SHA-256 of the canonical JSON text.
    canonical = [
        {"content": [{"text": m["content"], "type": "text"}], "role": m["role"]} for m in history
    ]
    text = json.dumps(canonical, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    stored = hashlib.sha256(text.encode("utf-8")).hexdigest()
    replacement = ({"role": "user", "content": "the summary of ten messages"},)
    store = JsonFileCheckpointStore(tmp_path / "cps")
    store.save(KEY, Checkpoint(prefix_length=10, prefix_sha256=stored, replacement=replacement))

    events: list[Any] = []
    fresh = session(JsonFileCheckpointStore(tmp_path / "cps"), events)
    grown = history
    for turn in range(3):  # restored on every call while the history grows
        grown = [*grown, *chat(2)]
        out = fresh.prepare(grown)
        assert out[0] == replacement[0] and len(out) == 1 + 2 * (turn + 1)
    assert [e.type for e in events] == ["restored"] * 3


def test_an_in_place_edit_inside_the_prefix_is_seen() -> None:
    """The caller edits its own message object: identity alone would miss it."""
    store = InMemoryCheckpointStore()
    events: list[Any] = []
    s = session(store, events)
    history = chat(10)
    s.prepare(history)  # compacts and saves a checkpoint of these ten messages
    assert [e.type for e in events] == ["started", "completed"]
    events.clear()
    history = [*history, *chat(2)[:1]]
    s.prepare(history)
    assert [e.type for e in events] == ["restored"]
    events.clear()
    history[3]["content"] = "edited in place"
    s.prepare(history)  # the prefix changed: the checkpoint is dropped, compacted afresh
    assert [e.type for e in events] == ["started", "completed"]
    cp = s.checkpoint()
    assert cp is not None and cp.covers(from_caller(history).messages)


def test_the_usage_baseline_follows_appends_and_drops_on_an_in_place_edit() -> None:
    events: list[Any] = []
    s = session(InMemoryCheckpointStore(), events, triggers=[tokens_exceed(5000)])
    history = chat(4)
    for _ in range(5):
        sent = s.prepare(history)
        s.record_usage(1000)
        history = [*sent, *chat(2)]
        s.prepare(history)
        assert s.baseline_tokens == 1000  # the sent messages are still the prefix
    s.record_usage(4999)
    history[1]["content"] = "changed in place"
    s.prepare([*history, *chat(1)])
    assert events == []  # the plain estimate, far below 5000
    assert s.baseline_tokens is None


def test_reset_releases_what_the_session_kept() -> None:
    s = session(InMemoryCheckpointStore(), [])
    s.prepare(chat(10))
    s.reset()
    assert s._sent_digest._seen == [] and s._history_digest._seen == []
    assert s.checkpoint() is None
