"""Facts that matter, noise apart: each rule of what is minor (dates and times printed by
tools, hashes and machine code, addresses, progress percentages, tool names, listings,
placeholders, secrets), each tested on both sides (the noise is set apart, the real fact
next to it still counts); near-duplicate paths folded; and one fixed denominator per
conversation, whatever a compaction keeps."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.analysis import conversation_facts, fact_survival, minor_kind
from compactlens.analysis.fact_context import DUMP_VALUES, LISTING_PATHS
from compactlens.analysis.facts import Fact, FactKind, FactSource
from compactlens.model import Message, TextPart, ToolCallPart, ToolResultPart


def fact(kind: FactKind, value: str, source: FactSource = "tool_result") -> Fact:
    return Fact(kind, value, 0, "tool" if source == "tool_result" else "assistant", source)


@pytest.mark.parametrize(
    ("kind", "value", "source", "expected"),
    [
        # dates and times as tools print them
        ("date", "2026-02-12", "tool_result", "timestamp"),
        ("date", "2024-04-11T02:00:01.874Z", "text", "timestamp"),
        ("date", "16:42:11", "text", "timestamp"),
        ("date", "Apr 9", "text", "timestamp"),
        ("date", "May 15, 2024", "tool_result", "timestamp"),
        # hex: addresses, disassembler names, machine code, digests
        ("identifier", "0x400663", "text", "address"),
        ("identifier", "00400663", "text", "address"),
        ("quantity", "0040068d", "text", "address"),
        ("identifier", "DAT_0040074c", "text", "address"),
        ("identifier", "s_-Warm_Up-_00400741", "text", "address"),
        ("identifier", "FUN_0040060d", "tool_result", "address"),
        ("identifier", "4883c480", "tool_result", "hash"),
        ("identifier", "4889c7", "tool_result", "hash"),
        ("identifier", "8e41c07", "text", "hash"),
        # a test runner's progress
        ("quantity", "3%", "tool_result", "percentage"),
        ("quantity", "64%", "tool_result", "percentage"),
        # tool names are not facts about the task
        ("tool_name", "Bash", "tool_call", "tool_name"),
        ("tool_name", "Skill", "tool_call", "tool_name"),
        # examples from documentation, redactions, secrets
        ("path", "../path/to/your", "tool_result", "placeholder"),
        ("path", "../path/to/your.db", "tool_result", "placeholder"),
        ("identifier", "your_project_id", "text", "placeholder"),
        ("identifier", "your_api_key", "text", "redaction"),
        (
            "identifier",
            "dev-only-secret-not-for-production-use-64-bytes",
            "tool_result",
            "redaction",
        ),
        ("quoted", "[REDACTED]", "text", "redaction"),
        ("identifier", "****", "tool_result", "redaction"),
        # example values of docs and tests
        ("identifier", "abc123", "tool_result", "placeholder"),
        ("identifier", "1234567890abcdefghij", "tool_result", "placeholder"),
        # ids an API minted for a message or a call (Bedrock's and Vertex's too)
        ("identifier", "msg_bdrk_018k8PMVb8UJADdEHJGLwskb", "tool_result", "api_id"),
        ("identifier", "toolu_bdrk_011bkYdiuuJwtny8QmBSA3Nb", "tool_result", "api_id"),
        ("identifier", "toolu_01M6PWVSrj68MBb6U3u8oDCX", "text", "api_id"),
        ("identifier", "call_Hk29dLq0Zr7yWbN4sT1uVx3e", "tool_result", "api_id"),
        ("identifier", "chatcmpl-9aQ2mXhT7LrB4cW8vN1pZs6k", "tool_result", "api_id"),
        # an encoded blob (a reasoning signature cut at a line's end), with or without a slash
        ("identifier", "EvkLCkgICxABGAIqQGvScM60keq3yzKQXUNx1BIRpwLk1g6cC1", "tool_result", "hash"),
        ("path", "T0gpM4qwMbknBqt5y4xapYYmgt6gXhvpiL/K6Hn45R2R7YjItjPU6Z", "tool_result", "hash"),
        # a compact date in a model name or a build stamp
        ("identifier", "20270101", "tool_result", "timestamp"),
    ],
)
def test_noise_is_minor(kind: FactKind, value: str, source: FactSource, expected: str) -> None:
    assert minor_kind(fact(kind, value, source)) == expected


@pytest.mark.parametrize(
    ("kind", "value", "source"),
    [
        ("path", "src/billing/money.py", "tool_arguments"),
        ("path", "/workspace/django/db/models/constraints.py", "tool_result"),
        ("path", "core/secrets.py", "tool_result"),  # a file named like a secret is a file
        ("path", "docs/your-guide.md", "text"),
        ("identifier", "INC-4821", "tool_result"),
        ("identifier", "ORD-48213", "text"),
        ("identifier", "1234567", "tool_result"),  # an order number, not a hash
        ("identifier", "bad123", "text"),  # six characters not led by a digit: a name
        ("identifier", "ABC456", "tool_result"),  # a code in capitals, not the example value
        ("identifier", "claude-opus-4-20250514", "tool_result"),  # a model, date and all
        ("identifier", "getUserAccountById2025v2Handler", "tool_result"),  # camelCase
        ("identifier", "call_abc", "tool_result"),  # too short to be an API's id
        ("identifier", "20271301", "tool_result"),  # no month 13: an order number
        ("identifier", "deadbeefcafe", "text"),  # letters only
        ("identifier", "E501", "tool_result"),
        ("identifier", "RemovedInDjango31Warning", "tool_result"),
        ("identifier", "1Z999AA10123456784", "tool_result"),
        ("quantity", "1500 ms", "tool_result"),
        ("quantity", "2.5 GB", "tool_result"),
        ("quantity", "24h", "tool_result"),  # hours, outside a dump
        ("quantity", "87%", "text"),  # a percentage a person wrote
        ("date", "2024-03-28", "text"),  # a calendar date a person wrote
        ("date", "April 22", "text"),
        ("money", "$139.95", "tool_result"),
        ("url", "https://docs.djangoproject.com/en/3.0/", "tool_result"),
        ("latest_request", "Fix the 16:42 cron job for 00400663", "text"),
    ],
)
def test_real_facts_still_count(kind: FactKind, value: str, source: FactSource) -> None:
    assert minor_kind(fact(kind, value, source)) is None


_HEX = "0123456789abcdef"


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet=_HEX, min_size=7, max_size=40).filter(
        lambda s: any(c.isdigit() for c in s) and any(c.isalpha() for c in s)
    )
)
def test_hex_text_with_digits_and_letters_is_never_counted(value: str) -> None:
    assert minor_kind(fact("identifier", value)) in ("hash", "address")


_WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=2, max_size=10).filter(
    lambda s: (
        s.strip("_")
        and "your" not in s
        and "secret" not in s
        and "redact" not in s
        and "abcdefghi" not in s
    )
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_WORD, min_size=1, max_size=5), st.sampled_from(["py", "md", "rs", "json"]))
def test_a_plain_file_path_always_counts(segments: list[str], ext: str) -> None:
    path = "/".join(segments) + "." + ext
    for source in ("tool_result", "tool_arguments", "text"):
        assert minor_kind(fact("path", path, source)) is None, path


@settings(max_examples=100, deadline=None)
@given(st.dates(), st.sampled_from(["tool_result", "tool_arguments"]))
def test_a_date_a_tool_printed_is_minor(day: object, source: FactSource) -> None:
    assert minor_kind(fact("date", str(day), source)) == "timestamp"


@given(st.text(min_size=1, max_size=40))
def test_the_latest_request_always_counts_and_tool_names_never(value: str) -> None:
    assert minor_kind(fact("latest_request", value, "text")) is None
    assert minor_kind(fact("tool_name", value, "tool_call")) == "tool_name"


# ------------------------------------------------------------------- context in a message


def _call(call_id: str, name: str, **arguments: str) -> Message:
    return Message(
        role="assistant",
        parts=(ToolCallPart(id=call_id, name=name, arguments=json.dumps(arguments)),),
    )


def _result(call_id: str, output: str) -> Message:
    return Message(role="tool", parts=(ToolResultPart(call_id=call_id, output=output),))


def _text(role: str, text: str) -> Message:
    return Message(role=role, parts=(TextPart(text),))


def _counted(messages: list[Message]) -> dict[str, str | None]:
    return {f.value: minor_kind(f) for f in conversation_facts(messages)}


def _listing(n: int) -> str:
    return "\n".join(f"/repo/pkg/locale/l{i:02d}/LC_MESSAGES/django.po" for i in range(n))


def test_a_long_listing_is_minor_but_a_file_the_agent_named_counts() -> None:
    edited = "/repo/pkg/locale/l03/LC_MESSAGES/django.po"
    messages = [
        _text("user", "Fix the translations."),
        _call("c1", "bash", command="find /repo -name '*.po'"),
        _result("c1", _listing(LISTING_PATHS + 8)),
        _call("c2", "edit", path=edited),
        _result("c2", "Edited."),
    ]
    kinds = _counted(messages)
    listed = [v for v in kinds if v.startswith("/repo/pkg/locale/")]
    assert len(listed) == LISTING_PATHS + 8
    assert kinds[edited] is None  # named in the edit's arguments: a fact
    assert all(kinds[v] == "listing" for v in listed if v != edited)


def test_a_few_paths_in_one_output_are_facts() -> None:
    messages = [
        _text("user", "Where is the bug?"),
        _call("c1", "grep", pattern="round"),
        _result("c1", _listing(LISTING_PATHS - 1)),
    ]
    kinds = _counted(messages)
    assert [v for v in kinds if v.startswith("/repo/")]
    assert all(kinds[v] is None for v in kinds if v.startswith("/repo/"))


def test_hex_numbers_in_a_dump_are_machine_code_but_hours_elsewhere_count() -> None:
    lines = [
        f".text:{0x400600 + 5 * i:08x}   be4c074000   MOV ESI,0x4{i:05d}"
        for i in range(DUMP_VALUES)
    ]
    dump = "\n".join([*lines, ".text:0040063e   be4c074000   MOV ESI,DAT_0040074c ; = 57h W"])
    messages = [
        _text("user", dump),
        _text("assistant", "The service restarts every 24h; the timeout is 57h by default."),
    ]
    found = conversation_facts(messages)
    by_message = {(f.value, f.message_index): minor_kind(f) for f in found}
    # 57h was first seen in the dump, but the assistant names it in prose too: it counts.
    assert by_message[("57h", 0)] is None
    assert by_message[("24h", 1)] is None
    only_dump = conversation_facts(messages[:1])
    assert {f.value: minor_kind(f) for f in only_dump}["57h"] == "address"
    assert all(minor_kind(f) is not None for f in only_dump if f.kind != "latest_request")


def test_a_path_inside_a_longer_path_is_one_fact() -> None:
    messages = [
        _text("user", "Use ../path/to/your and then ../path/to/your.db, see src/lib too."),
        _text("assistant", "Opened /repo/src/lib/options.c and src/lib."),
    ]
    values = [f.value for f in conversation_facts(messages) if f.kind == "path"]
    assert "../path/to/your" not in values and "../path/to/your.db" in values
    assert "src/lib" not in values and "/repo/src/lib/options.c" in values


def test_a_path_that_counts_is_not_folded_into_a_listing() -> None:
    messages = [
        _text("user", "Look at /repo/pkg/locale please."),
        _call("c1", "bash", command="ls -R"),
        _result("c1", _listing(LISTING_PATHS + 2)),
    ]
    kinds = _counted(messages)
    assert kinds["/repo/pkg/locale"] is None


# ------------------------------------------------------------------ one fixed denominator


def _conversation() -> list[Message]:
    out = [_text("system", "You are a coding agent.")]
    for i in range(6):
        out += [
            _text("user", f"Step {i}: fix TICKET-{4820 + i} in src/mod{i}/core.py ({i + 1}00 ms)."),
            _call(f"c{i}", "bash", command=f"pytest tests/test_mod{i}.py"),
            _result(
                f"c{i}", f"[ {10 * i}%] FAILED tests/test_mod{i}.py::test_run{i} at 16:4{i}:00"
            ),
            _text("assistant", f"Fixed src/mod{i}/core.py; build id 9f3a{i}c2d1 deployed."),
        ]
    return out


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_the_denominator_is_the_conversations_whatever_is_kept(data: st.DataObject) -> None:
    original = _conversation()
    n = len(original)
    kept = sorted(data.draw(st.sets(st.integers(0, n - 1)), label="kept"))
    more = sorted(set(kept) | data.draw(st.sets(st.integers(0, n - 1)), label="more"))
    few = fact_survival(original, [original[i] for i in kept], set(range(n)) - set(kept))
    many = fact_survival(original, [original[i] for i in more], set(range(n)) - set(more))
    assert few.extracted == many.extracted > 0
    assert few.minor_extracted == many.minor_extracted
    # Keeping more messages never lowers recall.
    assert many.survived >= few.survived
    assert many.recall >= few.recall
    everything = fact_survival(original, original, ())
    assert everything.extracted == few.extracted and everything.recall == 1.0


def test_a_json_escape_a_tool_printed_is_no_part_of_a_word() -> None:
    """A log printed with its escapes (a JSON dump): ``\\n2026-01-14`` is a line break and
    a date, ``\\u2026`` an ellipsis; neither reads as the word ``n2026-01-14`` or
    ``u2026``. A Windows path with a backslash before a letter is left as it is."""
    dump = (
        '{"text": "Output\\n\\n2026-01-14 10:30:15 [INFO] Session started: INC-4821'
        '\\n2026-01-14 10:30:16 waiting\\u2026 C:\\\\new\\\\report.txt"}'
    )
    messages = [_text("user", "What failed?"), _call("c1", "cat"), _result("c1", dump)]
    kinds = _counted(messages)
    assert not [v for v in kinds if v.startswith(("n2026", "u2026"))], kinds
    assert kinds["INC-4821"] is None  # the real fact next to it still counts
    assert any(v.startswith("2026-01-14") and kinds[v] == "timestamp" for v in kinds), kinds


@pytest.mark.parametrize(
    "value",
    ["1752395122", "9971519902956727284", "7815014330624137088", "18338937400191147341"],
)
def test_a_long_bare_number_a_tool_printed_is_minor(value: str) -> None:
    # Review 6: process handles of a `ps` listing (--metrics-shmem-handle=...) were 112 of
    # a real log's 806 lost "identifier" facts.
    assert minor_kind(fact("identifier", value, "tool_result")) == "number"
    assert minor_kind(fact("identifier", value, "tool_arguments")) == "number"


@pytest.mark.parametrize(
    ("value", "source"),
    [
        ("5551234567", "text"),  # a number a person wrote (a phone, an account) counts
        ("262144", "tool_result"),  # shorter than 10 digits
        ("48213", "tool_result"),
        ("ORD-9971519902956727284", "tool_result"),  # not bare digits
    ],
)
def test_shorter_or_written_numbers_still_count(value: str, source: FactSource) -> None:
    assert minor_kind(fact("identifier", value, source)) is None


def test_process_handles_leave_recall_and_the_real_ids_stay() -> None:
    listing = (
        "chrome --metrics-shmem-handle=1752395122,r,9971519902956727284,7815014330624137088,"
        "262144 --field-trial-handle=3190708995682289984,18338937400191147341 pid 48213"
    )
    facts = conversation_facts(
        [
            Message(role="user", parts=(TextPart("Why is chrome pid 48213 slow?"),)),
            Message(role="assistant", parts=(ToolCallPart(id="c1", name="Bash", arguments="{}"),)),
            Message(role="tool", parts=(ToolResultPart(call_id="c1", output=listing),)),
        ]
    )
    minor = {f.value for f in facts if minor_kind(f) == "number"}
    assert minor == {
        "1752395122",
        "9971519902956727284",
        "7815014330624137088",
        "3190708995682289984",
        "18338937400191147341",
    }
    counted = {f.value for f in facts if minor_kind(f) is None}
    assert {"262144", "48213"} <= counted
