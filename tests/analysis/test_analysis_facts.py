"""Fact extraction on crafted messages, and fact survival through real compactions."""

from __future__ import annotations

import re

import pytest
from analysis_helpers import assistant, call, result, small_transcript, system, user
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import (
    SummarizationStrategy,
    ToolResultCompactionStrategy,
    TruncationStrategy,
    analyze,
    apply_compaction,
    compact,
    load_transcript,
    tokens_exceed,
)
from compactlens.analysis import Fact, conversation_facts, extract_facts, fact_survival
from compactlens.analysis.facts import latest_user_request, minor_kind
from compactlens.formats import from_caller
from compactlens.model import text_message
from compactlens.summarizers import FakeSummarizer


def facts_of(text: str, role: str = "user") -> list[tuple[str, str]]:
    return [(f.kind, f.value) for f in extract_facts([text_message(role, text)])]


@pytest.mark.parametrize(
    ("text", "kind", "value"),
    [
        ("Your order ORD-48213 has shipped.", "identifier", "ORD-48213"),
        ("The order number is 482913.", "identifier", "482913"),
        ("Fixed in commit 3f2a9c1b yesterday.", "identifier", "3f2a9c1b"),
        ("See issue #4593 for details.", "identifier", "#4593"),
        ("Your user id is sophia_martin_4574.", "identifier", "sophia_martin_4574"),
        (
            "Request 123e4567-e89b-12d3-a456-426614174000 failed.",
            "identifier",
            "123e4567-e89b-12d3-a456-426614174000",
        ),
        ("Open /home/ana/orders/receipt.pdf now.", "path", "/home/ana/orders/receipt.pdf"),
        ("Edit src/app/main.py and rerun.", "path", "src/app/main.py"),
        ("Then update setup.py accordingly.", "path", "setup.py"),
        ("It lives in ~/projects/demo today.", "path", "~/projects/demo"),
        (r"Saved to C:\Users\ana\report.docx okay.", "path", r"C:\Users\ana\report.docx"),
        (
            "Docs at https://docs.example.com/v2/guide?x=1.",
            "url",
            "https://docs.example.com/v2/guide?x=1",
        ),
        ("Write to ana.lopez@example.org today.", "email", "ana.lopez@example.org"),
        ("The disk has 12 GB free.", "quantity", "12 GB"),
        ("The job took 30s to finish.", "quantity", "30s"),
        ("Coverage went to 87.5% overall.", "quantity", "87.5%"),
        ("It weighs 2.5 kg in total.", "quantity", "2.5 kg"),
        ("The refund is $1,299.99 in total.", "money", "$1,299.99"),
        ("The fee is 45 EUR per night.", "money", "45 EUR"),
        ("We paid USD 12.50 for it.", "money", "USD 12.50"),
        ("Deliver on 2024-05-15 please.", "date", "2024-05-15"),
        ("Started at 2024-05-15T15:00:00Z sharp.", "date", "2024-05-15T15:00:00Z"),
        ("The meeting is on May 15, 2024 in Lisbon.", "date", "May 15, 2024"),
        ("Born on 15 March 1990 in Porto.", "date", "15 March 1990"),
        ("Due 05/15/2024 at the latest.", "date", "05/15/2024"),
        ("Call me at 14:30 tomorrow.", "date", "14:30"),
        ('Rename the service to "FooBar Payments" please.', "quoted", "FooBar Payments"),
        ("Run `make test-all` before pushing.", "quoted", "make test-all"),
    ],
)
def test_each_fact_kind_is_extracted(text: str, kind: str, value: str) -> None:
    assert (kind, value) in facts_of(text)


@pytest.mark.parametrize(
    "text",
    [
        "I think we should use the new approach because it is simpler and faster.",
        "There are 3 files and 2 folders; version 3 of 5 was released in 2024.",
        "We processed 10000 rows and 250 records.",
        "Encode it as utf-8 or base64, hash with sha256, run python3 on x86_64 or arm64.",
        "Read and/or write the input/output; Node.js and Vue.js are fine.",
        "She said 'yes' and then \"ok\" and `none`.",
        "Tokens like gpt-4o and utf-16 and h264 are technical words, not ids.",
    ],
)
def test_common_words_and_bare_numbers_are_not_facts(text: str) -> None:
    assert facts_of(text) == []


