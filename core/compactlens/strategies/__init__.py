"""Compaction strategies. Each changes a plan over a message index; none mutates input."""

from compactlens.strategies.base import RunContext, StageOutcome, Strategy, Variant
from compactlens.strategies.pipeline import PipelineStrategy, TokenBudgetComposedStrategy
from compactlens.strategies.selective import SelectiveToolCallCompactionStrategy
from compactlens.strategies.sliding_window import SlidingWindowStrategy
from compactlens.strategies.summarization import SummarizationStrategy
from compactlens.strategies.tool_results import (
    ToolResultCompactionStrategy,
    format_tool_names,
    format_tool_results,
)
from compactlens.strategies.truncation import TruncationStrategy

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
