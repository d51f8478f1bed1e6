"""Load, convert and dump transcripts in every supported format and container.

A transcript is read from a path, bytes, text or an already parsed JSON value.
Containers: a JSON array of messages, an object holding the array (``messages``,
a Responses ``input``/``output``, an OpenHands ``history``, the last chain of
a ToolBench answer's ``train_messages``) with any other keys (``model``,
``tools``, ``system``...), JSON lines (one message or event a line), a single
message object, and compactlens' canonical document.
The format is detected (:mod:`compactlens.formats.detect`) unless the caller
names it, and :attr:`Transcript.detection` says which one and why.

Dumping in the transcript's own format gives back JSON equal to the input: every
unchanged message is written as its original wire object, the container keeps
its other keys, and items that are not messages (Claude Code progress events)
go back to their positions. Converting to another format builds new wire
objects and reports, as :class:`ConversionWarning` objects, what could not be
carried over.

Bad input raises :class:`~compactlens.model.errors.TranscriptError` naming the source,
a location (``line 3, column 17``, ``messages[12].content[3].type``,
``line 8: message.content[0]``) and the problem. Limits (size, nesting depth,
string length) are keyword arguments of :func:`load_transcript`.
"""

from compactlens.formats.base import ConversionWarning, Split
from compactlens.transcript.base import Transcript
from compactlens.transcript.container import LIST_KEYS as LIST_KEYS
from compactlens.transcript.container import Container
from compactlens.transcript.container import ContainerKind as ContainerKind
from compactlens.transcript.container import PathKey as PathKey
from compactlens.transcript.convert import convert_file
from compactlens.transcript.read import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_DEPTH,
    DEFAULT_MAX_STRING,
    load_transcript,
)
from compactlens.transcript.recorded import ACOMPACT_PREFIX as ACOMPACT_PREFIX
from compactlens.transcript.recorded import COMPACTION_PARTS as COMPACTION_PARTS
from compactlens.transcript.recorded import COMPACTION_READERS as COMPACTION_READERS
from compactlens.transcript.recorded import CompactionReader as CompactionReader
from compactlens.transcript.write import JSONL_FORMATS as JSONL_FORMATS
from compactlens.transcript.write import NAMED_RESULTS as NAMED_RESULTS
from compactlens.transcript.write import dump_transcript

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_STRING",
    "Container",
    "ConversionWarning",
    "Split",
    "Transcript",
    "convert_file",
    "dump_transcript",
    "load_transcript",
]
