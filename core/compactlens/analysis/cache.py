"""Prompt-cache impact of a compaction: the surviving prefix and what the next turns cost.

Providers cache the longest prefix of a request that was sent before. Compaction
changes the request from the first message it touched onward, so everything from
there is read at the full price and written to the cache again.

**Prefix.** ``first_difference`` is the index of the first message of the compacted
request that differs from the original one (``None`` when both are equal); the
``prefix_messages`` before it survive, worth ``prefix_tokens``. ``rewrite_tokens =
C - P`` is what must be written to the cache again and ``invalidated_tokens = T - P``
the cached tokens that were thrown away, where ``T`` is the original request's
tokens, ``C`` the compacted request's and ``P`` the prefix's.

**Cost model.** Prices are USD per million tokens: ``input`` (uncached input),
``cached_input`` (a cache read), ``cache_write`` (uncached input that is written to
the cache; equal to ``input`` for providers that charge nothing extra for writing)
and ``output`` (used only for the summarizer call of a compaction). Every further
turn appends ``g`` tokens (the previous answer and the new user message) and the
whole previous request is a cache hit. Output tokens of the conversation are the same
with and without compaction and are left out. For turns ``i = 1..N``::

    without compaction:  cost_i = (T + (i-1)·g)·cached_input + g·cache_write
    with compaction:     cost_1 = P·cached_input + (C - P + g)·cache_write
                         cost_i = (C + (i-1)·g)·cached_input + g·cache_write   (i >= 2)

plus, with compaction, the one-off ``compaction_cost`` (the summarizer call:
``input_tokens·input + output_tokens·output``). The savings after ``n`` turns are::

    S(n) = (T - P)·cached_input - (C - P)·cache_write - compaction_cost
           + (n - 1)·(T - C)·cached_input

and the break-even turn is the smallest ``n >= 1`` with ``S(n) >= 0`` (``None`` when
compaction never pays for itself, that is when ``T <= C`` and ``S(1) < 0``). The model
ignores minimum cacheable sizes, cache block granularity and cache expiry: it is an
estimate for comparing compaction setups, not a bill.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from compactlens.model.errors import ConfigError
from compactlens.model.messages import Message
from compactlens.model.tokens import CharEstimator, Tokenizer, count_messages
from compactlens.model.validation import check_int


@dataclass(frozen=True, slots=True)
class ModelPrices:
    """USD per million tokens. ``cache_write`` defaults to ``input`` when not given."""

    input: float
    cached_input: float
    cache_write: float | None = None
    output: float = 0.0

    def __post_init__(self) -> None:
        for name in ("input", "cached_input", "cache_write", "output"):
            value = getattr(self, name)
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ConfigError(f"{name} must be a non-negative number, got {value!r}")
            if not math.isfinite(value):
                raise ConfigError(f"{name} must be finite, got {value!r}")

    @property
    def write(self) -> float:
        """The price of uncached input that is written to the cache."""
        return self.input if self.cache_write is None else self.cache_write

    def to_dict(self) -> dict[str, float]:
        return {
            "input": self.input,
            "cached_input": self.cached_input,
            "cache_write": self.write,
            "output": self.output,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelPrices:
        """Rebuild from :meth:`to_dict` output (``cache_write`` and ``output`` optional)."""
        unknown = set(data) - {"input", "cached_input", "cache_write", "output"}
        if unknown:
            raise ConfigError(f"unknown price keys {sorted(unknown)}")
        try:
            return cls(
                input=data["input"],
                cached_input=data["cached_input"],
                cache_write=data.get("cache_write"),
                output=data.get("output", 0.0),
            )
        except KeyError as exc:
            raise ConfigError(f"missing price key {exc.args[0]!r}") from None


#: List prices (USD per million tokens, standard tier, prompts under 200k tokens) of
#: common models as published by their providers in 2025. Prices change: pass your
#: own :class:`ModelPrices` or a table built with :func:`price_table` to be exact.
DEFAULT_PRICES: Mapping[str, ModelPrices] = MappingProxyType(
    {
        "gpt-4o": ModelPrices(2.50, 1.25, 2.50, 10.00),
        "gpt-4o-mini": ModelPrices(0.15, 0.075, 0.15, 0.60),
        "gpt-4.1": ModelPrices(2.00, 0.50, 2.00, 8.00),
        "gpt-4.1-mini": ModelPrices(0.40, 0.10, 0.40, 1.60),
        "gpt-4.1-nano": ModelPrices(0.10, 0.025, 0.10, 0.40),
        "gpt-5": ModelPrices(1.25, 0.125, 1.25, 10.00),
        "gpt-5-mini": ModelPrices(0.25, 0.025, 0.25, 2.00),
        "o3": ModelPrices(2.00, 0.50, 2.00, 8.00),
        "o4-mini": ModelPrices(1.10, 0.275, 1.10, 4.40),
        "claude-opus-4": ModelPrices(15.00, 1.50, 18.75, 75.00),
        "claude-sonnet-4": ModelPrices(3.00, 0.30, 3.75, 15.00),
        "claude-3-7-sonnet": ModelPrices(3.00, 0.30, 3.75, 15.00),
        "claude-3-5-haiku": ModelPrices(0.80, 0.08, 1.00, 4.00),
        "claude-haiku-4-5": ModelPrices(1.00, 0.10, 1.25, 5.00),
        "gemini-2.5-pro": ModelPrices(1.25, 0.31, 1.25, 10.00),
        "gemini-2.5-flash": ModelPrices(0.30, 0.075, 0.30, 2.50),
    }
)

#: The model whose prices are used when none is named.
DEFAULT_MODEL = "gpt-4o"


def price_table(
    overrides: Mapping[str, ModelPrices | Mapping[str, Any]] | None = None,
    *,
    base: Mapping[str, ModelPrices] = DEFAULT_PRICES,
) -> Mapping[str, ModelPrices]:
    """A new read-only table: ``base`` with ``overrides`` (prices or price dicts) applied."""
    table = dict(base)
    for name, value in (overrides or {}).items():
        table[name] = value if isinstance(value, ModelPrices) else ModelPrices.from_dict(value)
    return MappingProxyType(table)


def prices_for(model: str, table: Mapping[str, ModelPrices] = DEFAULT_PRICES) -> ModelPrices:
    """The prices of ``model``: an exact entry, else the longest entry it starts with.

    ``gpt-4o-2024-08-06`` finds ``gpt-4o``; ``gpt-4o-mini-2024-07-18`` finds
    ``gpt-4o-mini``. Raises ``ValueError`` naming the known models otherwise.
    """
    if model in table:
        return table[model]
    best = max((name for name in table if model.startswith(name)), key=len, default=None)
    if best is None:
        raise ConfigError(f"no prices for model {model!r}; known models: {sorted(table)}")
    return table[best]


def common_prefix(original: Sequence[Message], compacted: Sequence[Message]) -> int:
    """How many leading messages the two requests share (compared as canonical messages)."""
    n = min(len(original), len(compacted))
    for i in range(n):
        a, b = original[i], compacted[i]
        if a is not b and a != b:
            return i
    return n


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """Cost of the next ``further_turns`` turns with and without the compaction (USD).

    ``per_turn_without`` / ``per_turn_with`` are the costs of turns 1..N (the
    compaction cost is not in them); ``savings = cost_without - cost_with``.
    """

    model: str
    prices: ModelPrices
    further_turns: int
    growth_tokens: int
    compaction_cost: float
    per_turn_without: tuple[float, ...]
    per_turn_with: tuple[float, ...]
    break_even_turn: int | None

    @property
    def cost_without(self) -> float:
        return math.fsum(self.per_turn_without)

    @property
    def cost_with(self) -> float:
        return math.fsum(self.per_turn_with) + self.compaction_cost

    @property
    def savings(self) -> float:
        return self.cost_without - self.cost_with

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "prices": self.prices.to_dict(),
            "further_turns": self.further_turns,
            "growth_tokens": self.growth_tokens,
            "compaction_cost": round(self.compaction_cost, 8),
            "cost_without": round(self.cost_without, 8),
            "cost_with": round(self.cost_with, 8),
            "savings": round(self.savings, 8),
            "break_even_turn": self.break_even_turn,
            "per_turn_without": [round(c, 8) for c in self.per_turn_without],
            "per_turn_with": [round(c, 8) for c in self.per_turn_with],
        }


def _check_tokens(**values: int) -> None:
    for name, value in values.items():
        check_int(name, value, minimum=0)


def break_even_turn(
    original_tokens: int,
    compacted_tokens: int,
    prefix_tokens: int,
    prices: ModelPrices,
    *,
    compaction_cost: float = 0.0,
) -> int | None:
    """The smallest turn count after which the compaction has paid for itself (see module)."""
    per_million = 1_000_000.0
    first = (
        (original_tokens - prefix_tokens) * prices.cached_input
        - (compacted_tokens - prefix_tokens) * prices.write
    ) / per_million - compaction_cost
    if first >= 0:
        return 1
    step = (original_tokens - compacted_tokens) * prices.cached_input / per_million
    if step <= 0:
        return None
    return 1 + math.ceil(-first / step - 1e-12)


def estimate_cost(
    original_tokens: int,
    compacted_tokens: int,
    prefix_tokens: int,
    *,
    prices: ModelPrices,
    further_turns: int = 10,
    growth_tokens: int = 0,
    compaction_cost: float = 0.0,
    model: str = "",
) -> CostEstimate:
    """The cost model of the module docstring, turn by turn."""
    _check_tokens(
        original_tokens=original_tokens,
        compacted_tokens=compacted_tokens,
        prefix_tokens=prefix_tokens,
        further_turns=further_turns,
        growth_tokens=growth_tokens,
    )
    if prefix_tokens > min(original_tokens, compacted_tokens):
        raise ConfigError("prefix_tokens cannot exceed the original or the compacted tokens")
    if compaction_cost < 0:
        raise ConfigError("compaction_cost must be >= 0")
    m = 1_000_000.0
    read, write, g = prices.cached_input, prices.write, growth_tokens
    without: list[float] = []
    with_: list[float] = []
    for i in range(1, further_turns + 1):
        without.append(((original_tokens + (i - 1) * g) * read + g * write) / m)
        if i == 1:
            with_.append(
                (prefix_tokens * read + (compacted_tokens - prefix_tokens + g) * write) / m
            )
        else:
            with_.append(((compacted_tokens + (i - 1) * g) * read + g * write) / m)
    return CostEstimate(
        model=model,
        prices=prices,
        further_turns=further_turns,
        growth_tokens=growth_tokens,
        compaction_cost=compaction_cost,
        per_turn_without=tuple(without),
        per_turn_with=tuple(with_),
        break_even_turn=break_even_turn(
            original_tokens,
            compacted_tokens,
            prefix_tokens,
            prices,
            compaction_cost=compaction_cost,
        ),
    )


def summarizer_cost(input_tokens: int, output_tokens: int, prices: ModelPrices) -> float:
    """USD of one summarizer call billed at ``input`` and ``output`` prices."""
    _check_tokens(input_tokens=input_tokens, output_tokens=output_tokens)
    return (input_tokens * prices.input + output_tokens * prices.output) / 1_000_000.0


@dataclass(frozen=True, slots=True)
class CacheImpact:
    """The cached prefix a compaction keeps, and (optionally) the cost of the next turns."""

    first_difference: int | None
    prefix_messages: int
    prefix_tokens: int
    original_tokens: int
    compacted_tokens: int
    cost: CostEstimate | None = None

    @property
    def rewrite_tokens(self) -> int:
        """Tokens of the compacted request after the surviving prefix (written again)."""
        return self.compacted_tokens - self.prefix_tokens

    @property
    def invalidated_tokens(self) -> int:
        """Cached tokens of the original request that are no longer a prefix."""
        return self.original_tokens - self.prefix_tokens

    @property
    def prefix_fraction(self) -> float:
        """Share of the original request's tokens that stay cached (1.0 for an empty one)."""
        return self.prefix_tokens / self.original_tokens if self.original_tokens else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "first_difference": self.first_difference,
            "prefix_messages": self.prefix_messages,
            "prefix_tokens": self.prefix_tokens,
            "original_tokens": self.original_tokens,
            "compacted_tokens": self.compacted_tokens,
            "rewrite_tokens": self.rewrite_tokens,
            "invalidated_tokens": self.invalidated_tokens,
            "prefix_fraction": round(self.prefix_fraction, 6),
            "cost": self.cost.to_dict() if self.cost is not None else None,
        }


