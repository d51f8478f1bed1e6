"""CompactionSession: restore, triggers, events, checkpoints, overhead and usage calibration."""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from compactlens import (
    CancelToken,
    CompactionSession,
    CompactResult,
    JsonFileCheckpointStore,
    Message,
    SQLiteCheckpointStore,
    cache_likely_cold,
    estimate_tokens,
    messages_exceed,
    tokens_exceed,
)
from compactlens.compact import CompactionCancelled
from compactlens.engine import SummarizationStrategy, always, tokens_at_most
from compactlens.formats import from_caller
from compactlens.model import SUMMARY_PREFIX
from compactlens.session import (
    Checkpoint,
    CheckpointRestored,
    CompactionCompleted,
    CompactionStarted,
    InMemoryCheckpointStore,
)
from compactlens.session.checkpoints import prefix_digest
from compactlens.summarizers import FakeSummarizer

SECRET = "TOP-SECRET-SUMMARY-TEXT"


class Recorder:
    def __init__(self) -> None:
        self.events: list[Any] = []

    def __call__(self, event: Any) -> None:
        self.events.append(event)

    @property
    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def clear(self) -> None:
        self.events.clear()


def make(
    *,
    triggers: Any = None,
    target: int = 10_000,
    summarizer: Any = None,
    store: Any = None,
    **kw: Any,
) -> tuple[CompactionSession, Recorder, FakeSummarizer]:
    rec = Recorder()
    fake = summarizer or FakeSummarizer(text=SECRET)
    ids = itertools.count(1)
    session = CompactionSession(
        triggers=triggers if triggers is not None else [messages_exceed(8)],
        target_tokens=target,
        summarizer=fake,
        keep_last_messages=kw.pop("keep_last_messages", 2),
        store=store,
        on_event=rec,
        id_factory=lambda: f"ev{next(ids)}",
        **kw,
    )
    return session, rec, fake


def test_no_trigger_returns_history_unchanged(b: Any) -> None:
    session, rec, fake = make()
    history = b.chat(6)
    out = session.prepare(history)
    assert out == history and all(a is c for a, c in zip(out, history, strict=True))
    assert rec.events == [] and fake.call_count == 0
    assert session.checkpoint() is None


def test_trigger_compacts_persists_and_emits_in_order(b: Any) -> None:
    session, rec, fake = make()
    history = b.chat(10)
    snapshot = copy.deepcopy(history)
    out = session.prepare(history)
    assert history == snapshot  # the original history is never rewritten
    assert fake.call_count == 1
    assert out[1]["content"] == SUMMARY_PREFIX + SECRET
    assert rec.types == ["started", "completed"]
    started, completed = rec.events
    assert started.evaluation_id == completed.evaluation_id == "ev1"
    assert isinstance(started, CompactionStarted)
    assert started.trigger_index == 0 and started.message_count == 11
    assert started.target_tokens == 10_000
    assert started.tokens_before == estimate_tokens(history)
    assert isinstance(completed, CompactionCompleted)
    assert completed.replaced_range == (1, 9)
    assert completed.tokens_before == estimate_tokens(history)
    assert completed.tokens_after == estimate_tokens(out)
    assert completed.usage is not None
    cp = session.checkpoint()
    assert cp is not None and cp.prefix_length == 11
    assert cp.prefix_sha256 == prefix_digest(from_caller(history).messages)
    assert list(cp.replacement) == out


def test_events_never_carry_summary_or_error_text(b: Any) -> None:
    session, rec, _ = make()
    session.prepare(b.chat(10))
    failing, rec2, _ = make(summarizer=FakeSummarizer(raises=RuntimeError("secret error text")))
    with pytest.raises(RuntimeError):
        failing.prepare(b.chat(10))
    for event in rec.events + rec2.events:
        blob = json.dumps(event.to_dict())
        assert SECRET not in blob and "secret error text" not in blob
    assert rec2.events[-1].to_dict() == {
        "type": "failed",
        "evaluation_id": "ev1",
        "phase": "compact",
        "reason": "error",
        "error_type": "RuntimeError",
    }


