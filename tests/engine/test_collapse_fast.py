"""The collapsed line read straight from Chat dicts, and the fold of only what shows.

``format_tool_results`` builds a tool-call group's line from the wire dicts when the
group's messages are unread lazy messages of ``engine.wire_index`` (no parts built), and
folds the whitespace of only as much of each output as the line can show. Both must give
exactly the line the general path gives: every label built from the messages' parts in
full, then joined and cut (:func:`_every_label_line`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies_helpers import call, calls, result, user

from compactlens.engine.strategies.tool_results import (
    TRUNCATION_MARKER,
    _cap,
    _label,
    _label_head,
    _part_results,
    fold_whitespace_prefix,
    format_tool_results,
)
from compactlens.engine.wire_index import wire_index, wire_tool_results
from compactlens.formats import from_caller

_NAMES = ["read_file", " spaced ", "\tlead", "trail ", "ünï", "", "a b"]
_PIECES = ["", " ", "\n", "\t", "  ", "\r\n", "\xa0", "word", "héllo", "✓", "x" * 40, "\x1c"]
_OUTPUTS = st.lists(st.sampled_from(_PIECES), max_size=12).map("".join)
_LIMITS = st.integers(len(TRUNCATION_MARKER) + 16, 160)


def _every_label_line(messages: Any, limit: int, raw: bool) -> str:
    """The line from every label built in full (the general path's meaning)."""
    labels = [_label(name, output, limit, raw=raw) for name, output in _part_results(messages)]
    body = "; ".join(labels) if labels else "no results"
    return _cap("[Tool results: ", body, "]", limit, raw=raw)


@st.composite
def tool_groups(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Turns of 1-4 parallel calls with odd names and outputs; some results carry a name,
    some answer a call of an earlier turn or no call at all, some ids are reused."""
    convo: list[dict[str, Any]] = []
    ids: list[str] = []
    for t in range(draw(st.integers(1, 4))):
        convo.append(user(f"turn {t}"))
        count = draw(st.integers(1, 4))
        new = [draw(st.sampled_from([f"c{t}_{k}", *ids[-2:]])) for k in range(count)]
        convo.append(calls(*(call(i, draw(st.sampled_from(_NAMES))) for i in new)))
        ids.extend(new)
        for i in new:
            answered = draw(st.sampled_from([i, i, i, "c_missing", *ids[:1]]))
            message = result(answered, draw(_OUTPUTS))
            if draw(st.integers(0, 3)) == 0:
                message["name"] = draw(st.sampled_from(_NAMES))
            convo.append(message)
    return convo


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.data_too_large])
@given(convo=tool_groups(), limit=_LIMITS, raw=st.booleans())
def test_a_line_from_the_wire_dicts_is_the_line_from_the_parts(
    convo: list[dict[str, Any]], limit: int, raw: bool
) -> None:
    fast = wire_index(convo, None)
    assert fast is not None
    lazy = fast[1].messages
    eager = from_caller(convo).messages
    for group in fast[1].groups:
        picked = [lazy[k] for k in group.indices]
        assert wire_tool_results(picked) is not None  # nothing read yet: the dict path
        line = format_tool_results(picked, limit, raw=raw)
        assert line == _every_label_line([eager[k] for k in group.indices], limit, raw)
        assert wire_tool_results(picked) is not None  # and still nothing read


@settings(max_examples=300, deadline=None)
@given(name=st.sampled_from(_NAMES), output=_OUTPUTS, limit=_LIMITS, data=st.data())
def test_a_label_head_is_the_start_of_the_whole_label(
    name: str, output: str, limit: int, data: st.DataObject
) -> None:
    n = data.draw(st.integers(0, limit), label="n")
    assert _label_head(name, output, limit, n) == _label(name, output, limit)[:n]


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from("ab. \n\t\r\x0b\x1c\x85\xa0é\x01"), max_size=200),
    n=st.integers(min_value=0, max_value=120),
)
def test_folding_a_start_equals_folding_everything_with_any_whitespace(text: str, n: int) -> None:
    assert fold_whitespace_prefix(text, n) == " ".join(text.split())[:n]


def test_a_message_read_before_is_formatted_from_its_parts() -> None:
    convo = [user("go"), calls(call("a", "grep")), result("a", "found   it")]
    fast = wire_index(convo, None)
    assert fast is not None
    messages = list(fast[1].messages[1:])
    assert wire_tool_results(messages) is not None
    assert messages[1].parts  # read: its parts are what the line shows from now on
    assert wire_tool_results(messages) is None
    convo[2]["content"] = "changed after reading"
    assert format_tool_results(messages) == "[Tool results: grep: found it]"


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(
        st.tuples(st.integers(0, 16), st.text(alphabet="ab.", min_size=0, max_size=30)),
        max_size=80,
    ),
    n=st.integers(min_value=0, max_value=600),
)
def test_folding_indented_text_grows_its_prefix_to_the_same_fold(
    lines: list[tuple[int, str]], n: int
) -> None:
    # Indented lines fold to much less than their length: the prefix must grow, maybe
    # several times, and still give exactly the start of the whole fold.
    text = "\n".join(" " * indent + body for indent, body in lines)
    assert fold_whitespace_prefix(text, n) == " ".join(text.split())[:n]
