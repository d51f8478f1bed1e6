"""The one-pass reader of OpenAI Chat dicts (``engine.wire_index``) against the general path.

``apply_compaction`` reads wire dicts of the common shape with ``wire_index``; the general
path reads them with ``formats.openai_chat.to_messages`` and indexes the messages with
``MessageIndex.build``. Both must build equal indexes (the same messages, with the same
wire objects, meta and origin) and give byte-identical results, on generated transcripts
with the awkward cases mixed in (parallel and late results, orphans, reused ids, reasoning,
names, non-ASCII text, summaries) and on odd dicts that need the general reader.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import pickle
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies_helpers import call, calls, cases, index_of, result, stable, transcripts

from compactlens import CharEstimator, MessageIndex, apply_compaction, run_strategy
from compactlens.engine.strategies.tool_results import (
    TRUNCATION_MARKER,
    _cap,
    _label,
    _part_results,
    format_tool_results,
)
from compactlens.engine.wire_index import wire_index
from compactlens.formats import from_caller
from compactlens.formats.openai_chat import encode
from compactlens.model.messages import SUMMARY_PREFIX, text_message

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

_ODD_TEXTS = ["", "héllo wörld ✓", "emoji 🙂 and \u00e9", SUMMARY_PREFIX + "earlier", "  \n "]


@st.composite
def odd(draw: st.DrawFn, convo: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``convo`` with some messages changed into shapes the fast reader must get right or
    leave to the general reader: names, null or empty content, non-ASCII text, summaries,
    ``reasoning`` keys, developer roles, content part lists, legacy function calls, extra
    keys, reasoning on a tool message, calls without arguments."""
    out = copy.deepcopy(convo)
    for m in out:
        change = draw(st.integers(0, 24))
        role = m.get("role")
        if change == 0:
            m["name"] = draw(st.sampled_from(["bob", "", "ünï"]))
        elif change == 1 and role != "tool":
            m["content"] = None
        elif change == 2:
            m["content"] = draw(st.sampled_from(_ODD_TEXTS))
        elif change == 3 and role == "assistant":
            m["reasoning"] = draw(st.sampled_from(["", "weighing ✓ options", 7]))
        elif change == 4 and role == "assistant":
            m["reasoning_content"] = draw(st.sampled_from(["", "because"]))
        elif change == 5 and role == "system":
            m["role"] = "developer"
        elif change == 6 and role in ("user", "assistant"):
            m["content"] = [{"type": "text", "text": "in a list"}]
        elif change == 7:
            m["cache_control"] = {"type": "ephemeral"}
        elif change == 8 and role == "tool":
            m["reasoning_content"] = "a tool that thinks"
        elif change == 9 and m.get("tool_calls"):
            m["tool_calls"][0]["function"]["arguments"] = ""
        elif change == 10 and role == "assistant" and not m.get("tool_calls"):
            m["function_call"] = {"name": "legacy", "arguments": "{}"}
        elif change == 11 and role == "assistant":
            m["tool_calls"] = []
    return out


def _general(items: list[dict[str, Any]], strategy: Any, tok: Any) -> Any:
    """``apply_compaction`` as it ran before the one-pass reader: read, index, run."""
    caller = from_caller(items)
    index = MessageIndex.build(caller.messages, tok)
    return run_strategy(index, strategy, caller=caller, tokenizer_given=tok is not None)


def _same_messages(fast: Any, general: Any) -> None:
    assert fast == general
    for a, b in zip(fast, general, strict=True):
        assert a.wire is b.wire and a.origin is b.origin
        assert a.wire_format == b.wire_format
        assert dict(a.meta) == dict(b.meta)


@SETTINGS
@given(data=st.data())
def test_fast_path_gives_the_general_paths_result_byte_for_byte(data: st.DataObject) -> None:
    convo = data.draw(transcripts(), label="transcript")
    if data.draw(st.booleans(), label="odd"):
        convo = data.draw(odd(convo), label="odd transcript")
    tok = data.draw(st.sampled_from([None, CharEstimator(), CharEstimator(3.0)]), label="tok")
    case = data.draw(cases(index_of(convo).total_tokens), label="case")

    fast = wire_index(convo, tok)
    general = from_caller(convo)
    if fast is not None:
        caller, index = fast
        _same_messages(caller.messages, general.messages)
        assert caller.originals == general.originals and caller.format is general.format
        assert index == MessageIndex.build(general.messages, tok)

    got = apply_compaction(convo, case.strategy, tok)
    want = _general(convo, case.strategy, tok)
    assert json.dumps(got.messages, ensure_ascii=False) == json.dumps(
        want.messages, ensure_ascii=False
    )
    assert [m is o for m, o in zip(got.messages, convo, strict=False)] == [
        m is o for m, o in zip(want.messages, convo, strict=False)
    ]
    assert stable(got.to_dict()) == stable(want.to_dict())


