"""Run an engine strategy inside a :class:`~compactlens.session.CompactionSession`.

The session calls its ``strategy`` hook with the working messages and the message
token target. :func:`engine_strategy` turns any engine strategy (or a function that
builds one for a given target) into that hook.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from compactlens.compact_result import TokenCounts
from compactlens.engine import apply_compaction
from compactlens.result import CompactionResult
from compactlens.strategies.base import Strategy
from compactlens.tokens import Tokenizer


@dataclass(frozen=True, slots=True)
class EngineStrategyOutcome:
    """The session-facing view of an engine run (``compact()``-like fields).

    ``status`` is ``compacted`` only when the engine met its target *and* the
    projection fits the session's message target; otherwise ``cannot-fit`` with
    reason ``protected-history``. ``result`` is the full engine result.
    """

    status: str
    messages: list[Any]
    tokens: TokenCounts
    reason: str | None
    result: CompactionResult
    replaced_range: tuple[int, int] | None = None
    usage: None = None


def engine_strategy(
    strategy: Strategy | Callable[[int], Strategy],
    *,
    tokenizer: Tokenizer | None = None,
    format: str | None = None,
) -> Callable[[Sequence[Any], int], EngineStrategyOutcome]:
    """A session ``strategy`` hook that runs an engine strategy.

    Pass a strategy, or a function ``target_tokens -> strategy`` so that the
    strategy's budget follows the session's message target, for example
    ``engine_strategy(lambda t: TruncationStrategy(tokens_exceed(t), minimum_preserved=4))``.
    """

    def hook(messages: Sequence[Any], target: int) -> EngineStrategyOutcome:
        chosen: Strategy = strategy if isinstance(strategy, Strategy) else strategy(target)
        result = apply_compaction(messages, chosen, tokenizer, format=format)
        fits = result.status != "cannot-fit" and result.tokens_after <= target
        if fits and result.status == "compacted":
            return EngineStrategyOutcome(
                "compacted",
                result.messages,
                TokenCounts(result.tokens_before, result.tokens_after),
                None,
                result,
            )
        return EngineStrategyOutcome(
            "cannot-fit",
            list(messages),
            TokenCounts(result.tokens_before, result.tokens_before),
            "protected-history",
            result,
        )

    return hook
