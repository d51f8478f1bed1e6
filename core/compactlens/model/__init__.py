"""The message model every other package builds on: messages and parts, their canonical
JSON, token counting (estimates and offline tiktoken), errors and shared validation.

Imports nothing else from compactlens.
"""

from compactlens.model.display import (
    DECISION_COLORS,
    STATUS_COLORS,
    Card,
    budget_bar_html,
    card_html,
    card_text,
    clip,
    data_frame,
)
from compactlens.model.errors import (
    CompactlensError,
    ConfigError,
    InputTypeError,
    TranscriptError,
    UsageError,
)
from compactlens.model.gc_pause import gc_paused
from compactlens.model.messages import (
    ROLES,
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
    message_text,
    part_text,
    text_message,
)
from compactlens.model.recorded import RecordedCompaction
from compactlens.model.serialize import (
    message_from_dict,
    message_to_dict,
    messages_to_json,
    part_from_dict,
    part_to_dict,
)
from compactlens.model.tokens import (
    CharEstimator,
    EncodingUnavailableError,
    TiktokenTokenizer,
    Tokenizer,
    count_messages,
    estimate_message_tokens,
    make_tokenizer,
    tokenizer_name,
    utf16_length,
)
from compactlens.model.validation import check_int

__all__ = [
    "DECISION_COLORS",
    "ROLES",
    "STATUS_COLORS",
    "SUMMARY_PREFIX",
    "ApprovalRequestPart",
    "ApprovalResponsePart",
    "Card",
    "CharEstimator",
    "CompactlensError",
    "ConfigError",
    "EncodingUnavailableError",
    "InputTypeError",
    "MediaPart",
    "Message",
    "OpaquePart",
    "Part",
    "ReasoningPart",
    "RecordedCompaction",
    "Role",
    "TextPart",
    "TiktokenTokenizer",
    "Tokenizer",
    "ToolCallPart",
    "ToolResultPart",
    "TranscriptError",
    "UsageError",
    "budget_bar_html",
    "card_html",
    "card_text",
    "check_int",
    "clip",
    "count_messages",
    "data_frame",
    "estimate_message_tokens",
    "gc_paused",
    "make_tokenizer",
    "message_from_dict",
    "message_text",
    "message_to_dict",
    "messages_to_json",
    "part_from_dict",
    "part_text",
    "part_to_dict",
    "text_message",
    "tokenizer_name",
    "utf16_length",
]
