"""Transcript page: groups with badges and token counts, filters, search, pagination,
verbatim text by default, neutralized Markdown on request, and the charts."""

from __future__ import annotations

import re

from apptest_helpers import XSS_TEXT, go, metric_int, no_exceptions, plain, texts

from compactlens import CharEstimator, MessageIndex
from compactlens.formats import from_caller


def _shown_groups(at) -> int:
    match = re.search(r"([\d,]+) of ([\d,]+) groups match", texts(at))
    assert match, texts(at)[:500]
    return int(match.group(1).replace(",", ""))


def test_groups_and_filters(app, sample_doc) -> None:
    at = go(app().run(), "transcript")
    no_exceptions(at)
    messages = sample_doc("coding_agent")["messages"]
    ix = MessageIndex.build(from_caller(messages).messages, CharEstimator())
    assert metric_int(at, "Groups") == ix.total_groups
    assert _shown_groups(at) == ix.total_groups
    # Kind filter: only the tool-call groups (a call and its result are one group).
    at.multiselect(key="tx_kinds").set_value(["tool_call"]).run()
    tool_groups = sum(1 for g in ix.groups if g.kind.value == "tool_call")
    assert _shown_groups(at) == tool_groups
    # Tool filter and text search narrow further.
    at.multiselect(key="tx_tools").set_value(["run_tests"]).run()
    assert _shown_groups(at) == sum(1 for g in ix.groups if "run_tests" in g.tool_names)
    at.text_input(key="tx_search").set_value("TESTS/T_3").run()  # case-insensitive
    assert _shown_groups(at) == 1


def test_search_with_no_match_says_so(app) -> None:
    at = go(app().run(), "transcript")
    at.text_input(key="tx_search").set_value("no such words anywhere").run()
    no_exceptions(at)
    assert "No group matches these filters." in texts(at)


def test_pagination_pages_through_groups(app) -> None:
    at = go(app().run(), "transcript")
    at.segmented_control(key="tx_page_size").set_value(25).run()
    first = texts(at)
    assert "showing 1–25" in first
    at.pagination(key="tx_page").set_value(2).run()
    no_exceptions(at)
    assert "page 2 of 2" in texts(at)


def test_text_is_verbatim_and_markdown_is_neutralized(app) -> None:
    at = app(sample="hostile").run()
    at = go(at, "transcript")
    no_exceptions(at)
    # Literal by default: prose in which every Markdown/HTML character is escaped, so
    # what shows (the escapes removed) is the exact text, tags and all.
    literal = [m.value for m in at.markdown if "pwned" in m.value]
    assert literal, "the hostile text is not shown"
    assert any(XSS_TEXT in plain(v) for v in literal)
    assert not any(re.search(r"(?<!\\)[<\[\]]", v) for v in literal)
    assert not any(XSS_TEXT in m.value for m in at.markdown)
    at.toggle(key="tx_markdown").set_value(True).run()
    no_exceptions(at)
    rendered = "\n".join(m.value for m in at.markdown)
    assert "pwned" in rendered
    # Every "<" is backslash-escaped (shown as text), no script link, no image to load.
    assert not re.search(r"(?<!\\)<", rendered)
    assert "javascript:" not in rendered and "(javascript" not in rendered
    assert "](http://127.0.0.1:9/t.png)" not in rendered and "[image: tracker]" in rendered
    assert all(not getattr(m.proto, "allow_html", False) for m in at.markdown)


def test_lab_decisions_overlay(app) -> None:
    at = go(app().run(), "transcript")
    at.toggle(key="tx_decisions").set_value(True).run()
    no_exceptions(at)
    body = texts(at)
    assert ":orange-badge[collapsed]" in body or ":gray-badge[kept]" in body


def test_charts_view(app) -> None:
    at = go(app().run(), "transcript")
    at.segmented_control(key="tx_view").set_value("Charts").run()
    no_exceptions(at)
    charts = [c for c in at.get("plotly_chart")]
    assert len(charts) == 4
