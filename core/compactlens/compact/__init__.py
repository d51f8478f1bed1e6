"""The one-shot ``compact()``: replace one contiguous older range with a summary, under an
exact contract (five cannot-fit reasons, the replaced range, the latest-request replay),
its boundary analysis, its result, cancellation, and the cannot-fit explanation."""

from compactlens.compact.boundary import (
    BoundaryAnalysis,
    MessageBoundary,
    PairSpan,
    Protection,
    analyze_boundary,
)
from compactlens.compact.cancel import CancelSignal, CancelToken, CompactionCancelled
from compactlens.compact.contract import (
    MAX_SUMMARY_TOKENS,
    CountTokens,
    acompact,
    build_candidate,
    compact,
    estimate_canonical_tokens,
    estimate_tokens,
    make_counter,
    summary_message,
    validate_message,
)
from compactlens.compact.explain import (
    CannotFitExplanation,
    CompactRun,
    FitSuggestion,
    compact_as_result,
    compact_over_index,
    explain_cannot_fit,
    smaller_keep_that_fits,
)
from compactlens.compact.result import (
    CANNOT_FIT_REASONS,
    CannotFitReason,
    CompactResult,
    CompactStatus,
)

__all__ = [
    "CANNOT_FIT_REASONS",
    "MAX_SUMMARY_TOKENS",
    "BoundaryAnalysis",
    "CancelSignal",
    "CancelToken",
    "CannotFitExplanation",
    "CannotFitReason",
    "CompactResult",
    "CompactRun",
    "CompactStatus",
    "CompactionCancelled",
    "CountTokens",
    "FitSuggestion",
    "MessageBoundary",
    "PairSpan",
    "Protection",
    "acompact",
    "analyze_boundary",
    "build_candidate",
    "compact",
    "compact_as_result",
    "compact_over_index",
    "estimate_canonical_tokens",
    "estimate_tokens",
    "explain_cannot_fit",
    "make_counter",
    "smaller_keep_that_fits",
    "summary_message",
    "validate_message",
]
