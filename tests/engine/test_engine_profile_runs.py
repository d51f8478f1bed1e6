"""apply_compaction(profile=...): a peer profile's defaults, guards and estimator in one call."""

from __future__ import annotations

from strategies_helpers import assistant, user

from compactlens import TruncationStrategy, apply_compaction
from compactlens.engine import with_profile


def chat(turns: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for t in range(turns):
        out += [user(f"question {t} " + "q" * 40), assistant(f"answer {t} " + "a" * 40)]
    return out


def test_maf_keywords_give_the_maf_result_under_the_maf_profile() -> None:
    convo = chat(3)
    strategy = TruncationStrategy(max_n=4, compact_to=2)
    ours = apply_compaction(convo, strategy)
    maf = apply_compaction(convo, strategy, profile="maf")
    # Our defaults protect 32 groups (and the latest request): nothing can go.
    assert ours.status == "cannot-fit"
    # MAF keeps one group and has no latest-request rule: the newest messages remain.
    assert maf.status == "compacted"
    assert maf.messages == convo[-2:] or maf.messages == convo[-1:]
    explicit = apply_compaction(convo, with_profile(strategy, "maf"), profile="maf")
    assert explicit.messages == maf.messages