def test_quoted_strings_in_tool_payloads_are_not_facts() -> None:
    msgs = from_caller(
        [
            assistant(None, [call("c1", "get_user", {"name": "Sophia Martin"})]),
            result("c1", '{"first_name": "Sophia", "city": "Fort Worth", "zip": "76143"}'),
        ]
    ).messages
    kinds = {(f.kind, f.value) for f in extract_facts(msgs)}
    assert ("tool_name", "get_user") in kinds
    assert ("identifier", "76143") in kinds
    assert not any(kind == "quoted" for kind, _ in kinds)


def test_terminal_escape_sequences_do_not_become_facts() -> None:
    out = "\x1b[?2004h\x1b[?2004lroot@box:/# ls\x1b[0m"
    msgs = from_caller([assistant(None, [call("c1", "bash")]), result("c1", out)]).messages
    values = [f.value for f in extract_facts(msgs)]
    assert not any("2004" in v for v in values)


def test_a_fact_seen_twice_is_reported_once_for_its_first_message() -> None:
    msgs = from_caller(small_transcript()).messages
    facts = [f for f in extract_facts(msgs) if f.value == "ORD-48213"]
    assert len(facts) == 1
    assert facts[0].message_index == 1
    assert facts[0].role == "user"


def test_latest_request_is_a_fact_only_when_its_message_is_affected() -> None:
    msgs = from_caller(small_transcript()).messages
    latest = latest_user_request(msgs)
    assert latest == 7
    kept = extract_facts(msgs, [1, 2], latest_request=latest)
    assert not any(f.kind == "latest_request" for f in kept)
    removed = extract_facts(msgs, [7], latest_request=latest)
    assert ("latest_request", msgs[7].text) in [(f.kind, f.value) for f in removed]


def test_latest_request_skips_summaries_and_tool_results() -> None:
    msgs = from_caller(
        [
            user("Book the 9:30 pm train."),
            {"role": "user", "content": "Previous conversation summary:\nearlier stuff"},
            assistant(None, [call("c1", "book")]),
            result("c1", "booked"),
        ]
    ).messages
    assert latest_user_request(msgs) == 0


def test_recall_is_one_when_nothing_was_removed() -> None:
    wire = small_transcript()
    res = apply_compaction(wire, TruncationStrategy(trigger=tokens_exceed(100_000)))
    assert res.status == "unchanged"
    report = analyze(wire, res)
    # The denominator is the conversation's facts, all of them still there.
    counted = [
        f for f in conversation_facts(load_transcript(wire).messages) if minor_kind(f) is None
    ]
    assert report.facts.extracted == len(counted) > 0
    assert report.facts.survived == report.facts.extracted
    assert report.facts.recall == 1.0
    assert report.facts.lost == ()
    assert report.facts.affected_messages == ()


def test_recall_drops_when_the_message_with_a_unique_id_is_truncated() -> None:
    wire = small_transcript()
    wire[2] = assistant("Sorry about that, I will look into it.")  # ORD-48213 only in 1 and 4
    wire[4] = assistant(None, [call("c1", "lookup_order", {"order_id": "latest"})])
    strategy = TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2)
    res = apply_compaction(wire, strategy)
    assert res.status == "compacted"
    report = analyze(wire, res, triggers=strategy)
    lost = {f.value: f for f in report.facts.lost}
    assert "ORD-48213" in lost
    assert lost["ORD-48213"].message_index == 1
    assert lost["ORD-48213"].kind == "identifier"
    assert report.facts.recall < 1.0
    assert report.facts.recall == report.facts.survived / report.facts.extracted


def test_a_fact_repeated_in_a_kept_message_survives() -> None:
    wire = small_transcript()
    wire[7] = user("Send a replacement for ORD-48213 to Lisbon, please.")
    strategy = TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2)
    res = apply_compaction(wire, strategy)
    assert 1 not in {i for d in res.decisions if d.action == "kept" for i in d.message_indices}
    report = analyze(wire, res)
    assert "ORD-48213" not in {f.value for f in report.facts.lost}
    assert "ORD-48213" in {c.fact.value for c in report.facts.checks if c.survived}


