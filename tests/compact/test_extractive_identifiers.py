"""The extractive summary's "Identifiers:" list names what a reader would look for (paths,
ticket ids, numbers with units), never machine noise (addresses, hex blobs, dates, a test
runner's percentages, placeholders), and its statements skip collapsed tool results that
quote no output."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compactlens import ExtractiveSummarizer, Message
from compactlens.model import TextPart
from compactlens.model.noise import noise_kind

DISASSEMBLY = "\n".join(
    [
        ".text:0040061d   55           PUSH RBP",
        ".text:0040061e   4889e5       MOV RBP,RSP",
        ".text:00400621   4883c480     ADD RSP,-0x80",
        ".text:0040063e   be4c074000   MOV ESI,DAT_0040074c",
    ]
)
PROGRESS = "tests/test_money.py ....  [  3%]\ntests/test_vat.py ...  [  6%]\n... [ 64%]"


def _said(role: str, text: str) -> Message:
    return Message(role=role, parts=(TextPart(text),))


def _identifiers(summary: str) -> list[str]:
    lines = summary.splitlines()
    if "Identifiers:" not in lines:
        return []
    start = lines.index("Identifiers:") + 1
    out: list[str] = []
    for line in lines[start:]:
        if not line.startswith("- "):
            break
        out.append(line[2:])
    return out


def _summary(messages: list[Message]) -> str:
    return ExtractiveSummarizer().compose(tuple(messages), 20_000)


def test_identifiers_skip_noise_and_keep_real_ones() -> None:
    messages = [
        _said("user", "Fix INC-4821: the export in src/app/export.py fails since 2026-02-12."),
        _said("user", DISASSEMBLY),
        _said("user", PROGRESS),
        _said("user", "Copy ../path/to/your.db and set your_api_key, then retry after 1500 ms."),
        _said("assistant", "I will fix src/app/export.py because INC-4821 is still open."),
    ]
    shown = _identifiers(_summary(messages))
    assert "src/app/export.py" in shown and "INC-4821" in shown
    assert "1500 ms" in shown
    assert [v for v in shown if noise_kind(v) is not None] == []
    for noise in ("0040061d", "4883c480", "2026-02-12", "3%", "64%", "../path/to/your.db"):
        assert noise not in shown, noise


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0x400000, 0x40FFFF), min_size=1, max_size=20))
def test_addresses_never_reach_the_identifiers(addresses: list[int]) -> None:
    dump = "\n".join(f".text:{a:08x}   4889c7   MOV RDI,RAX" for a in addresses)
    shown = _identifiers(_summary([_said("user", "Read main in warmup.c"), _said("user", dump)]))
    assert "warmup.c" in shown
    assert all(noise_kind(v) is None for v in shown)


def test_collapsed_results_that_quote_nothing_are_not_statements() -> None:
    messages = [
        _said("user", "Build the CLI."),
        *[_said("assistant", "[Tool results: execute_bash:]") for _ in range(5)],
        _said("assistant", "[Tool results: execute_bash: options.c options.h]"),
        _said("assistant", "Done: the options parser is in src/libponyc/options."),
    ]
    summary = _summary(messages)
    assert "[Tool results: execute_bash:]" not in summary
    assert "[Tool results: execute_bash: options.c options.h]" in summary


def test_a_long_collapsed_result_with_many_colons_is_quoted() -> None:
    # (The empty-results check once backtracked without end on a line like this one.)
    line = "[Tool results: execute_bash: ls: cannot access: " + "a: b: c; " * 400 + "]"
    summary = ExtractiveSummarizer().compose(
        (_said("user", "List it."), _said("assistant", line)), 4_000
    )
    assert "[Tool results: execute_bash: ls: cannot access:" in summary
