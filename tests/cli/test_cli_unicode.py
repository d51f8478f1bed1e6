"""Arbitrary Unicode, lone surrogates included, through every entry point: ``inspect``,
``compact`` (to a file and to stdout), ``convert``, ``report``, ``load_transcript``,
``MessageIndex.build`` with both tokenizers, the one-shot ``compact()``, ``analyze()``, and
a session that checkpoints to a JSON file and to SQLite.

A lone surrogate is what a log holds when a tool output was cut inside an emoji
(``"\\ud83d"`` without its pair); it is valid JSON text and must never crash a reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compactlens import MessageIndex, TiktokenTokenizer, analyze, compact, load_transcript
from compactlens.cli import main
from compactlens.engine.strategies.sliding_window import SlidingWindowStrategy
from compactlens.formats import from_caller
from compactlens.session import CompactionSession, JsonFileCheckpointStore, SQLiteCheckpointStore
from compactlens.summarizers.extractive import ExtractiveSummarizer

#: Every code point, with lone surrogates (category Cs) drawn often enough to matter.
ANY_CHAR = st.one_of(st.characters(categories=("Cs",)), st.characters(exclude_categories=()))
# (st.text() drops surrogates from any alphabet, so the text is joined by hand.)
TEXTS = st.lists(ANY_CHAR, min_size=1, max_size=40).map("".join)
SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def as_json_reads(texts: list[str]) -> list[str]:
    """The texts as a JSON reader sees them (an escaped high+low pair is one character)."""
    value: list[str] = json.loads(json.dumps(texts))
    return value


def chat(texts: list[str]) -> list[dict[str, Any]]:
    roles = ("user", "assistant")
    return [{"role": roles[i % 2], "content": t} for i, t in enumerate(texts)]


def write_json(path: Path, value: Any) -> None:
    # ensure_ascii keeps lone surrogates as \\udXXX escapes, as a JSON logger writes them
    path.write_text(json.dumps(value), encoding="ascii")


def run(capsys: pytest.CaptureFixture[str], *argv: object) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_a_lone_surrogate_is_counted_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.json"
    path.write_text('[{"role":"user","content":"\\ud800 bad"}]', encoding="ascii")
    code, out, err = run(capsys, "inspect", path, "--json")
    assert code == 0, err
    # "user" + newline + 3 bytes for the surrogate (as surrogatepass writes it) + " bad"
    assert json.loads(out)["groups"][0]["bytes"] == len("user") + 1 + 3 + len(" bad")


@SETTINGS
@given(texts=st.lists(TEXTS, min_size=1, max_size=6))
def test_every_cli_command_reads_any_text(
    texts: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "in.json"
    write_json(src, chat(texts))
    texts = as_json_reads(texts)
    for tokenizer in ("estimate", "o200k_base"):
        code, out, err = run(capsys, "inspect", src, "--json", "--tokenizer", tokenizer)
        assert code == 0, err
        assert json.loads(out)["totals"]["messages"] == len(texts)
    dest = tmp_path / "out.json"
    code, _, err = run(
        capsys, "compact", src, "--strategy", "sliding_window", "--param", "keep_last_turns=1",
        "-o", dest,
    )  # fmt: skip
    assert code in (0, 1), err
    kept = [m["content"] for m in json.loads(dest.read_text(encoding="utf-8"))]
    # Every kept message intact and in order: the newest turn, and the latest user request
    # with text where the newest turn has none (a whitespace-only user message).
    assert kept and kept[-1] == texts[-1]
    rest = iter(texts)
    assert all(any(k == t for t in rest) for k in kept), (kept, texts)
    code, out, err = run(capsys, "convert", src, "--to", "anthropic")
    assert code == 0, err
    converted = json.loads(out)
    assert [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
            for m in converted] == texts  # fmt: skip


@SETTINGS
@given(texts=st.lists(TEXTS, min_size=1, max_size=6))
def test_index_and_loader_read_any_text(texts: list[str]) -> None:
    transcript = load_transcript(json.dumps(chat(texts)))
    texts = as_json_reads(texts)
    assert [m.parts[0].text for m in transcript.messages] == texts  # type: ignore[union-attr]
    for tokenizer in (None, TiktokenTokenizer("o200k_base")):
        index = MessageIndex.build(transcript.messages, tokenizer)
        assert index.total_messages == len(texts)
        assert all(g.bytes > 0 for g in index.groups)
    result = compact(
        list(transcript.messages), summarizer=ExtractiveSummarizer(), target_tokens=5,
        keep_last_messages=1,
    )  # fmt: skip
    assert result.status in ("compacted", "cannot-fit")
    assert analyze(list(transcript.messages), result).messages_before == len(texts)


@SETTINGS
@given(texts=st.lists(TEXTS, min_size=3, max_size=6))
def test_sessions_checkpoint_any_text(texts: list[str], tmp_path: Path) -> None:
    # A history read from JSON (a high+low pair of escapes is one character there); plain
    # questions open the turns (a blank one would not), the answers hold any text.
    history: list[dict[str, Any]] = []
    for i, text in enumerate(as_json_reads(texts)):
        history += [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": text}]
    for store in (
        JsonFileCheckpointStore(tmp_path / "cps"),
        SQLiteCheckpointStore(tmp_path / "cps.sqlite"),
    ):
        session = CompactionSession(
            triggers=[lambda ctx: True],
            target_tokens=10_000,
            strategy=SlidingWindowStrategy(keep_last_turns=1),
            store=store,
            key="k",
        )
        first = session.prepare(history)
        assert len(first) < len(history)
        checkpoint = session.checkpoint()
        assert checkpoint is not None
        assert list(checkpoint.replacement) == first  # read back exactly, surrogates included
        again = CompactionSession(
            triggers=[],
            target_tokens=10_000,
            strategy=SlidingWindowStrategy(keep_last_turns=1),
            store=store,
            key="k",
        )
        assert again.prepare(history) == first


def test_report_reads_any_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    write_json(corpus / "a.json", chat(["\ud83d cut emoji", "ok \udc00", "\U0001f600 whole"]))
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"strategy": {"type": "sliding_window", "keep_last_turns": 1}}))
    code, _, err = run(capsys, "report", corpus, "--config", config, "--jobs", "1", "--quiet")
    assert code == 0, err
    summary = json.loads(err.strip().splitlines()[-1].removeprefix("compactlens report: "))
    assert summary["failed"] == 0, err
    assert from_caller(chat(["x"])).messages  # the helper itself reads back
