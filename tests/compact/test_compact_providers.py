"""compact() returns histories every provider accepts (by construction: the summary is a
user message right after the system part, and the kept range starts at a safe cut)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import compact
from compactlens.engine import PROVIDERS, latest_request_index
from compactlens.engine.providers import errors_only, has_content, provider_problems
from compactlens.formats import from_caller
from compactlens.summarizers.testing import FakeSummarizer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from strategies_helpers import transcripts


def errors(items: object, provider: str) -> Counter[str]:
    msgs = from_caller(items).messages  # type: ignore[arg-type]
    return Counter(p.kind for p in errors_only(provider_problems(msgs, [provider])))  # type: ignore[list-item]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    convo=transcripts(),
    share=st.floats(min_value=0.05, max_value=1.2),
    keep=st.integers(min_value=1, max_value=6),
    provider=st.sampled_from(PROVIDERS),
)
def test_compact_introduces_no_provider_error(
    convo: list[dict[str, object]], share: float, keep: int, provider: str
) -> None:
    msgs = from_caller(convo).messages
    total = sum(len(str(m)) for m in convo) // 4 + 1
    result = compact(
        convo,
        summarizer=FakeSummarizer("what happened so far"),
        target_tokens=max(1, int(total * share)),
        keep_last_messages=keep,
    )
    introduced = errors(result.messages, provider) - errors(convo, provider)
    if any(not m.tool_results and not has_content(m) for m in msgs):
        introduced.pop("empty_content", None)  # empty input messages are invalid already
    assert not introduced, (result.status, introduced)
    latest = latest_request_index(msgs)
    if latest is not None:
        assert convo[latest] in result.messages