def test_collapsing_tool_results_keeps_outputs_only_with_the_results_formatter() -> None:
    wire = [
        system(),
        user("Where is my parcel?"),
        assistant(None, [call("c1", "track", {"carrier": "UPS"})]),
        result("c1", "Parcel 1Z999AA10123456784 is in Porto since 2024-03-04."),
        assistant("It is in Porto."),
        user("And the other one?"),
        assistant(None, [call("c2", "track", {"carrier": "DHL"})]),
        result("c2", "Parcel JD014600003828 is out for delivery."),
        assistant("It is out for delivery."),
    ]
    by_formatter = {}
    for formatter in ("results", "names"):
        strategy = ToolResultCompactionStrategy(formatter=formatter)
        res = apply_compaction(wire, strategy)
        assert res.status == "compacted"
        by_formatter[formatter] = analyze(wire, res).facts
    kept = {c.fact.value for c in by_formatter["results"].checks if c.survived}
    assert {"1Z999AA10123456784", "JD014600003828"} <= kept
    # The date a tool printed and the tool's name are minor: checked, counted apart.
    minor_kept = {c.fact.value for c in by_formatter["results"].minor if c.survived}
    assert {"2024-03-04", "track"} <= minor_kept
    lost = {f.value for f in by_formatter["names"].lost}
    assert "1Z999AA10123456784" in lost
    assert "2024-03-04" in {f.value for f in by_formatter["names"].minor_lost}
    assert by_formatter["names"].recall < by_formatter["results"].recall == 1.0


def test_summary_text_decides_which_facts_survive_a_summarization() -> None:
    wire = small_transcript()
    summary = "The user reported order ORD-48213 as lost (tracking 1Z999AA10123456784)."
    strategy = SummarizationStrategy(
        FakeSummarizer(summary), trigger=tokens_exceed(60), minimum_preserved=1
    )
    res = apply_compaction(wire, strategy)
    assert res.status in ("compacted", "cannot-fit")
    report = analyze(wire, res)
    survived = {c.fact.value for c in report.facts.checks if c.survived}
    lost = {f.value for f in report.facts.lost}
    assert {"ORD-48213", "1Z999AA10123456784"} <= survived
    assert {"$129.99", "ana.lopez@example.org", "2024-03-02"} <= lost


def test_compact_reinserts_the_latest_request_so_it_survives() -> None:
    wire = small_transcript()
    wire.append(assistant("Which address exactly?"))
    wire.append(user("Ship ORD-48213 again to my office, ref JOB-7741."))
    wire.append(assistant(None, [call("c9", "create_shipment", {"order": "ORD-48213"})]))
    wire.append(result("c9", "shipment SHP-99120 created"))
    res = compact(
        wire,
        summarizer=FakeSummarizer("Lost parcel case."),
        target_tokens=400,
        keep_last_messages=1,
    )
    assert res.status == "compacted"
    assert res.reinserted_index == 9
    report = analyze(wire, res)
    assert 9 not in report.facts.affected_messages
    assert not report.facts.latest_request_lost
    assert "$129.99" in {f.value for f in report.facts.lost}


def test_fact_survival_checks_whitespace_normalized_text() -> None:
    original = [text_message("user", "Deliver to   /srv/app/data.csv  by May 15,\n2024.")]
    compacted = [text_message("assistant", "Deliver to /srv/app/data.csv by May 15, 2024.")]
    report = fact_survival(original, compacted, [0])
    kinds = {c.fact.kind: c.survived for c in report.checks}
    assert kinds["path"] and kinds["date"]
    assert report.recall == 1.0


def test_the_absence_prefilter_agrees_with_a_plain_search() -> None:
    from compactlens.analysis import Fact
    from compactlens.analysis.facts import check_facts, searchable_text
    from compactlens.model import text_message

    kept = [
        text_message("user", "order ORD-778812 ships to /srv/app/config.yaml on 2024-03-05"),
        text_message("assistant", "refund RF-00042 issued; see https://example.com/r/42"),
    ]
    values = [
        "ORD-778812",
        "/srv/app/config.yaml",
        "2024-03-05",
        "RF-00042",
        "https://example.com/r/42",
        "ORD-778813",
        "/srv/app/config.yml",
        "RF-0004",
        "ships to /srv",
        "x",
    ] + [f"ID-{n:08d}" for n in range(100)]
    facts = [Fact("identifier", v, 0, "user", "text") for v in values]
    haystack = searchable_text(kept)
    checks = check_facts(facts, kept)
    assert [c.survived for c in checks] == [v in haystack for v in values]
    # The five kept values, the phrase, 'RF-0004' (inside RF-00042) and 'x' (in 'example').
    assert sum(c.survived for c in checks) == 8


