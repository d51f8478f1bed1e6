"""compactlens: a reference engine for LLM conversation compaction.

Build a :class:`MessageIndex` once (groups, tool-call links, turns, token counts),
run any strategy over it, and read a :class:`CompactionResult` that says what was
kept, excluded, collapsed or summarized, and why. Nothing here mutates its input.
"""

from __future__ import annotations

from compactlens.engine import apply_compaction, apply_compaction_async, run_strategy
from compactlens.errors import TranscriptError
from compactlens.index import (
    GroupKind,
    MessageGroup,
    MessageIndex,
    PairingProblem,
    ToolLink,
    validate_pairing,
)
from compactlens.messages import (
    SUMMARY_PREFIX,
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    Message,
    OpaquePart,
    Part,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    text_message,
)
from compactlens.plan import Plan
from compactlens.result import (
    CompactionResult,
    Explanation,
    GroupDecision,
    ProtectedItem,
    StageEvent,
    Suggestion,
)
from compactlens.strategies import (
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    Strategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    format_tool_names,
    format_tool_results,
)
from compactlens.strategies.config import strategy_from_config
from compactlens.tokens import CharEstimator, TiktokenTokenizer, Tokenizer
from compactlens.triggers import (
    Trigger,
    all_of,
    always,
    any_of,
    groups_exceed,
    has_tool_calls,
    messages_exceed,
    never,
    not_,
    tokens_at_most,
    tokens_below,
    tokens_exceed,
    turns_exceed,
)

__version__ = "0.1.0"

__all__ = [
    "SUMMARY_PREFIX",
    "ApprovalRequestPart",
    "ApprovalResponsePart",
    "CharEstimator",
    "CompactionResult",
    "Explanation",
    "GroupDecision",
    "GroupKind",
    "MediaPart",
    "Message",
    "MessageGroup",
    "MessageIndex",
    "OpaquePart",
    "PairingProblem",
    "Part",
    "PipelineStrategy",
    "Plan",
    "ProtectedItem",
    "ReasoningPart",
    "Role",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "StageEvent",
    "Strategy",
    "Suggestion",
    "SummarizationStrategy",
    "TextPart",
    "TiktokenTokenizer",
    "TokenBudgetComposedStrategy",
    "Tokenizer",
    "ToolCallPart",
    "ToolLink",
    "ToolResultCompactionStrategy",
    "ToolResultPart",
    "TranscriptError",
    "Trigger",
    "TruncationStrategy",
    "__version__",
    "all_of",
    "always",
    "any_of",
    "apply_compaction",
    "apply_compaction_async",
    "format_tool_names",
    "format_tool_results",
    "groups_exceed",
    "has_tool_calls",
    "messages_exceed",
    "never",
    "not_",
    "run_strategy",
    "strategy_from_config",
    "text_message",
    "tokens_at_most",
    "tokens_below",
    "tokens_exceed",
    "turns_exceed",
    "validate_pairing",
]
