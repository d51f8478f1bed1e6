"""The fast fact extractor finds exactly the facts of the reference extractor.

``reference_facts`` is a frozen copy of the extractor before the speed work: every
pattern over every text, no gates, lazy look-aheads. The production extractor gates
rules, rewrites patterns to start with a character class, and skips work per match;
these properties hold it to the same facts (values, kinds, sources, order) on generated
texts that open every rule, on messages of every part kind, and on the sample and shared
corpus transcripts.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import reference_facts as reference
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.analysis.corpus import load_messages
from compactlens.analysis.fact_patterns import _PATHS, _TOKEN, _is_hex_id, _is_path
from compactlens.analysis.fact_rules import (
    _ascii_classes_of,
    _identifier_words,
    _quoted,
    _relative_paths,
    _structured,
)
from compactlens.analysis.facts import Fact, extract_facts, message_facts
from compactlens.model import Message
from compactlens.model.messages import (
    ApprovalRequestPart,
    ApprovalResponsePart,
    MediaPart,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)

REPO = Path(__file__).resolve().parents[2]
SHARED_CORPUS = REPO.parent / "shared" / "corpus"

_digits = st.integers(min_value=0, max_value=99_999).map(str)
_hexes = st.text(alphabet="0123456789abcdefABCDEF", min_size=5, max_size=12)
_words = st.sampled_from(
    ("ana", "ORD", "src", "main", "v2", "node", "x86_64", "sha256", "Sept", "May", "pm", "é")
)


def _joined(*parts: st.SearchStrategy[str], sep: str = "") -> st.SearchStrategy[str]:
    return st.tuples(*parts).map(sep.join)


#: One fact-shaped piece per rule (and near misses: a value may come out as another
#: kind, or as nothing, just as in the reference).
_SHAPES: tuple[st.SearchStrategy[str], ...] = (
    _joined(
        st.sampled_from(("https://", "ftp://", "s3://", "git://")), _words, st.just("/"), _words
    ),
    _joined(_words, st.just("."), _words, st.just("@"), _words, st.sampled_from((".org", ".io"))),
    _joined(_hexes, st.just("-"), _hexes, st.just("-4"), _hexes, st.just("-a"), _hexes),
    _joined(st.just("12345678-1234-5678-9abc-"), st.just("123456789abc")),
    _joined(st.sampled_from(("2024", "1999")), st.just("-0"), _digits, st.just("-1"), _digits),
    _joined(st.just("2024-05-15"), st.sampled_from(("", "T10:30", "T23:59:59Z", " 09:00+02:00"))),
    _joined(_digits, st.just("/"), _digits, st.just("/"), _digits),
    _joined(
        st.sampled_from(("May", "Sept.", "June", "Dec", "March")),
        st.sampled_from((" ", "  ", "\n")),
        _digits,
        st.sampled_from(("", "th", "rd", ", 2024", " 2023")),
    ),
    _joined(
        _digits,
        st.sampled_from((" ", "nd ", "\n")),
        st.sampled_from(("May", "Oct.")),
        st.just(" 2024"),
    ),
    _joined(
        st.integers(0, 29).map(str),
        st.just(":"),
        st.integers(0, 69).map("{:02d}".format),
        st.sampled_from(("", ":00", " pm", "a.m.", " P.M.", ":5", ":61")),
    ),
    _joined(
        st.sampled_from(("$", "€", "£ ", "¥")),
        _digits,
        st.sampled_from(("", ",000", ".99", " k", "bn")),
    ),
    _joined(st.sampled_from(("USD", "EUR ", "NOK")), _digits, st.sampled_from(("", ".5", ",250"))),
    _joined(_digits, st.sampled_from((" USD", "EUR", " dollars", " cents", "bucks", " euro"))),
    _joined(
        _digits,
        st.sampled_from(("", " ", "\n", ".5", ",000")),
        st.sampled_from(("ms", "MiB", "GB", " km", "°C", "µs", "%", "s", "x", "M", "cores", "kHz")),
    ),
    _joined(
        st.sampled_from(("C:\\", "D:\\Users\\", "c:\\a b\\")),
        _words,
        st.sampled_from(("", ".txt", "\\")),
    ),
    _joined(
        st.sampled_from(("/", "~/", "./", "../", "/etc/")),
        _words,
        st.sampled_from(("", "/", ".py", "/x.md")),
    ),
    _joined(_words, st.just("/"), _words, st.sampled_from(("", "/", ".py", "/a/b.c", "@2"))),
    _joined(
        _words, st.sampled_from((".py", ".tar.gz", ".md", ".js", ".JS", ".jſ", ".docx", ".pyc"))
    ),
    _joined(
        st.sampled_from((" ", "(", "")),
        _digits,
        st.sampled_from(tuple("smhdwKMGTBxyz")),
        st.sampled_from(("-", " ", "_", ".", "a", "")),
    ),
    _joined(st.sampled_from(("#", "&#", "##")), _digits),
    _hexes,
    _joined(
        _words,
        st.sampled_from(("-", "_", "")),
        _digits,
        st.sampled_from(("", "-x", "_", "٣٤", "²")),
    ),
    _joined(
        st.sampled_from(('"', "“", "`", "'")),
        _words,
        st.just(" "),
        _words,
        st.sampled_from(('"', "”", "`", "'")),
    ),
    st.text(alphabet="ab1²٣٤-_. /:Z9#é…\n@$%'\"`\\+~", max_size=12),
)

#: Text between pieces: spaces, punctuation that stops or joins a fact, non-ASCII.
_GLUE = st.sampled_from(
    (" ", "  ", "\n", ", ", ". ", "(", ")", "-", "/", ":", ".", "", "é ", "\t", "\x1c")
)
_PUNCTUATION_GLUE = st.sampled_from(("+", "~", "@", "'", "<"))

_TEXTS = st.lists(st.tuples(st.one_of(*_SHAPES), _GLUE | _PUNCTUATION_GLUE), max_size=12).map(
    lambda pairs: "".join(a + b for a, b in pairs)
)


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(_TEXTS)
def test_structured_and_quoted_facts_equal_the_reference(text: str) -> None:
    # The text, and the text without its non-ASCII characters: ASCII texts take the fast
    # paths (byte classes), and few generated texts are all ASCII.
    for variant in (text, text.encode("ascii", "ignore").decode()):
        assert _structured(variant) == reference._structured(variant)
        assert _quoted(variant) == reference._quoted(variant)


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet="ab1/._-~@+\\é²٣ſsSjJ", min_size=1, max_size=14),
    st.sampled_from(("", ".py", ".js", ".JS", "/x.md", "/")),
)
def test_the_path_and_hex_checks_equal_the_reference(stem: str, tail: str) -> None:
    value = stem + tail
    assert _is_path(value) == reference._is_path(value)
    assert _is_hex_id(value) == reference._is_hex_id(value)


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(("a", "Zb", "1", "42", "-", "_", "+", ".", "@", "/", ":", "~", " ", "\n")),
        max_size=24,
    ).map("".join)
)
def test_the_finders_find_what_their_patterns_find(text: str) -> None:
    # Word starts, slashes after a plus or an at sign, dots, colons: the shortcuts find
    # the same matches as trying the pattern at every position.
    def spans(matches: object) -> list[tuple[int, int]]:
        return [m.span() for m in matches]  # type: ignore[attr-defined]

    assert spans(_relative_paths(text, None)) == spans(_PATHS[2].finditer(text))
    classes = _ascii_classes_of(text)
    assert spans(_identifier_words(text, classes)) == spans(_TOKEN.finditer(text))


def _message(texts: list[str], kind: int) -> Message:
    a, b, c = [*texts, "", "", ""][:3]
    parts: tuple[object, ...]
    if kind == 0:
        return Message(role="user", parts=(TextPart(a), TextPart(b)))
    if kind == 1:
        parts = (
            ReasoningPart(a),
            TextPart(b),
            ToolCallPart(id="c1", name="read_file", arguments=c),
        )
        return Message(role="assistant", parts=parts)  # type: ignore[arg-type]
    if kind == 2:
        return Message(
            role="tool",
            parts=(
                ToolResultPart(
                    call_id="c1", output=(a + "\x1b[31m" + b).encode("ascii", "ignore").decode()
                ),
            ),
        )
    parts = (
        ApprovalRequestPart(id="r1", call_id=a, name="deploy_2024"),
        ApprovalResponsePart(id="r1", approved=False, reason=b),
        MediaPart(url="https://x.io/" + c, media_type="image/png"),
    )
    return Message(role="assistant", parts=parts)  # type: ignore[arg-type]


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.lists(_TEXTS, min_size=1, max_size=3), st.integers(0, 3)), max_size=6))
def test_messages_give_the_reference_facts_in_the_same_order(
    specs: list[tuple[list[str], int]],
) -> None:
    messages = [_message(texts, kind) for texts, kind in specs]
    for i, m in enumerate(messages):
        assert message_facts(m, i) == reference.message_facts(m, i)
    latest = len(messages) - 1 if messages else None
    expected = reference.extract_facts(messages, latest_request=latest)
    assert extract_facts(messages, latest_request=latest) == expected
    cache: dict[int, list[Fact]] = {}
    assert extract_facts(messages, latest_request=latest, cache=cache) == expected
    assert extract_facts(messages, latest_request=latest, cache=cache) == expected


def _corpus_files() -> list[Path]:
    files = sorted((REPO / "sample_transcripts").glob("*.json*"))
    if SHARED_CORPUS.is_dir():
        files += sorted(p for p in SHARED_CORPUS.iterdir() if p.suffix in (".json", ".jsonl"))
    return files


@pytest.mark.parametrize("path", _corpus_files(), ids=lambda p: p.name)
def test_corpus_transcripts_give_the_reference_facts(path: Path) -> None:
    try:
        messages, _ = load_messages(path)
    except Exception as exc:  # a file meant to be broken (pairing problems, ...)
        pytest.skip(f"{path.name} does not load: {exc}")
    assert extract_facts(messages) == reference.extract_facts(messages)
