"""Cached prefix per strategy on a small transcript, and the cost model against hand sums."""

from __future__ import annotations

import math
from typing import Any

import pytest
from analysis_helpers import estimate, small_transcript

from compactlens import (
    CharEstimator,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    analyze,
    apply_compaction,
    compact,
    tokens_exceed,
)
from compactlens.analysis import (
    DEFAULT_PRICES,
    ModelPrices,
    cache_impact,
    common_prefix,
    estimate_cost,
    price_table,
    prices_for,
)
from compactlens.model import text_message
from compactlens.summarizers import FakeSummarizer, Usage

SYSTEM_TOKENS = estimate("system", "You are a careful support agent.")


def _prefix_case(strategy: Any) -> tuple[Any, Any]:
    wire = small_transcript()
    res = apply_compaction(wire, strategy)
    assert res.status == "compacted"
    return res, analyze(wire, res)


def test_truncation_changes_the_prefix_at_the_first_removed_group() -> None:
    res, report = _prefix_case(TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2))
    first_removed = min(d.position for d in res.decisions if d.action == "excluded")
    assert first_removed == 1  # the oldest non-system group: the first user message
    assert report.cache.first_difference == 1
    assert report.cache.prefix_messages == 1
    assert report.cache.prefix_tokens == SYSTEM_TOKENS


def test_tool_result_collapse_changes_the_prefix_at_the_first_collapsed_group() -> None:
    res, report = _prefix_case(ToolResultCompactionStrategy(keep_last_tool_call_groups=0))
    assert [d.position for d in res.decisions if d.action == "collapsed"] == [4]
    assert report.cache.first_difference == 4
    wire = small_transcript()
    expected = sum(estimate(m["role"], m["content"]) for m in wire[:4])
    assert report.cache.prefix_tokens == expected


def test_selective_tool_call_removal_changes_the_prefix_at_the_removed_call() -> None:
    _, report = _prefix_case(SelectiveToolCallCompactionStrategy(keep_last_tool_call_groups=0))
    assert report.cache.first_difference == 4


def test_sliding_window_changes_the_prefix_at_the_first_dropped_turn() -> None:
    _, report = _prefix_case(SlidingWindowStrategy(keep_last_turns=1))
    assert report.cache.first_difference == 1
    assert report.cache.prefix_tokens == SYSTEM_TOKENS


def test_summarization_changes_the_prefix_where_the_summary_is_inserted() -> None:
    strategy = SummarizationStrategy(
        FakeSummarizer("short"), trigger=tokens_exceed(60), minimum_preserved=2
    )
    res, report = _prefix_case(strategy)
    inserted = [d.position for d in res.decisions if d.action == "inserted"]
    assert inserted == [1]
    assert report.cache.first_difference == 1


def test_compact_changes_the_prefix_at_the_start_of_the_replaced_range() -> None:
    wire = small_transcript()
    res = compact(wire, summarizer=FakeSummarizer("short"), target_tokens=200)
    assert res.status == "compacted"
    report = analyze(wire, res)
    assert res.replaced_range is not None and res.replaced_range[0] == 1
    assert report.cache.first_difference == 1
    assert report.cache.prefix_tokens == SYSTEM_TOKENS


def test_an_unchanged_request_keeps_the_whole_cache() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, TruncationStrategy(trigger=tokens_exceed(100_000)))
    report = analyze(wire, res)
    assert report.cache.first_difference is None
    assert report.cache.prefix_messages == len(wire)
    assert report.cache.rewrite_tokens == 0
    assert report.cache.invalidated_tokens == 0
    assert report.cache.cost is not None
    assert report.cache.cost.savings == pytest.approx(0.0)
    assert report.cache.cost.break_even_turn == 1


def test_rewrite_and_invalidated_tokens_add_up() -> None:
    a = [text_message("system", "s" * 33), text_message("user", "u" * 75)]
    b = [a[0], text_message("user", "v" * 35)]
    impact = cache_impact(a, b, CharEstimator())
    assert impact.first_difference == 1
    assert impact.prefix_tokens == 10
    assert impact.original_tokens == 10 + 20
    assert impact.compacted_tokens == 10 + 10
    assert impact.rewrite_tokens == 10
    assert impact.invalidated_tokens == 20


def test_common_prefix_compares_messages_not_identity() -> None:
    a = [text_message("user", "x"), text_message("assistant", "y")]
    b = [text_message("user", "x"), text_message("assistant", "z")]
    assert common_prefix(a, b) == 1
    assert common_prefix(a, a[:1]) == 1
    assert common_prefix([], a) == 0


# -------------------------------------------------------------------------- cost arithmetic

PRICES = ModelPrices(input=2.0, cached_input=0.5, cache_write=2.5, output=8.0)


