"""The builder's guards and clamp stage: they reach the run, the URL and the fixes."""

from __future__ import annotations

from apptest_helpers import go, no_exceptions

from compactlens_inspector.lab.config import LabConfig, decode_config, default_stage, encode_config


def _config(**guards: object) -> LabConfig:
    return LabConfig(
        stages=({**default_stage("truncation", 1500), "minimum_preserved": 0},),
        guards=dict(guards) or None,
    )


def test_guard_widgets_are_seeded_from_the_configuration_and_edit_it(app) -> None:
    at = go(app(cfg=encode_config(_config(keep_latest_request=False))).run(), "lab")
    no_exceptions(at)
    assert at.checkbox(key="sb_guard_latest").value is False
    assert at.selectbox(key="sb_guard_provider").value == "auto"
    at.selectbox(key="sb_guard_provider").set_value("anthropic").run()
    at.text_input(key="sb_guard_pins").set_value("0, 3, zz").run()
    no_exceptions(at)
    lab: LabConfig = at.session_state["cl_lab"]
    assert lab.guards is not None
    assert lab.guards["provider"] == "anthropic" and lab.guards["pins"] == [0, 3]
    assert lab.guards["keep_latest_request"] is False
    assert any("not message indices" in str(c.value) and "zz" in str(c.value) for c in at.caption)
    # The guards travel with the configuration (URL, export) and read back the same.
    assert decode_config(encode_config(lab)).guards == lab.guards
    # Back to the defaults: no guards stored at all.
    at.checkbox(key="sb_guard_latest").check().run()
    at.selectbox(key="sb_guard_provider").set_value("auto").run()
    at.text_input(key="sb_guard_pins").set_value("").run()
    assert at.session_state["cl_lab"].guards is None


def test_a_clamp_stage_can_be_added_and_runs(app) -> None:
    at = go(app(cfg=encode_config(_config())).run(), "lab")
    at.selectbox(key="sb_add_type").set_value("clamp").run()
    at.button(key="sb_add").click().run()
    no_exceptions(at)
    lab: LabConfig = at.session_state["cl_lab"]
    assert [s["type"] for s in lab.stages] == ["truncation", "clamp"]
    assert lab.stages[1]["max_tokens"] == 2000
    assert not at.error


def test_the_profile_selector_brings_the_profiles_defaults_and_guards(app) -> None:
    at = go(app(cfg=encode_config(_config())).run(), "lab")
    assert at.checkbox(key="sb_guard_latest").value is True
    at.selectbox(key="sb_profile").set_value("maf").run()
    no_exceptions(at)
    lab: LabConfig = at.session_state["cl_lab"]
    assert lab.profile == "maf" and lab.guards is None
    assert lab.strategy_config()["profile"] == "maf"
    assert lab.guard_set().keep_latest_request is False  # MAF has no such rule
    assert at.checkbox(key="sb_guard_latest").value is False
    assert decode_config(encode_config(lab)).profile == "maf"
    from compactlens_inspector.exports.snippet import config_to_snippet

    code = config_to_snippet(lab)
    assert "PROFILE = 'maf'" in code and "keep_latest_request': False" in code
