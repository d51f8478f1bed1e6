"""A configuration as a Python script that reproduces the run with ``compactlens`` alone.

The script reads the transcript file, builds the same tokenizer, summarizer and
strategy (from the same JSON configuration), runs it and leaves the outcome in
``result``. An OpenAI-compatible summarizer reads its key from ``OPENAI_API_KEY``;
no key is ever written into the script. No Streamlit here.
"""

from __future__ import annotations

import pprint
import textwrap
from urllib.parse import urlsplit, urlunsplit

from compactlens_inspector.config import LabConfig, SummarizerSettings


def safe_base_url(url: str) -> str:
    """``url`` without any user name or password in it."""
    if not url:
        return ""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _tokenizer_code(tokenizer: str) -> tuple[str, str]:
    if tokenizer == "estimate":
        return "from compactlens import CharEstimator", "tokenizer = CharEstimator()"
    return (
        "from compactlens import TiktokenTokenizer",
        f"tokenizer = TiktokenTokenizer({tokenizer!r})",
    )


def _summarizer_code(settings: SummarizerSettings) -> tuple[list[str], str]:
    if settings.kind == "openai":
        base = safe_base_url(settings.base_url)
        base_arg = f", base_url={base!r}" if base else ""
        return (
            ["import os", "from compactlens import OpenAISummarizer"],
            f"summarizer = OpenAISummarizer(\n    {settings.model!r}{base_arg},\n"
            '    api_key=os.environ.get("OPENAI_API_KEY"),  # never hard-code a key\n)',
        )
    return (
        ["from compactlens import ExtractiveSummarizer"],
        "summarizer = ExtractiveSummarizer()  # extractive (offline), no model, no key",
    )


def _loader_code() -> tuple[list[str], str]:
    return (
        ["from compactlens import load_transcript"],
        "messages = list(load_transcript(TRANSCRIPT).messages)",
    )


def config_to_snippet(
    config: LabConfig,
    *,
    tokenizer: str = "estimate",
    summarizer: SummarizerSettings | None = None,
    transcript_path: str = "transcript.json",
) -> str:
    """Python code that reproduces ``config`` on ``transcript_path``; it sets ``result``."""
    summarizer = summarizer or SummarizerSettings()
    tok_import, tok_line = _tokenizer_code(tokenizer)
    sum_imports, sum_line = _summarizer_code(summarizer)
    load_imports, load_lines = _loader_code()
    imports = sorted({*load_imports, *sum_imports, tok_import})
    header = [
        '"""Reproduce a compactlens inspector run.',
        "",
        *textwrap.wrap(f"Configuration: {_doc_line(config)}", 88),
        '"""',
        "",
    ]
    body: list[str] = []
    if config.mode == "compact":
        c = config.compact
        imports += ["from compactlens import compact"]
        imports += ["from compactlens.model import count_messages"]
        body += [
            f"TRANSCRIPT = Path({transcript_path!r})",
            f"TARGET_TOKENS = {c.target_tokens}",
            f"KEEP_LAST_MESSAGES = {c.keep_last_messages}",
            f"TRIGGER_TOKENS = {c.trigger_tokens!r}  # compact when the history is over this",
            "",
            load_lines,
            tok_line,
            sum_line,
            "",
            "",
            "def count_tokens(items):",
            "    return sum(count_messages(items, tokenizer))",
            "",
            "",
            "tokens_before = count_tokens(messages)",
            "result = None",
            "if TRIGGER_TOKENS is None or tokens_before > TRIGGER_TOKENS:",
            "    result = compact(",
            "        messages,",
            "        summarizer=summarizer,",
            "        target_tokens=TARGET_TOKENS,",
            "        keep_last_messages=KEEP_LAST_MESSAGES,",
            "        count_tokens=count_tokens,",
            "    )",
            "    print(result.status, result.tokens.before, '->', result.tokens.after)",
            "else:",
            "    print('unchanged', tokens_before)",
        ]
    else:
        imports += [
            "from compactlens import Guards",
            "from compactlens import apply_compaction",
            "from compactlens import strategy_from_config",
        ]
        config_text = pprint.pformat(config.strategy_config(), indent=1, width=92, sort_dicts=False)
        body += [
            f"TRANSCRIPT = Path({transcript_path!r})",
            f"CONFIG = {config_text}",
            "",
            load_lines,
            tok_line,
            sum_line,
            f"GUARDS = {config.guard_set().to_dict()!r}",
            f"PROFILE = {config.profile!r}",
            "strategy = strategy_from_config(CONFIG, summarizer=summarizer)",
            "result = apply_compaction(",
            "    messages, strategy, tokenizer, guards=Guards.from_dict(GUARDS), profile=PROFILE",
            ")",
            "print(result.status, result.tokens_before, '->', result.tokens_after)",
            "for event in result.events:",
            "    print(' ' * event.depth, event.strategy, event.event, event.tokens_after)",
        ]
    stdlib = sorted(i for i in imports if not i.startswith("from compactlens"))
    ours = sorted(i for i in imports if i.startswith("from compactlens"))
    head = [*stdlib, "from pathlib import Path", "", *ours]
    return "\n".join([*header, *head, "", *body]) + "\n"


def _doc_line(config: LabConfig) -> str:
    from compactlens_inspector.config import config_title

    return config_title(config).replace('"""', "'''")