@settings(max_examples=60, deadline=None)
@given(convo=transcripts())
def test_the_common_shape_takes_the_fast_path(convo: list[dict[str, Any]]) -> None:
    # The generated transcripts are all of the common shape: none may fall back.
    assert wire_index(convo, None) is not None


def test_odd_shapes_fall_back_to_the_general_reader() -> None:
    base = [{"role": "user", "content": "hi"}]
    for odd_message in (
        {"role": "user", "content": [{"type": "text", "text": "parts"}]},
        {"role": "function", "name": "f", "content": "x"},
        {"role": "assistant", "content": None, "function_call": {"name": "f"}},
        {"role": "assistant", "content": "x", "reasoning_content": 3},
        {"role": "tool", "tool_call_id": "c", "content": None},
        {"role": "user", "content": "x", "tool_calls": []},
        {"role": "user", "content": "x", "reasoning_content": "why"},
        {"role": "robot", "content": "x"},
    ):
        assert wire_index([*base, odd_message], None) is None, odd_message


def test_messages_read_on_first_use_behave_as_eager_messages() -> None:
    convo = [
        {"role": "system", "content": "rules"},
        {"role": "user", "content": "héllo", "name": "ann"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "look it up",
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    fast = wire_index(convo, None)
    assert fast is not None
    lazy, eager = fast[0].messages, from_caller(convo).messages
    for a, b in zip(lazy, eager, strict=True):
        assert a == b and b == a and hash(a) == hash(b) and repr(a) == repr(b)
        assert (a != b) is False
        assert pickle.loads(pickle.dumps(a)) == b
        assert copy.deepcopy(a) == b
        changed = dataclasses.replace(a, wire=None)
        assert changed == b and changed.wire is None and changed.origin is b.origin
        assert dict(a.meta) == dict(b.meta)
    assert lazy[1] != lazy[0] and lazy[1] != eager[0]
    # Not read yet: a message built from the same dict still equals the eager one.
    untouched = wire_index(convo, None)
    assert untouched is not None
    assert {untouched[0].messages[2]: 1}[eager[2]] == 1


def _every_label_line(messages: list[Any], limit: int, raw: bool) -> str:
    """The collapsed line built from every label (what format_tool_results gave before it
    stopped at a full line)."""
    labels = [_label(name, output, limit, raw=raw) for name, output in _part_results(messages)]
    return _cap("[Tool results: ", "; ".join(labels) or "no results", "]", limit, raw=raw)


@settings(max_examples=150, deadline=None)
@given(
    outputs=st.lists(st.text(alphabet=" \nab✓é", max_size=60), max_size=6),
    limit=st.integers(len(TRUNCATION_MARKER) + 16, 120),
    raw=st.booleans(),
    name=st.sampled_from(["get", " spaced ", ""]),
)
def test_a_collapsed_line_stops_at_a_full_line_with_the_same_text(
    outputs: list[str], limit: int, raw: bool, name: str
) -> None:
    convo: list[dict[str, Any]] = [
        calls(*(call(f"c{k}", name or "t") for k in range(len(outputs))), content=None),
        *(result(f"c{k}", out) for k, out in enumerate(outputs)),
    ]
    messages = list(from_caller(convo).messages)
    assert format_tool_results(messages, limit, raw=raw) == _every_label_line(messages, limit, raw)


@settings(max_examples=100, deadline=None)
@given(
    role=st.sampled_from(["system", "developer", "user", "assistant"]),
    text=st.text(max_size=30),
)
def test_a_new_one_text_message_is_written_as_the_general_encoder_writes_it(
    role: Any, text: str
) -> None:
    plain = text_message(role, text)
    # A meta key the encoder does not read sends the same message down the general path.
    general = dataclasses.replace(plain, meta={"unread": True})
    assert encode(plain) == encode(general)
