"""Exact counting of pathological strings: a long string without whitespace (base64) costs
about what ordinary text of the same size costs, and counts the same as tiktoken does on
the whole string.

Long texts are encoded in pieces cut only where the split pattern ends a piece anyway
(:func:`compactlens.model.tokens.exact_chunks`); the property tests check that the pieces'
counts add up to the whole's for any text, with tiny pieces so that every rule is hit.
"""

from __future__ import annotations

import base64
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens.model.tokens import LONG_TEXT_CHARS, TiktokenTokenizer, exact_chunks

ENCODINGS = ("o200k_base", "cl100k_base")
#: Characters around every cut rule and every branch of both split patterns.
TRICKY = "aZéß0123456789+/= \n\r\t'sSlLvVdDmM.,!?-_²٣ⅧΩ漢字🙂\u0301"
TEXT = st.text(alphabet=st.sampled_from(TRICKY), max_size=300)


@pytest.fixture(scope="module", params=ENCODINGS)
def tokenizer(request: pytest.FixtureRequest) -> TiktokenTokenizer:
    return TiktokenTokenizer(request.param)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, size=st.integers(min_value=1, max_value=40))
def test_exact_chunks_add_up_to_the_whole(
    tokenizer: TiktokenTokenizer, text: str, size: int
) -> None:
    chunks = list(exact_chunks(text, size))
    assert "".join(chunks) == text
    encode = tokenizer._encoding.encode_ordinary
    assert sum(len(encode(c)) for c in chunks) == len(encode(text))


@pytest.mark.slow
def test_a_long_text_counts_as_tiktoken_counts_it_whole(tokenizer: TiktokenTokenizer) -> None:
    rnd = random.Random(3)
    b64 = base64.b64encode(rnd.randbytes(LONG_TEXT_CHARS * 3)).decode()
    prose = " ".join(
        rnd.choice(["call", "tool", "x1", "ok\n", "/tmp/a", "it's"]) for _ in range(300_000)
    )
    for text in (b64, prose, "a" * (LONG_TEXT_CHARS + 5)):
        assert len(text) > LONG_TEXT_CHARS
        whole = len(tokenizer._encoding.encode_ordinary(text))
        assert tokenizer.count_tokens(text) == whole
        assert tokenizer.count_many(["short", text, ""]) == [
            tokenizer.count_tokens("short"),
            whole,
            0,
        ]
    assert len(list(exact_chunks(b64))) > 1  # it was counted in pieces


def inspect_cost(path: Path) -> tuple[int, float, int]:
    """(tokens, CPU seconds, peak RSS in MB) of ``compactlens inspect --tokenizer o200k_base``."""
    args = [sys.executable, "-m", "compactlens", "inspect", str(path), "--json"]
    proc = subprocess.Popen(
        [*args, "--tokenizer", "o200k_base", "--max-string", "64M"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.returncode == 0
    tokens = json.loads(out)["totals"]["tokens"]
    return tokens, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


@pytest.mark.slow
def test_a_base64_string_costs_about_what_ordinary_text_costs(tmp_path: Path) -> None:
    """12 MB of base64 against 12 MB of prose: the same peak memory (before the pieces it
    held every token id at once: 1.6x the prose's peak) and the same CPU time per token
    (base64 has about 3 times as many tokens per character, so it takes about 3 times as
    long per character; both are linear)."""
    size = 12 * 1024 * 1024
    rnd = random.Random(7)
    b64 = base64.b64encode(rnd.randbytes(size * 3 // 4)).decode()[:size]
    words = ["the", "agent", "called", "lookup", "with", "order", "42", "and", "got", "a"]
    prose = " ".join(rnd.choice(words) for _ in range(size // 4))[:size]
    paths = {}
    for name, text in (("base64", b64), ("prose", prose)):
        paths[name] = tmp_path / f"{name}.json"
        paths[name].write_text(json.dumps([{"role": "user", "content": text}]), encoding="ascii")
    del b64, prose
    b64_tokens, b64_cpu, b64_rss = inspect_cost(paths["base64"])
    prose_tokens, prose_cpu, prose_rss = inspect_cost(paths["prose"])
    assert b64_tokens > 2 * prose_tokens  # the pathological case: many short pieces
    assert b64_rss <= 1.25 * prose_rss, (b64_rss, prose_rss)
    assert b64_cpu / b64_tokens <= 1.5 * prose_cpu / prose_tokens, (b64_cpu, prose_cpu)