def test_a_fact_cache_gives_the_same_report_and_extracts_each_message_once() -> None:
    wire = small_transcript()
    cache: dict[int, list[Fact]] = {}
    deep = TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=2)
    shallow = TruncationStrategy(trigger=tokens_exceed(60), minimum_preserved=4)
    first = apply_compaction(wire, deep)
    second = apply_compaction(wire, shallow)
    cached_first = analyze(wire, first, triggers=deep, fact_cache=cache)
    assert cached_first.to_dict() == analyze(wire, first, triggers=deep).to_dict()
    # Every message of the conversation was extracted: the facts are the whole history's.
    assert set(cache) == set(range(len(wire)))
    cached_second = analyze(wire, second, triggers=shallow, fact_cache=cache)
    assert cached_second.to_dict() == analyze(wire, second, triggers=shallow).to_dict()
    # The second analysis extracted nothing again: the same fact objects (the latest
    # request is read from its message each time), the same count.
    firsts = {id(c.fact) for c in cached_first.facts.checks}
    seconds = [c.fact for c in cached_second.facts.checks if c.fact.kind != "latest_request"]
    assert seconds and all(id(f) in firsts for f in seconds)
    assert cached_second.facts.extracted == cached_first.facts.extracted
    assert cached_second.facts.affected_messages != cached_first.facts.affected_messages


#: The identifier word pattern before the digit lookahead: every word, checked after.
_PLAIN_WORD = re.compile(r"(?<![\w.-])[A-Za-z0-9](?:[\w-]*[A-Za-z0-9])?(?![\w-]|\.\d)")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab1²٣٤-_. /:Z9#é…\n", max_size=60))
def test_the_identifier_lookahead_finds_exactly_the_words_the_check_accepts(text: str) -> None:
    from compactlens.analysis.fact_patterns import _TOKEN, _is_identifier

    def accepted(pattern: re.Pattern[str]) -> list[tuple[int, int]]:
        return [m.span() for m in pattern.finditer(text) if _is_identifier(m.group(0))]

    assert accepted(_TOKEN) == accepted(_PLAIN_WORD)


#: Pieces of text that open every gate and pattern of the extractor (and near misses).
_PIECES = (
    " ",
    "\n",
    "a",
    "Z",
    "é",
    "٣",
    "²",
    "-",
    "_",
    ".",
    ",",
    "/",
    "\\",
    ":",
    "~",
    "@",
    "#",
    "%",
    "$",
    "€",
    "'",
    '"',
    "`",
    "0",
    "1",
    "7",
    "12",
    "31",
    "2024",
    "2024-05-15",
    "05/15/24",
    "15:00",
    " pm",
    "T10:30:00Z",
    "May",
    "Sept.",
    "June",
    "3rd",
    "USD",
    "EUR",
    "dollars",
    "cents",
    "bucks",
    "ms",
    "MiB",
    "GB",
    " km",
    "°C",
    "µs",
    "x",
    "k",
    "://",
    "https",
    "ftp",
    "C:\\",
    "~/",
    "./",
    "../",
    "src",
    ".py",
    ".md",
    ".tar",
    ".gz",
    "node.js",
    "deadbeef",
    "ABCDEF0",
    "1a2b3c4d",
    "-4f2a-",
    "ORD-",
    "v2",
    "#12",
    "&#",
    "x86_64",
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_the_extractor_gates_never_hide_a_fact(text: str) -> None:
    from compactlens.analysis.fact_rules import _RULES, _structured

    # Every pattern over the text (no gate) finds the same facts as the gated run.
    assert _structured(text) == _structured(text, _RULES)


_NEEDLES = st.one_of(
    st.text(alphabet="ab-1/. xAé\ud800\U0001f600", max_size=12),
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=4).map("".join),
)


@settings(max_examples=300, deadline=None)
@given(
    text=st.one_of(
        st.text(alphabet="ab-1/. xAé\ud800\U0001f600", max_size=300),
        st.lists(st.sampled_from(_PIECES), max_size=60).map("".join),
    ),
    values=st.lists(_NEEDLES, max_size=25),
    window=st.integers(min_value=1, max_value=64),
)
def test_one_pass_finds_exactly_the_values_a_plain_search_finds(
    text: str, values: list[str], window: int
) -> None:
    from compactlens.analysis.facts import present_values

    # Overlapping values, values inside others, case, non-ASCII, lone surrogates, the
    # empty string, and windows smaller than a value: the same answer as ``in``.
    found = present_values(values, text, window=window)
    assert {v for v in values if v in found} == {v for v in values if v in text}
    assert found <= set(values)
