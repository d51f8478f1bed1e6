"""Compaction strategies. Each changes a plan over a message index; none mutates input."""

from compactlens.engine.strategies.base import RunContext, StageOutcome, Strategy, Variant
from compactlens.engine.strategies.pipeline import PipelineStrategy, TokenBudgetComposedStrategy
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
    "PipelineStrategy",
    "RunContext",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "StageOutcome",
    "Strategy",
    "SummarizationStrategy",
    "TokenBudgetComposedStrategy",
    "ToolResultCompactionStrategy",
    "TruncationStrategy",
    "Variant",
    "format_tool_names",
    "format_tool_results",
]
