"""Session triggers and prompt-cache retention inference, including exact edge values."""

from __future__ import annotations

import math
from typing import Any

import pytest

from compactlens import cache_likely_cold, messages_exceed, tokens_exceed
from compactlens.engine import describe_trigger
from compactlens.session import (
    FIVE_MINUTES_MS,
    ONE_DAY_MS,
    ONE_HOUR_MS,
    TriggerContext,
    infer_cache_retention_ms,
)


def ctx(
    tokens: int = 0, messages: int = 0, age: float | None = None, retention: int | None = None
) -> TriggerContext:
    return TriggerContext(
        history=tuple({} for _ in range(messages)),
        tokens=tokens,
        cache_age_ms=age,
        cache_retention_ms=retention,
    )


def test_tokens_exceed_is_strict() -> None:
    t = tokens_exceed(1000)
    assert not t(ctx(tokens=999))
    assert not t(ctx(tokens=1000))  # exactly at the threshold: no
    assert t(ctx(tokens=1001))
    assert describe_trigger(t) == "tokens > 1000"


def test_messages_exceed_is_strict() -> None:
    t = messages_exceed(3)
    assert not t(ctx(messages=3))
    assert t(ctx(messages=4))
    assert describe_trigger(t) == "messages > 3"


@pytest.mark.parametrize("bad", [0, -5, 1.5, 10.0, True, False, "10", None, math.inf])
def test_thresholds_are_validated(bad: Any) -> None:
    with pytest.raises(ValueError):
        tokens_exceed(bad)
    with pytest.raises(ValueError):
        messages_exceed(bad)
    if bad is not None:
        with pytest.raises(ValueError):
            cache_likely_cold(bad)


def test_cache_likely_cold_equality_matches() -> None:
    t = cache_likely_cold(300_000)
    assert not t(ctx(age=299_999))
    assert t(ctx(age=300_000))  # exactly the retention window: cold
    assert t(ctx(age=300_000.5))
    assert not t(ctx(age=None))  # unknown age


def test_cache_likely_cold_uses_the_context_retention() -> None:
    t = cache_likely_cold()
    assert not t(ctx(age=10**9))  # unknown retention
    assert t(ctx(age=ONE_HOUR_MS, retention=ONE_HOUR_MS))
    assert not t(ctx(age=ONE_HOUR_MS - 1, retention=ONE_HOUR_MS))
    assert cache_likely_cold(5)(ctx(age=5, retention=10**9))  # explicit wins
    assert not t(ctx(age=math.nan, retention=1))


def test_anthropic_retention() -> None:
    eph = {"type": "ephemeral"}
    assert (
        infer_cache_retention_ms(
            {"system": [{"type": "text", "text": "s", "cache_control": eph}], "messages": []}
        )
        == FIVE_MINUTES_MS
    )
    one_hour = {"type": "ephemeral", "ttl": "1h"}
    assert (
        infer_cache_retention_ms({"tools": [{"name": "t", "cache_control": one_hour}]})
        == ONE_HOUR_MS
    )
    five = {"type": "ephemeral", "ttl": "5m"}
    request = {
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "x", "cache_control": five}]}
        ]
    }
    assert infer_cache_retention_ms(request) == FIVE_MINUTES_MS
    assert infer_cache_retention_ms({"cache_control": one_hour, "messages": []}) == ONE_HOUR_MS
    nested = {
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [{"type": "text", "text": "r", "cache_control": one_hour}],
                    }
                ],
            }
        ]
    }
    assert infer_cache_retention_ms(nested) == ONE_HOUR_MS


def test_anthropic_mixed_or_unknown_windows() -> None:
    mixed = {
        "system": [
            {"type": "text", "text": "s", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}],
            }
        ],
    }
    assert infer_cache_retention_ms(mixed) is None
    assert infer_cache_retention_ms({"cache_control": {"type": "persistent"}}) is None
    assert infer_cache_retention_ms({"cache_control": {"type": "ephemeral", "ttl": "2h"}}) is None


def test_openai_retention() -> None:
    assert infer_cache_retention_ms({"prompt_cache_retention": "in_memory"}) == ONE_HOUR_MS
    assert infer_cache_retention_ms({"prompt_cache_retention": "24h"}) == ONE_DAY_MS
    assert infer_cache_retention_ms({"prompt_cache_retention": "forever"}) is None
    assert infer_cache_retention_ms({"prompt_cache_retention": None}) is None


def test_nothing_known() -> None:
    assert infer_cache_retention_ms({}) is None
    assert infer_cache_retention_ms({"model": "gpt-4o", "messages": []}) is None
    assert infer_cache_retention_ms([]) is None  # type: ignore[arg-type]
