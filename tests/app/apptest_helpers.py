"""Helpers for the inspector tests: synthetic sample transcripts and AppTest lookups."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

REPO_ROOT = Path(__file__).resolve().parents[2]
APP = REPO_ROOT / "app" / "streamlit_app.py"
PAGES = "compactlens_inspector/pages/"

#: Text a test can look for to prove transcript content is shown inert.
XSS_TEXT = (
    "<script>alert('pwned')</script> see [click me](javascript:alert(1)) and "
    "<img src=x onerror=alert(2)> ![tracker](http://127.0.0.1:9/t.png)"
)


def _call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }


def coding_agent(turns: int = 8) -> list[dict[str, Any]]:
    """A coding-agent conversation: each turn reads a file and runs the tests."""
    msgs: list[dict[str, Any]] = [
        {
            "role": "system",
            "content": "You are a careful coding agent. Use the tools; never guess. " * 6,
        }
    ]
    for t in range(turns):
        msgs.append({"role": "user", "content": f"Step {t}: fix the bug in module_{t}.py"})
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    _call(f"call_read_{t}", "read_file", {"path": f"src/module_{t}.py"})
                ],
            }
        )
        body = "\n".join(f"line {i}: value_{t}_{i} = compute({i}) # file body" for i in range(40))
        msgs.append({"role": "tool", "tool_call_id": f"call_read_{t}", "content": body})
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [_call(f"call_test_{t}", "run_tests", {"target": f"tests/t_{t}"})],
            }
        )
        msgs.append(
            {
                "role": "tool",
                "tool_call_id": f"call_test_{t}",
                "content": f"{t} passed, 0 failed. " * 30,
            }
        )
        msgs.append(
            {
                "role": "assistant",
                "content": f"Fixed module_{t}.py: the loop now stops at the last index. "
                "I decided to keep the public API unchanged because callers depend on it.",
            }
        )
    return msgs


def tiny() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are brief."},
        {"role": "user", "content": "Hello there"},
        {"role": "assistant", "content": "Hi! How can I help?"},
    ]


def unresolved() -> list[dict[str, Any]]:
    msgs = coding_agent(2)
    msgs.append({"role": "user", "content": "Now deploy it."})
    msgs.append(
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_call("call_deploy", "deploy", {"env": "prod"})],
        }
    )
    return msgs


def hostile() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": XSS_TEXT},
        {"role": "assistant", "content": "**Bold** reply with <b>raw html</b>"},
    ]


SAMPLES = {
    "coding_agent": (
        "Coding agent",
        "Eight turns of reading files and running tests.",
        coding_agent,
    ),
    "tiny": ("Tiny chat", "Three messages that always fit.", tiny),
    "unresolved": ("Unresolved call", "Ends with a tool call that has no result.", unresolved),
    "hostile": ("Hostile content", "HTML, script links and images in the text.", hostile),
}


def build_samples(folder: Path) -> None:
    for name, (title, description, build) in SAMPLES.items():
        doc = {"title": title, "description": description, "messages": build()}
        (folder / f"{name}.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")


# -- AppTest lookups -------------------------------------------------------------------------


def go(at: AppTest, page: str) -> AppTest:
    """Switch to a page (``lab``, ``diff``...) and run it."""
    at.switch_page(f"{PAGES}{page}.py")
    return at.run()


def metric(at: AppTest, label: str) -> str:
    found = [m.value for m in at.metric if m.label == label]
    assert found, f"no metric {label!r}; metrics: {[m.label for m in at.metric]}"
    return str(found[0])


def metric_int(at: AppTest, label: str) -> int:
    return int(metric(at, label).replace(",", ""))


def texts(at: AppTest) -> str:
    """Every text element of the page (Markdown, captions, code, alerts) joined."""
    parts: list[str] = []
    for group in (
        at.markdown,
        at.caption,
        at.code,
        at.error,
        at.warning,
        at.success,
        at.info,
        at.text,
        at.subheader,
        at.title,
    ):
        parts.extend(str(e.value) for e in group)
    return "\n".join(parts)


def plain(text: str) -> str:
    """Markdown-escaped text back to the text it shows: drop the backslashes and the
    invisible word joiners ``md_escape`` puts into bare URLs and ``:icon:`` shortcodes."""
    import re

    return re.sub(r"\\(.)", r"\1", text).replace("\u2060", "")


def no_exceptions(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def code_values(at: AppTest) -> list[str]:
    return [str(c.value) for c in at.code]


def widget_keys(elements: Iterable[Any]) -> list[str]:
    return [e.key for e in elements if getattr(e, "key", None)]


def frame(at: AppTest, key: str) -> Any:
    """The table (a pandas DataFrame) of the ``st.dataframe`` with ``key``."""
    found = [d for d in at.dataframe if d.key == key]
    assert found, f"no dataframe {key!r}; dataframes: {[d.key for d in at.dataframe]}"
    return found[0].value


def has_frame(at: AppTest, key: str) -> bool:
    return any(d.key == key for d in at.dataframe)


#: How a verdict bar's last line begins: what to do, or why there is nothing to do.
STEP_LABELS = ("Next step", "Nothing to change", "Nothing to fix")


def is_verdict_bar(text: str) -> bool:
    """Whether an alert's Markdown is a verdict bar (it ends with the next step)."""
    return any(f"**{label}:**" in text for label in STEP_LABELS)


def step_line(v: Any) -> str:
    """The verdict's next step as its bar shows it (``**Next step:** ...`` or
    ``**Nothing to change:** ...``)."""
    label, text = v.next_step_parts
    return f"**{label}:** {text}"
