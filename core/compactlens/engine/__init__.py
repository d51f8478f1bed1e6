"""The compaction engine: the message index (groups, tool-call links, turns, counts; built
once), plans that overlay it, triggers, strategies, the run that projects a plan into a
:class:`CompactionResult`, and the explanation of engine runs."""

from compactlens.engine.guards import (
    DEFAULT_GUARDS,
    NO_GUARDS,
    Guards,
    latest_request_index,
)
from compactlens.engine.index import (
    GroupKind,
    MessageGroup,
    MessageIndex,
    PairingProblem,
    ToolLink,
    index_counter,
    memo_tokenizer,
    pairing_problems,
    validate_pairing,
)
from compactlens.engine.plan import Insertion, Plan
from compactlens.engine.profiles import (
    DEFAULT_PROFILE,
    PROFILE_NAMES,
    Profile,
    get_profile,
    profile_guards,
)
from compactlens.engine.providers import (
    PROVIDERS,
    ProtocolProblem,
    Provider,
    provider_for_format,
    provider_problems,
)
from compactlens.engine.result import (
    Action,
    CompactionResult,
    Decisions,
    Explanation,
    GroupDecision,
    ProtectedItem,
    StageEvent,
    Status,
    Suggestion,
    TokenCounts,
)
from compactlens.engine.run import apply_compaction, apply_compaction_async, run_strategy
from compactlens.engine.strategies.base import RunContext, StageOutcome, Strategy, Variant
from compactlens.engine.strategies.clamp import ClampStrategy
from compactlens.engine.strategies.config import STRATEGY_TYPES, strategy_from_config, with_profile
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
from compactlens.engine.triggers import (
    ALWAYS,
    NEVER,
    Metrics,
    Trigger,
    all_of,
    always,
    any_of,
    cache_likely_cold,
    describe_trigger,
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

__all__ = [
    "ALWAYS",
    "DEFAULT_GUARDS",
    "DEFAULT_PROFILE",
    "NEVER",
    "NO_GUARDS",
    "PROFILE_NAMES",
    "PROVIDERS",
    "STRATEGY_TYPES",
    "Action",
    "ClampStrategy",
    "CompactionResult",
    "Decisions",
    "Explanation",
    "GroupDecision",
    "GroupKind",
    "Guards",
    "Insertion",
    "MessageGroup",
    "MessageIndex",
    "Metrics",
    "PairingProblem",
    "PipelineStrategy",
    "Plan",
    "Profile",
    "ProtectedItem",
    "ProtocolProblem",
    "Provider",
    "RunContext",
    "SelectiveToolCallCompactionStrategy",
    "SlidingWindowStrategy",
    "StageEvent",
    "StageOutcome",
    "Status",
    "Strategy",
    "Suggestion",
    "SummarizationStrategy",
    "TokenBudgetComposedStrategy",
    "TokenCounts",
    "ToolLink",
    "ToolResultCompactionStrategy",
    "Trigger",
    "TruncationStrategy",
    "Variant",
    "all_of",
    "always",
    "any_of",
    "apply_compaction",
    "apply_compaction_async",
    "cache_likely_cold",
    "describe_trigger",
    "format_tool_names",
    "format_tool_results",
    "get_profile",
    "groups_exceed",
    "has_tool_calls",
    "index_counter",
    "latest_request_index",
    "memo_tokenizer",
    "messages_exceed",
    "never",
    "not_",
    "pairing_problems",
    "profile_guards",
    "provider_for_format",
    "provider_problems",
    "run_strategy",
    "strategy_from_config",
    "tokens_at_most",
    "tokens_below",
    "tokens_exceed",
    "turns_exceed",
    "validate_pairing",
    "with_profile",
]
