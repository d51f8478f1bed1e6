"""Compaction strategies. Each changes a plan over a message index; none mutates input."""

from compactlens.engine.strategies.base import RunContext, StageOutcome, Strategy, Variant
from compactlens.engine.strategies.clamp import ClampStrategy
from compactlens.engine.strategies.pipeline import PipelineStrategy, TokenBudgetComposedStrategy
from compactlens.engine.strategies.registry import (
    STRATEGY_REGISTRY,
    StrategyInfo,
    StrategyParam,
    builder_strategies,
    simple_strategy_names,
    strategy_info,
    strategy_type_names,
)
from compactlens.engine.strategies.selective import SelectiveToolCallCompactionStrategy
from compactlens.engine.strategies.sliding_window import SlidingWindowStrategy
from compactlens.engine.strategies.summarization import SummarizationStrategy
from compactlens.engine.strategies.tool_results import (
    ToolResultCompactionStrategy,
    format_tool_names,
    format_tool_results,
)
from compactlens.engine.strategies.truncation import TruncationStrategy

__all__ = [
    "STRATEGY_REGISTRY",
    "ClampStrategy",
    "PipelineStrategy",
    "RunContext",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "StageOutcome",
    "Strategy",
    "StrategyInfo",
    "StrategyParam",
    "SummarizationStrategy",
    "TokenBudgetComposedStrategy",
    "ToolResultCompactionStrategy",
    "TruncationStrategy",
    "Variant",
    "builder_strategies",
    "format_tool_names",
    "format_tool_results",
    "simple_strategy_names",
    "strategy_info",
    "strategy_type_names",
]