def test_cost_matches_hand_computed_turns() -> None:
    # T=10000, C=4000, P=1000, g=500, N=3 at (cached 0.5, write 2.5) USD per million.
    est = estimate_cost(10_000, 4_000, 1_000, prices=PRICES, further_turns=3, growth_tokens=500)
    # without: 10000*.5+500*2.5=6250; 10500*.5+1250=6500; 11000*.5+1250=6750 (per million)
    assert est.per_turn_without == pytest.approx((0.00625, 0.0065, 0.00675))
    # with: 1000*.5+(3000+500)*2.5=9250; 4500*.5+1250=3500; 5000*.5+1250=3750
    assert est.per_turn_with == pytest.approx((0.00925, 0.0035, 0.00375))
    assert est.cost_without == pytest.approx(0.0195)
    assert est.cost_with == pytest.approx(0.0165)
    assert est.savings == pytest.approx(0.003)
    # S(1) = 9000*.5 - 3000*2.5 = -3000; each later turn saves 6000*.5 = 3000 -> turn 2.
    assert est.break_even_turn == 2


def test_the_summarizer_call_delays_break_even() -> None:
    est = estimate_cost(
        10_000,
        4_000,
        1_000,
        prices=PRICES,
        further_turns=3,
        growth_tokens=500,
        compaction_cost=0.001,
    )
    assert est.cost_with == pytest.approx(0.0175)
    # S(1) = -3000 - 1000 = -4000 per million; +3000 a turn -> first >= 0 at turn 3.
    assert est.break_even_turn == 3


def test_a_compaction_that_keeps_the_prefix_pays_off_at_once() -> None:
    est = estimate_cost(10_000, 4_000, 4_000, prices=PRICES, further_turns=1)
    assert est.break_even_turn == 1
    assert est.savings == pytest.approx(6000 * 0.5 / 1e6)


def test_a_compaction_that_does_not_shrink_never_pays_off() -> None:
    est = estimate_cost(4_000, 4_500, 1_000, prices=PRICES, further_turns=5, growth_tokens=100)
    assert est.break_even_turn is None
    assert est.savings < 0


def test_cache_write_defaults_to_the_input_price() -> None:
    prices = ModelPrices(input=3.0, cached_input=0.3)
    est = estimate_cost(100, 0, 0, prices=prices, further_turns=1, growth_tokens=1_000_000)
    assert est.per_turn_with == pytest.approx((3.0,))
    assert est.per_turn_without == pytest.approx((100 * 0.3 / 1e6 + 3.0,))


def test_analyze_bills_the_summarizer_usage_of_compact() -> None:
    wire = small_transcript()
    usage = Usage(input_tokens=1000, output_tokens=200, total_tokens=1200)
    res = compact(wire, summarizer=FakeSummarizer("short", usage=usage), target_tokens=200)
    report = analyze(wire, res, prices=PRICES, further_turns=2, growth_per_turn=0)
    cost = report.cache.cost
    assert cost is not None
    assert cost.compaction_cost == pytest.approx((1000 * 2.0 + 200 * 8.0) / 1e6)
    assert cost.cost_with == pytest.approx(math.fsum(cost.per_turn_with) + cost.compaction_cost)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("gpt-4o", "gpt-4o"),
        ("gpt-4o-2024-08-06", "gpt-4o"),
        ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
        ("claude-sonnet-4-20250514", "claude-sonnet-4"),
    ],
)
def test_prices_are_found_by_longest_model_prefix(model: str, family: str) -> None:
    assert prices_for(model) == DEFAULT_PRICES[family]


def test_unknown_models_and_bad_prices_are_rejected() -> None:
    with pytest.raises(ValueError, match="known models"):
        prices_for("my-private-model")
    with pytest.raises(ValueError, match="input"):
        ModelPrices(input=-1.0, cached_input=0.1)
    with pytest.raises(ValueError, match="missing"):
        ModelPrices.from_dict({"input": 1.0})


def test_price_table_overrides_without_touching_the_defaults() -> None:
    before = dict(DEFAULT_PRICES)
    table = price_table({"gpt-4o": {"input": 1.0, "cached_input": 0.1}, "mine": PRICES})
    assert table["gpt-4o"].input == 1.0
    assert table["mine"] is PRICES
    assert dict(DEFAULT_PRICES) == before
    with pytest.raises(TypeError):
        DEFAULT_PRICES["x"] = PRICES  # type: ignore[index]


def test_analyze_accepts_a_model_name_or_prices() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2))
    by_name = analyze(wire, res, prices="claude-sonnet-4").cache.cost
    assert by_name is not None and by_name.prices == DEFAULT_PRICES["claude-sonnet-4"]
    custom = analyze(wire, res, prices=PRICES).cache.cost
    assert custom is not None and custom.prices == PRICES