def test_first_matching_trigger_index_is_recorded(b: Any) -> None:
    session, rec, _ = make(triggers=[messages_exceed(100), tokens_exceed(10), messages_exceed(1)])
    session.prepare(b.chat(10))
    assert rec.events[0].trigger_index == 1


def test_restore_then_continue_without_a_new_compaction(b: Any) -> None:
    session, rec, fake = make(triggers=[messages_exceed(8)])
    history = b.chat(10)
    first = session.prepare(history)
    rec.clear()
    later = [*history, b.user("next question")]
    out = session.prepare(later)
    assert out == [*first, later[-1]]
    assert out[-1] is later[-1]
    assert rec.types == ["restored"]
    restored = rec.events[0]
    assert isinstance(restored, CheckpointRestored)
    assert restored.source_message_count == 11
    assert restored.replacement_message_count == len(first)
    assert fake.call_count == 1


def test_second_compaction_covers_the_longer_prefix(b: Any) -> None:
    session, rec, fake = make(triggers=[messages_exceed(6)])
    history = b.chat(10)
    session.prepare(history)
    longer = [*history, *b.chat(6, system=False)]
    rec.clear()
    out = session.prepare(longer)
    assert rec.types == ["restored", "started", "completed"]
    assert len({e.evaluation_id for e in rec.events}) == 1
    assert fake.call_count == 2
    assert fake.calls[1].messages[0].is_summary  # the earlier summary is folded in
    cp = session.checkpoint()
    assert cp is not None and cp.prefix_length == len(longer)
    assert sum(1 for m in out if m["content"].startswith(SUMMARY_PREFIX)) == 1


@pytest.mark.parametrize("kind", ["json", "sqlite"])
def test_restore_after_a_restart_with_a_file_store(b: Any, tmp_path: Path, kind: str) -> None:
    def store() -> Any:
        if kind == "json":
            return JsonFileCheckpointStore(tmp_path / "cps")
        return SQLiteCheckpointStore(tmp_path / "cps.sqlite")

    history = b.chat(10)
    s1, _, _ = make(store=store(), key="conv-1")
    first = s1.prepare(history)
    del s1  # "restart": a new process would build everything again

    s2, rec2, fake2 = make(store=store(), key="conv-1")
    later = [*history, b.user("after restart")]
    out = s2.prepare(later)
    assert rec2.types == ["restored"]
    assert fake2.call_count == 0
    assert out == [*first, later[-1]]
    other, rec3, _ = make(store=store(), key="conv-2")
    assert other.prepare(b.chat(3)) == b.chat(3) and rec3.events == []


def test_message_objects_survive_a_file_store(b: Any, tmp_path: Path) -> None:
    history = [b.m_text("system", "rules")]
    for i in range(10):
        history.append(b.m_text("user" if i % 2 == 0 else "assistant", f"msg {i}"))
    s1, _, _ = make(store=JsonFileCheckpointStore(tmp_path))
    first = s1.prepare(history)
    s2, rec, _ = make(store=JsonFileCheckpointStore(tmp_path))
    out = s2.prepare([*history, b.m_text("user", "new")])
    assert rec.types == ["restored"]
    assert all(isinstance(m, Message) for m in out)
    assert out[:-1] == first


def test_rewind_drops_the_checkpoint_silently(b: Any) -> None:
    session, rec, fake = make()
    history = b.chat(10)
    session.prepare(history)
    rec.clear()
    rewound = history[:5]
    out = session.prepare(rewound)
    assert out == rewound
    assert rec.events == []  # silently
    assert session.checkpoint() is None
    assert fake.call_count == 1


def test_edit_of_the_covered_prefix_drops_the_checkpoint(b: Any) -> None:
    session, rec, _ = make(triggers=[messages_exceed(100)])
    history = b.chat(10)
    session2, _, _ = make(store=session.store)
    session2.prepare(history)  # writes the checkpoint
    assert session.checkpoint() is not None
    edited = copy.deepcopy(history)
    edited[3]["content"] = "edited!"
    out = session.prepare([*edited, b.user("new")])
    assert out[:-1] == edited
    assert out[3]["content"] == "edited!"
    assert rec.events == [] and session.checkpoint() is None