def cache_impact(
    original: Sequence[Message],
    compacted: Sequence[Message],
    tokenizer: Tokenizer | None = None,
    *,
    original_counts: Sequence[int] | None = None,
    compacted_counts: Sequence[int] | None = None,
    prices: ModelPrices | None = None,
    model: str = "",
    further_turns: int = 10,
    growth_tokens: int = 0,
    compaction_cost: float = 0.0,
) -> CacheImpact:
    """The surviving prefix of ``compacted`` against ``original``.

    Tokens are per-message counts: ``original_counts`` / ``compacted_counts`` when
    given (for example ``MessageIndex.message_tokens``), else counted with
    ``tokenizer`` (default: the character estimate). With ``prices`` the cost of the
    next ``further_turns`` turns is estimated too.
    """
    tok: Tokenizer = tokenizer if tokenizer is not None else CharEstimator()
    prefix = common_prefix(original, compacted)
    same = prefix == len(original) == len(compacted)
    if original_counts is None:
        original_counts = count_messages(original, tok)
    if len(original_counts) != len(original):
        raise ConfigError("original_counts must have one count per original message")
    if compacted_counts is None:
        tail = count_messages(compacted[prefix:], tok)
    elif len(compacted_counts) != len(compacted):
        raise ConfigError("compacted_counts must have one count per compacted message")
    else:
        tail = list(compacted_counts[prefix:])
    prefix_tokens = sum(original_counts[:prefix])
    original_tokens = sum(original_counts)
    compacted_tokens = prefix_tokens + sum(tail)
    cost = None
    if prices is not None:
        cost = estimate_cost(
            original_tokens,
            compacted_tokens,
            prefix_tokens,
            prices=prices,
            further_turns=further_turns,
            growth_tokens=growth_tokens,
            compaction_cost=compaction_cost,
            model=model,
        )
    return CacheImpact(
        first_difference=None if same else prefix,
        prefix_messages=prefix,
        prefix_tokens=prefix_tokens,
        original_tokens=original_tokens,
        compacted_tokens=compacted_tokens,
        cost=cost,
    )
