"""Fuzzing: mutated and truncated transcripts give a transcript or a TranscriptError, nothing else.

Each format reader is also called directly (without the safety net of
``load_transcript``), so a stray ``KeyError`` or ``TypeError`` in a reader fails here.
A transcript that does load must also dump and convert to every format.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from formats_support import FIXTURE_FORMATS, FIXTURES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import Transcript, TranscriptError, dump_transcript, load_transcript
from compactlens.formats import FORMATS

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = sorted(FIXTURE_FORMATS)
TEXTS = {name: (FIXTURES / name).read_text(encoding="utf-8") for name in NAMES}
DOCS: dict[str, Any] = {
    name: (
        [json.loads(line) for line in text.split("\n") if line.strip()]
        if name.endswith(".jsonl")
        else json.loads(text)
    )
    for name, text in TEXTS.items()
}
#: Keys and type names the readers look at, so mutations hit interesting branches.
VOCABULARY = sorted(
    {
        "type", "role", "content", "text", "parts", "kind", "contents", "data", "message",
        "tool_calls", "tool_call_id", "function", "function_call", "arguments", "name", "id",
        "input", "output", "call_id", "source", "tool_use_id", "is_error", "image_url", "url",
        "file", "file_data", "toolCallId", "toolName", "approvalId", "approved", "value",
        "summary", "encrypted_content", "thinking", "signature", "system", "instructions",
        "messages", "status", "args", "result", "exception", "media_type", "mediaType", "uri",
        "user", "assistant", "tool", "developer", "human", "ai", "chat_message", "tool_use",
        "tool_result", "tool-call", "tool-result", "function_call_output", "reasoning",
        "input_text", "output_text", "refusal", "image", "document", "media", "json",
        "error-json", "execution-denied", "text_reasoning", "function_result",
        "compaction", "progress", "summary_text", "base64", "redacted_thinking",
    }
)  # fmt: skip
scalars = (
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(VOCABULARY)
    | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(VOCABULARY) | st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a node of a JSON value (the root is ``()``)."""
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.extend(paths(v, (*prefix, i)))
    return out


def replaced(value: Any, path: tuple[Any, ...], new: Any, delete: bool) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced (or deleted)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        copy = dict(value)
        if delete and not rest:
            copy.pop(head, None)
        else:
            copy[head] = replaced(value[head], rest, new, delete)
        return copy
    items = list(value)
    if delete and not rest:
        del items[head]
    else:
        items[head] = replaced(value[head], rest, new, delete)
    return items


def check_loads_or_fails_cleanly(src: Any) -> Transcript | None:
    try:
        t = load_transcript(src)
    except TranscriptError as exc:
        assert exc.message and exc.source
        return None
    dump_transcript(t)
    for name in FORMATS:
        converted = t.convert(name)
        assert converted.format == name
    return t


def check_readers_directly(doc: Any) -> None:
    """Every reader on the item list: a result or a TranscriptError (no safety net)."""
    if isinstance(doc, dict):
        items = next(
            (doc[k] for k in ("messages", "input", "output") if isinstance(doc.get(k), list)), [doc]
        )
    elif isinstance(doc, list):
        items = doc
    else:
        return
    for fmt in FORMATS.values():
        with contextlib.suppress(TranscriptError):
            fmt.split_items(items, "<fuzz>")


@FUZZ
@given(name=st.sampled_from(NAMES), data=st.data())
def test_truncated_text(name: str, data: st.DataObject) -> None:
    text = TEXTS[name]
    cut = data.draw(st.integers(0, len(text)))
    check_loads_or_fails_cleanly(text[:cut])


@FUZZ
@given(name=st.sampled_from(NAMES), data=st.data())
def test_mutated_text(name: str, data: st.DataObject) -> None:
    text = TEXTS[name]
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(text)))
        op = data.draw(st.sampled_from(["delete", "insert", "replace", "duplicate-line"]))
        if op == "delete":
            text = text[:at] + text[at + data.draw(st.integers(1, 8)) :]
        elif op == "insert":
            text = text[:at] + data.draw(st.text(max_size=4)) + text[at:]
        elif op == "replace":
            text = text[:at] + data.draw(st.sampled_from('{}[]":,\\0n')) + text[at + 1 :]
        else:
            lines = text.split("\n")
            k = data.draw(st.integers(0, len(lines) - 1))
            lines.insert(k, lines[k])
            text = "\n".join(lines)
    check_loads_or_fails_cleanly(text)


@FUZZ
@given(name=st.sampled_from(NAMES), data=st.data())
def test_mutated_structure(name: str, data: st.DataObject) -> None:
    doc = DOCS[name]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths(doc)))
        delete = bool(path) and data.draw(st.booleans())
        doc = replaced(doc, path, data.draw(json_values), delete)
    check_readers_directly(doc)
    check_loads_or_fails_cleanly(doc)


@FUZZ
@given(raw=st.binary(max_size=64))
def test_random_bytes(raw: bytes) -> None:
    check_loads_or_fails_cleanly(raw)


@FUZZ
@given(doc=json_values)
def test_random_json(doc: Any) -> None:
    check_readers_directly(doc)
    check_loads_or_fails_cleanly(json.dumps(doc))
