"""CompactionSession runs engine strategies under guards (latest request, provider)."""

from __future__ import annotations

from compactlens import CompactionSession, TruncationStrategy, tokens_exceed
from compactlens.engine import NO_GUARDS
from compactlens.engine.repair import OMITTED_NOTE


def turns(n: int) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for t in range(n):
        out.append({"role": "user", "content": f"request {t}"})
        call = {"id": f"c{t}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        out.append({"role": "assistant", "content": None, "tool_calls": [call]})
        out.append({"role": "tool", "tool_call_id": f"c{t}", "content": "x" * 400})
        out.append({"role": "assistant", "content": f"answer {t} " + "y" * 400})
    return out


def session(**kw: object) -> CompactionSession:
    strategy = TruncationStrategy(trigger=tokens_exceed(300), minimum_preserved=0)
    return CompactionSession(
        triggers=[tokens_exceed(300)],
        target_tokens=10_000,
        strategy=strategy,
        **kw,  # type: ignore[arg-type]
    )


def test_the_latest_request_survives_by_default_and_not_without_guards() -> None:
    history = turns(4)
    latest = history[-4]
    for k in range(3):  # a long tool run after the request
        call = {"id": f"x{k}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        history.append({"role": "assistant", "content": None, "tool_calls": [call]})
        history.append({"role": "tool", "tool_call_id": f"x{k}", "content": "z" * 400})
    assert latest in session().prepare(history)
    assert latest not in session(guards=NO_GUARDS).prepare(history)


def test_an_anthropic_session_never_opens_with_an_assistant_turn() -> None:
    history = turns(4)[:-1]  # ends on the last tool result: the request is long gone
    out = session(provider="anthropic", guards=NO_GUARDS).prepare(history)
    assert out[0] == {"role": "user", "content": OMITTED_NOTE}
    plain = session(guards=NO_GUARDS).prepare(history)
    assert plain[0]["role"] == "assistant"
