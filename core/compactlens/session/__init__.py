"""Compaction for a continuing conversation: the session runtime, what its triggers see,
prompt-cache retention, and checkpoints (in memory, JSON files, SQLite)."""

from compactlens.session.checkpoints import (
    Checkpoint,
    CheckpointCorruptError,
    CheckpointStore,
    InMemoryCheckpointStore,
    JsonFileCheckpointStore,
    SQLiteCheckpointStore,
)
from compactlens.session.runtime import (
    CheckpointDiscarded,
    CheckpointRestored,
    CompactionCompleted,
    CompactionFailed,
    CompactionSession,
    CompactionStarted,
    FailPhase,
    FailReason,
    SessionEvent,
    SessionTrigger,
)
from compactlens.session.triggers import (
    FIVE_MINUTES_MS,
    ONE_DAY_MS,
    ONE_HOUR_MS,
    TriggerContext,
    infer_cache_retention_ms,
)

__all__ = [
    "FIVE_MINUTES_MS",
    "ONE_DAY_MS",
    "ONE_HOUR_MS",
    "Checkpoint",
    "CheckpointCorruptError",
    "CheckpointDiscarded",
    "CheckpointRestored",
    "CheckpointStore",
    "CompactionCompleted",
    "CompactionFailed",
    "CompactionSession",
    "CompactionStarted",
    "FailPhase",
    "FailReason",
    "InMemoryCheckpointStore",
    "JsonFileCheckpointStore",
    "SQLiteCheckpointStore",
    "SessionEvent",
    "SessionTrigger",
    "TriggerContext",
    "infer_cache_retention_ms",
]