def test_request_overhead_fails_before_any_model_call(b: Any) -> None:
    session, rec, fake = make(target=500, triggers=[tokens_exceed(400)])
    history = b.chat(10)
    out = session.prepare(history, overhead_tokens=500)
    assert out == history
    assert fake.call_count == 0
    assert rec.types == ["started", "failed"]
    failed = rec.events[1]
    assert (failed.phase, failed.reason) == ("compact", "request-overhead")


def test_message_target_is_target_minus_overhead(b: Any) -> None:
    seen: list[int] = []

    def strategy(target: int) -> Any:
        seen.append(target)
        return SummarizationStrategy(
            FakeSummarizer(), always, tokens_at_most(target), minimum_preserved=1
        )

    session = CompactionSession(
        triggers=[messages_exceed(2)], target_tokens=1000, strategy=strategy
    )
    out = session.prepare(b.chat(10), overhead_tokens=300)
    assert seen == [700]
    assert out[1]["content"].startswith(SUMMARY_PREFIX)


def test_overhead_counts_in_the_trigger_estimate(b: Any) -> None:
    history = b.chat(10)
    est = estimate_tokens(history)
    session, rec, _ = make(triggers=[tokens_exceed(est + 50)], target=100_000)
    session.prepare(history, overhead_tokens=50)
    assert rec.events == []  # est + 50 is not strictly greater
    session.prepare(history, overhead_tokens=51)
    assert rec.events[0].tokens_before == est + 51
    assert rec.events[0].overhead_tokens == 51


def test_cannot_fit_is_a_failed_event_and_history_is_used(b: Any) -> None:
    session, rec, _ = make(summarizer=FakeSummarizer(text=""))
    history = b.chat(10)
    out = session.prepare(history)
    assert out == history
    assert rec.types == ["started", "failed"]
    assert (rec.events[1].phase, rec.events[1].reason) == ("compact", "empty-summary")
    assert session.checkpoint() is None
    assert isinstance(session.last_result, CompactResult)


class BrokenStore(InMemoryCheckpointStore):
    def save(self, key: str, checkpoint: Checkpoint) -> None:
        raise OSError("disk full: /secret/path")


def test_a_store_that_fails_to_write_fails_the_compaction(b: Any) -> None:
    session, rec, fake = make(store=BrokenStore())
    history = b.chat(10)
    with pytest.raises(OSError, match="disk full"):
        session.prepare(history)
    assert rec.types == ["started", "failed"]
    failed = rec.events[1]
    assert (failed.phase, failed.reason, failed.error_type) == ("persist", "error", "OSError")
    assert "secret" not in json.dumps(failed.to_dict())
    assert fake.call_count == 1

    lenient, rec2, _ = make(store=BrokenStore(), on_error="return")
    out = lenient.prepare(history)
    assert out == history  # the compacted history is not used
    assert rec2.types == ["started", "failed"]


class BrokenLoad(InMemoryCheckpointStore):
    def load(self, key: str) -> Checkpoint | None:
        raise RuntimeError("cannot read")


def test_a_store_that_fails_to_read_is_a_restore_failure(b: Any) -> None:
    session, rec, _ = make(store=BrokenLoad())
    with pytest.raises(RuntimeError):
        session.prepare(b.chat(3))
    assert [(e.type, e.phase) for e in rec.events] == [("failed", "restore")]
    lenient, _, _ = make(store=BrokenLoad(), on_error="return")
    assert lenient.prepare(b.chat(3)) == b.chat(3)


def test_evaluate_failure_media_without_count_tokens(b: Any) -> None:
    session, rec, _ = make()
    with pytest.raises(TypeError, match="count_tokens"):
        session.prepare([*b.chat(3), b.image_user()])
    assert [(e.type, e.phase, e.reason) for e in rec.events] == [("failed", "evaluate", "error")]


def test_summarizer_error_is_reraised_as_the_same_object(b: Any) -> None:
    error = RuntimeError("provider down")
    session, rec, _ = make(summarizer=FakeSummarizer(raises=error))
    with pytest.raises(RuntimeError) as info:
        session.prepare(b.chat(10))
    assert info.value is error
    assert rec.types == ["started", "failed"]


