"""Values that are not facts (review 4 #10): the JSON escape of a control character in tool
arguments (Ctrl-C written ``{"chars": "\\u0003"}`` read as the identifier ``u0003``), a
number range (``200-300 words`` read as an identifier) and one-letter choices
(``A/B/C/D`` read as a path). Each rule is tested on both sides: the real fact next to
the noise still counts, and it survives when the call that holds it is kept."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.analysis import fact_survival
from compactlens.analysis.facts import argument_text, message_facts
from compactlens.model import Message, TextPart, ToolCallPart, ToolResultPart


def _call(arguments: str) -> Message:
    return Message(
        role="assistant",
        parts=(ToolCallPart(id="c1", name="write_stdin", arguments=arguments),),
    )


def _values(message: Message) -> dict[str, str]:
    return {f.value: f.kind for f in message_facts(message, 0)}


def test_a_control_character_escape_in_arguments_is_no_fact() -> None:
    arguments = json.dumps({"session_id": 73925, "chars": "\u0003"})
    assert "\\u0003" in arguments  # as Codex writes it
    values = _values(_call(arguments))
    assert not any("0003" in v for v in values)
    assert values.get("73925") == "identifier"  # the session id beside it counts


def test_escaped_arguments_give_the_facts_of_their_decoded_text() -> None:
    arguments = json.dumps(
        {"cmd": "sed -n '1,80p' /srv/app/main.py\ngrep -n ORD-48213 \"/srv/app/o.py\""}
    )
    values = _values(_call(arguments))
    assert {"/srv/app/main.py", "ORD-48213", "/srv/app/o.py"} <= set(values)
    assert not any(v.startswith("n") and "ORD" in v for v in values)  # no "\n" glued on


def test_a_fact_of_escaped_arguments_survives_when_its_call_is_kept() -> None:
    call = _call(json.dumps({"path": "/srv/app/\u00e9t\u00e9.py", "chars": "\u0003"}))
    result = Message(role="tool", parts=(ToolResultPart(call_id="c1", output="done"),))
    report = fact_survival([call, result], [call, result], ())
    assert report.extracted >= 1 and report.survived == report.extracted
    assert "/srv/app/été.py" in {c.fact.value for c in report.checks}
    dropped = fact_survival([call, result], [result], (0,))
    assert "/srv/app/été.py" in {f.value for f in dropped.lost}


@pytest.mark.parametrize("arguments", ['{"a": "x\\', "not json \\n", '{"cmd": "ls"}', ""])
def test_arguments_that_are_not_escaped_json_are_read_as_written(arguments: str) -> None:
    assert argument_text(arguments) == arguments


@settings(max_examples=80)
@given(st.dictionaries(st.sampled_from(["cmd", "path", "chars"]), st.text(max_size=30)))
def test_every_decoded_value_is_in_the_argument_text(args: dict[str, str]) -> None:
    text = argument_text(json.dumps(args))
    for key, value in args.items():
        assert key in text and value in text


@pytest.mark.parametrize("value", ["200-300", "69-148", "1-99999", "10-20000"])
def test_a_number_range_is_no_identifier(value: str) -> None:
    m = Message(role="assistant", parts=(TextPart(f"write {value} words per section"),))
    assert value not in _values(m)


@pytest.mark.parametrize("value", ["48213-10022", "300-200", "4593", "12345", "ORD-48213"])
def test_ids_with_digits_still_count(value: str) -> None:
    # A descending pair is not a range; five digits is an order number; letters make an id.
    m = Message(role="user", parts=(TextPart(f"look at {value} please"),))
    expected = value not in ("4593",)
    assert (_values(m).get(value) == "identifier") is expected


@pytest.mark.parametrize("value", ["A/B/C/D", "x/y/z", "a/b/c"])
def test_one_letter_choices_are_no_path(value: str) -> None:
    m = Message(role="tool", parts=(ToolResultPart(call_id="c1", output=f"options {value}"),))
    assert value not in _values(m)


@pytest.mark.parametrize("value", ["src/app/main.py", "a/b/c.py", "docs/a/b", "/srv/a/b"])
def test_real_paths_still_count(value: str) -> None:
    m = Message(role="tool", parts=(ToolResultPart(call_id="c1", output=f"see {value} now"),))
    assert _values(m).get(value) == "path"
