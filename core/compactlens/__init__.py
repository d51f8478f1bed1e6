"""compactlens: a reference engine for LLM conversation compaction.

Build a :class:`MessageIndex` once (groups, tool-call links, turns, token counts),
run any strategy over it, and read a :class:`CompactionResult` that says what was
kept, excluded, collapsed or summarized, and why. Nothing here mutates its input.
"""

from __future__ import annotations

from compactlens.boundary import (
    BoundaryAnalysis,
    CannotFitExplanation,
    FitSuggestion,
    analyze_boundary,
    explain_cannot_fit,
)
from compactlens.cancel import CancelToken, CompactionCancelled
from compactlens.checkpoints import (
    Checkpoint,
    InMemoryCheckpointStore,
    JsonFileCheckpointStore,
    SQLiteCheckpointStore,
)
from compactlens.compact import acompact, compact, estimate_tokens
from compactlens.compact_result import CompactResult, TokenCounts
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
from compactlens.session import (
    CheckpointRestored,
    CompactionCompleted,
    CompactionFailed,
    CompactionSession,
    CompactionStarted,
)
from compactlens.session_strategy import engine_strategy
from compactlens.session_triggers import cache_likely_cold, infer_cache_retention_ms
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
from compactlens.summarizers import (
    CachingSummarizer,
    ExtractiveSummarizer,
    FakeSummarizer,
    OpenAISummarizer,
    Summarizer,
    SummaryRequest,
    SummaryResponse,
    Usage,
    build_summary_request,
)
from compactlens.tokens import CharEstimator, TiktokenTokenizer, Tokenizer
from compactlens.transcript import Transcript, convert_file, dump_transcript, load_transcript
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
    "BoundaryAnalysis",
    "CachingSummarizer",
    "CancelToken",
    "CannotFitExplanation",
    "CharEstimator",
    "Checkpoint",
    "CheckpointRestored",
    "CompactResult",
    "CompactionCancelled",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionResult",
    "CompactionSession",
    "CompactionStarted",
    "Explanation",
    "ExtractiveSummarizer",
    "FakeSummarizer",
    "FitSuggestion",
    "GroupDecision",
    "GroupKind",
    "InMemoryCheckpointStore",
    "JsonFileCheckpointStore",
    "MediaPart",
    "Message",
    "MessageGroup",
    "MessageIndex",
    "OpaquePart",
    "OpenAISummarizer",
    "PairingProblem",
    "Part",
    "PipelineStrategy",
    "Plan",
    "ProtectedItem",
    "ReasoningPart",
    "Role",
    "SQLiteCheckpointStore",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "StageEvent",
    "Strategy",
    "Suggestion",
    "SummarizationStrategy",
    "Summarizer",
    "SummaryRequest",
    "SummaryResponse",
    "TextPart",
    "TiktokenTokenizer",
    "TokenBudgetComposedStrategy",
    "TokenCounts",
    "Tokenizer",
    "ToolCallPart",
    "ToolLink",
    "ToolResultCompactionStrategy",
    "ToolResultPart",
    "Transcript",
    "TranscriptError",
    "Trigger",
    "TruncationStrategy",
    "Usage",
    "__version__",
    "acompact",
    "all_of",
    "always",
    "analyze_boundary",
    "any_of",
    "apply_compaction",
    "apply_compaction_async",
    "build_summary_request",
    "cache_likely_cold",
    "compact",
    "convert_file",
    "dump_transcript",
    "engine_strategy",
    "estimate_tokens",
    "explain_cannot_fit",
    "format_tool_names",
    "format_tool_results",
    "groups_exceed",
    "has_tool_calls",
    "infer_cache_retention_ms",
    "load_transcript",
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