def test_cancellation_always_raises(b: Any) -> None:
    session, rec, fake = make(on_error="return")
    token = CancelToken()
    token.cancel()
    with pytest.raises(CompactionCancelled):
        session.prepare(b.chat(10), cancel=token)
    assert fake.call_count == 0
    assert rec.events[-1].error_type == "CompactionCancelled"


def test_cache_trigger_with_session_retention(b: Any) -> None:
    session, rec, _ = make(triggers=[cache_likely_cold()], cache_retention_ms=300_000)
    history = b.chat(10)
    session.prepare(history, cache_age_ms=299_999)
    assert rec.events == []
    session.prepare(history, cache_age_ms=300_000)
    assert rec.types == ["started", "completed"]


def test_usage_calibration(b: Any) -> None:
    history = b.chat(4)
    session, rec, _ = make(triggers=[tokens_exceed(5000)], target=100_000)
    with pytest.raises(RuntimeError):
        session.record_usage(10)  # nothing was sent yet
    sent = session.prepare(history)
    assert rec.events == []
    session.record_usage(4990)
    assert session.baseline_tokens == 4990
    new = b.user("a new question with some words")
    appended = [*sent, new]
    extra = estimate_tokens([new])
    assert 4990 + extra > 5000
    session.prepare(appended)
    assert rec.types == ["started", "completed"]
    assert rec.events[0].tokens_before == 4990 + extra  # baseline + appended, overhead included
    assert session.baseline_tokens is None  # a compaction invalidates it


def test_usage_baseline_dropped_on_prefix_change(b: Any) -> None:
    history = b.chat(4)
    session, rec, _ = make(triggers=[tokens_exceed(5000)], target=100_000)
    session.prepare(history)
    session.record_usage(4999)
    edited = copy.deepcopy(history)
    edited[1]["content"] = "changed"
    session.prepare([*edited, b.user("x")])
    assert rec.events == []  # plain estimate, far below 5000
    assert session.baseline_tokens is None


def test_custom_count_tokens_ignores_measured_usage(b: Any) -> None:
    session, rec, _ = make(
        triggers=[tokens_exceed(5000)], target=100_000, count_tokens=lambda m: len(m)
    )
    sent = session.prepare(b.chat(4))
    session.record_usage(100_000)
    assert session.baseline_tokens is None
    session.prepare([*sent, b.user("x")])
    assert rec.events == []
    with pytest.raises(ValueError):
        session.record_usage(-1)


def test_aprepare(b: Any) -> None:
    session, rec, _ = make()

    async def main() -> list[Any]:
        return await session.aprepare(b.chat(10))

    out = asyncio.run(main())
    assert out[1]["content"] == SUMMARY_PREFIX + SECRET
    assert rec.types == ["started", "completed"]


def test_session_validation(b: Any) -> None:
    fake = FakeSummarizer()
    with pytest.raises(ValueError, match="target_tokens"):
        CompactionSession(triggers=[], target_tokens=0, summarizer=fake)
    with pytest.raises(ValueError, match="keep_last_messages"):
        CompactionSession(triggers=[], target_tokens=10, summarizer=fake, keep_last_messages=0)
    with pytest.raises(TypeError):
        CompactionSession(triggers=[], target_tokens=10)
    with pytest.raises(TypeError):
        CompactionSession(triggers=[42], target_tokens=10, summarizer=fake)  # type: ignore[list-item]
    session = CompactionSession(triggers=[], target_tokens=10, summarizer=fake)
    with pytest.raises(ValueError, match="overhead_tokens"):
        session.prepare(b.chat(2), overhead_tokens=-1)


def test_checkpoint_json_round_trip(b: Any) -> None:
    cp = Checkpoint(3, "abc", ({"role": "user", "content": "x"},), tokens_before=9, tokens_after=3)
    assert Checkpoint.from_json(json.loads(json.dumps(cp.to_json()))) == cp
    with pytest.raises(ValueError):
        Checkpoint.from_json({"version": 99})
    bad = Checkpoint(1, "d", (object(),))
    with pytest.raises(TypeError):
        bad.to_json()
