"""Which counter a token number comes from, and which one fits the log's own model."""

from __future__ import annotations

from compactlens.model import tokenizer_for_model, tokenizer_name
from compactlens_inspector.lab.config import TOKENIZERS
from compactlens_inspector.style.safety import md_code, md_escape


def counter_note(named_model: str | None, counter: str) -> str:
    """A caption (Markdown, escaped): the counters behind the numbers above it, the one
    the session's budgets use, and the closest offline counter for the model the log
    names."""
    chosen = TOKENIZERS.get(counter, counter)
    lines = [
        "**Estimate**: characters / 4, the default counter. "
        "**Exact**: tiktoken, offline, 3 framing tokens per message. "
        f"Budgets and the lab count with: {md_escape(chosen)} (sidebar, Token counter)."
    ]
    # The closer counter is named with the way to it, unless it is the one in use.
    switch = (
        " (in use)"
        if counter == "calibrated"
        else ": pick it in the sidebar's Token counter to count with it"
    )
    if named_model is None:
        lines.append(
            "The log names no model; when the model's tokenizer is unknown the closest "
            f"counter is the calibrated estimate{switch}."
        )
        return "  \n".join(lines)
    best = tokenizer_name(tokenizer_for_model(named_model))
    if best == "calibrated":
        lines.append(
            f"The log names its model, {md_code(named_model)}, whose tokenizer is not "
            f"available offline: the closest counter is the calibrated estimate{switch}."
        )
    else:
        lines.append(
            f"The log names its model, {md_code(named_model)}: its tokenizer is "
            f"{md_code(best)}, counted exactly offline."
        )
    return "  \n".join(lines)
