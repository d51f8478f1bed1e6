"""Run a tuned compactlens configuration inside agent frameworks, and see it in telemetry.

One module per framework, each importing its framework only when used (importing this
package needs none of them):

- :func:`compaction_middleware` (LangChain v1 ``create_agent``),
- :func:`compaction_capability` / :func:`history_processor` (pydantic-ai),
- :class:`CompactingSession` (OpenAI Agents SDK),
- :class:`CompactlensStrategy` (Microsoft Agent Framework).

Each takes a :class:`Compactor` (a strategy with its guards, profile, tokenizer and an
optional :class:`Recorder` that writes a recording the inspector opens) and remembers
its loop between calls (:class:`LoopMemory`, :class:`Loops`), so a call costs what was
appended. A folder of recordings is a run history: :class:`RunsFolder` lists and follows
it, :func:`read_call` rebuilds the history one call saw and :func:`replay_call` runs it
again.
"""

from compactlens.integrations.agent_framework import CompactlensStrategy
from compactlens.integrations.compactor import Compactor, OneShot, changed
from compactlens.integrations.langchain import compact_langchain_messages, compaction_middleware
from compactlens.integrations.loop import LoopMemory, Loops
from compactlens.integrations.openai_agents import CompactingSession
from compactlens.integrations.outcome import CompactorRun
from compactlens.integrations.pydantic_ai import compaction_capability, history_processor
from compactlens.integrations.recording import Recorder
from compactlens.integrations.runs import (
    CallReader,
    CallSummary,
    FileProblem,
    RecordedCall,
    Replay,
    RunReader,
    RunsFolder,
    RunSummary,
    config_name,
    iter_calls,
    read_call,
    read_uploads,
    replay_call,
    summarize_bytes,
)
from compactlens.integrations.telemetry import (
    ATTRIBUTES,
    compaction_attributes,
    configure_tracing,
    include_content,
)

__all__ = [
    "ATTRIBUTES",
    "CallReader",
    "CallSummary",
    "CompactingSession",
    "CompactlensStrategy",
    "Compactor",
    "CompactorRun",
    "FileProblem",
    "LoopMemory",
    "Loops",
    "OneShot",
    "RecordedCall",
    "Recorder",
    "Replay",
    "RunReader",
    "RunSummary",
    "RunsFolder",
    "changed",
    "compact_langchain_messages",
    "compaction_attributes",
    "compaction_capability",
    "compaction_middleware",
    "config_name",
    "configure_tracing",
    "history_processor",
    "include_content",
    "iter_calls",
    "read_call",
    "read_uploads",
    "replay_call",
    "summarize_bytes",
]
