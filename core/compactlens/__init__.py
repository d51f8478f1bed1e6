"""compactlens: a reference engine for LLM conversation compaction.

The names here are the ones most programs need: load a transcript, run a strategy or
the one-shot ``compact()``, keep a session compacted, and read what happened. Everything
else lives in the subpackage that owns it, each with a curated ``__init__``:

- :mod:`compactlens.model`: messages and parts, canonical JSON, token counting, errors;
- :mod:`compactlens.formats`: one module per wire format, detection, the caller bridge;
- :mod:`compactlens.summarizers`: the summarizer protocol and implementations;
- :mod:`compactlens.engine`: index, plan, triggers, strategies, results, explanations;
- :mod:`compactlens.compact`: the one-shot contract, its boundary and explanation;
- :mod:`compactlens.session`: the session runtime, its triggers' context, checkpoints;
- :mod:`compactlens.analysis`: fact survival, cache impact, re-trigger, protocol, reports,
  the verdict;
- :mod:`compactlens.cli`: the command line.

Nothing here mutates its input.
"""

from __future__ import annotations

from compactlens.analysis import Reason, Verdict, VerdictNumbers, analyze, verdict
from compactlens.compact import (
    CancelToken,
    CompactionCancelled,
    CompactResult,
    acompact,
    compact,
    estimate_tokens,
    explain_cannot_fit,
)
from compactlens.engine import (
    ClampStrategy,
    CompactionResult,
    Guards,
    MessageIndex,
    PipelineStrategy,
    SelectiveToolCallCompactionStrategy,
    SlidingWindowStrategy,
    Strategy,
    SummarizationStrategy,
    TokenBudgetComposedStrategy,
    ToolResultCompactionStrategy,
    Trigger,
    TruncationStrategy,
    apply_compaction,
    apply_compaction_async,
    cache_likely_cold,
    messages_exceed,
    reference_tokens,
    run_strategy,
    scaled_config,
    scaled_trigger,
    sized_config,
    strategy_from_config,
    tokens_exceed,
    turns_exceed,
    validate_pairing,
)
from compactlens.model import (
    CharEstimator,
    CompactlensError,
    ConfigError,
    ContentEstimator,
    DataError,
    EncodingUnavailableError,
    InputTypeError,
    Message,
    MissingDependencyError,
    TiktokenTokenizer,
    Tokenizer,
    TranscriptError,
    UsageError,
)
from compactlens.session import (
    CheckpointCorruptError,
    CompactionSession,
    JsonFileCheckpointStore,
    SQLiteCheckpointStore,
)
from compactlens.summarizers import ExtractiveSummarizer, OpenAISummarizer, Summarizer
from compactlens.transcript import Transcript, dump_transcript, load_transcript

__version__ = "0.1.0"

__all__ = [
    "CancelToken",
    "CharEstimator",
    "CheckpointCorruptError",
    "ClampStrategy",
    "CompactResult",
    "CompactionCancelled",
    "CompactionResult",
    "CompactionSession",
    "CompactlensError",
    "ConfigError",
    "ContentEstimator",
    "DataError",
    "EncodingUnavailableError",
    "ExtractiveSummarizer",
    "Guards",
    "InputTypeError",
    "JsonFileCheckpointStore",
    "Message",
    "MessageIndex",
    "MissingDependencyError",
    "OpenAISummarizer",
    "PipelineStrategy",
    "Reason",
    "SQLiteCheckpointStore",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "Strategy",
    "SummarizationStrategy",
    "Summarizer",
    "TiktokenTokenizer",
    "TokenBudgetComposedStrategy",
    "Tokenizer",
    "ToolResultCompactionStrategy",
    "Transcript",
    "TranscriptError",
    "Trigger",
    "TruncationStrategy",
    "UsageError",
    "Verdict",
    "VerdictNumbers",
    "__version__",
    "acompact",
    "analyze",
    "apply_compaction",
    "apply_compaction_async",
    "cache_likely_cold",
    "compact",
    "dump_transcript",
    "estimate_tokens",
    "explain_cannot_fit",
    "load_transcript",
    "messages_exceed",
    "reference_tokens",
    "run_strategy",
    "scaled_config",
    "scaled_trigger",
    "sized_config",
    "strategy_from_config",
    "tokens_exceed",
    "turns_exceed",
    "validate_pairing",
    "verdict",
]
