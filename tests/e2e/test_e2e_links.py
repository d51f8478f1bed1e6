"""Query-parameter deep links: a link reproduces a view in a new session."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from e2e_support import SAMPLES, StreamlitApp, number

from compactlens import MessageIndex, TiktokenTokenizer, load_transcript

pytestmark = pytest.mark.e2e

SUPPORT = SAMPLES / "support_long.json"


def configuration_line(app: StreamlitApp) -> str:
    line = (
        app.main().locator('[data-testid="stMarkdownContainer"]').filter(has_text="Configuration:")
    )
    return str(line.first.inner_text()).strip()


def test_link_opens_sample_counter_and_preset_then_round_trips(
    app: StreamlitApp, app_factory: Callable[[], StreamlitApp]
) -> None:
    exact = MessageIndex.build(load_transcript(SUPPORT).messages, TiktokenTokenizer("o200k_base"))
    app.open("lab?sample=support_long&tok=o200k_base&preset=truncation&budget=30000")
    assert SUPPORT.name in app.selected("sidebar_source")
    assert "o200k_base" in app.selected("sidebar_tokenizer")
    assert "more than 30,000 tokens" in configuration_line(app)
    assert number(app.metric("Tokens before")) == exact.total_tokens
    assert "compacted" in app.status_text()
    assert number(app.metric("Tokens after")) <= 30000

    # Change a parameter: the URL follows, and opening it elsewhere gives the same view.
    app.set_number("sb_stage0_trigger_n_tokens", 25000)
    after = number(app.metric("Tokens after"))
    assert after <= 25000
    line = configuration_line(app)
    assert "more than 25,000 tokens" in line
    app.page.wait_for_url("**cfg=**")
    url = app.page.url
    assert "sample=support_long" in url and "tok=o200k_base" in url

    other = app_factory()
    other.page.goto(url)
    other.page.locator('[data-testid="stSidebarNav"]').wait_for()
    other.wait_idle()
    other.main().get_by_role("heading", name="Strategy lab", exact=True).wait_for()
    assert configuration_line(other) == line
    assert number(other.metric("Tokens after")) == after
    assert number(other.metric("Tokens before")) == exact.total_tokens


def test_broken_links_say_what_is_wrong(app: StreamlitApp) -> None:
    app.open("lab?sample=no_such_sample")
    warning = app.main().locator('[data-testid="stAlert"]').filter(has_text="no_such_sample")
    assert "does not exist" in warning.first.inner_text()

    app.open("lab?cfg=this-is-not-a-configuration")
    warning = app.main().locator('[data-testid="stAlert"]').filter(has_text="configuration")
    assert "cannot be read" in warning.first.inner_text()
    # The page still works with the default configuration.
    assert app.status_text()
