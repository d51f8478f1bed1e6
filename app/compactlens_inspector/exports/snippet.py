"""A configuration as a Python script that reproduces the run with ``compactlens`` alone.

The script reads the transcript file, builds the same tokenizer, summarizer and
strategy (from the same JSON configuration), runs it and leaves the outcome in
``result``. An OpenAI-compatible summarizer reads its key from ``OPENAI_API_KEY``;
no key is ever written into the script. No Streamlit here.
"""

from __future__ import annotations

import pprint
import textwrap

from compactlens_inspector.lab.config import LabConfig, SummarizerSettings, safe_base_url


def _tokenizer_code(tokenizer: str) -> tuple[str, str]:
    if tokenizer == "estimate":
        return "from compactlens import CharEstimator", "tokenizer = CharEstimator()"
    if tokenizer == "calibrated":
        return "from compactlens import ContentEstimator", "tokenizer = ContentEstimator()"
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
        *textwrap.wrap(f"Configuration: {_doc_line(config)}", 88, break_on_hyphens=False),
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
    from compactlens_inspector.lab.config import config_title

    return config_title(config).replace('"""', "'''")


# -- "Use in your agent": the configuration inside an agent framework -----------------------

#: Framework key -> label, in the order the Export page offers them.
FRAMEWORKS: dict[str, str] = {
    "plain": "Plain Python",
    "langchain": "LangChain",
    "pydantic-ai": "pydantic-ai",
    "openai-agents": "OpenAI Agents SDK",
    "agent-framework": "Microsoft Agent Framework",
}

_MODEL_LINES = [
    "# The model: any OpenAI-compatible endpoint (OPENAI_API_KEY, OPENAI_BASE_URL).",
    'MODEL = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")',
    'BASE_URL = os.environ.get("OPENAI_BASE_URL")  # None: the official endpoint',
]

_AGENTS: dict[str, list[str]] = {
    "langchain": [
        "from langchain.agents import create_agent",
        "from langchain_openai import ChatOpenAI",
        "from langgraph.checkpoint.memory import InMemorySaver",
        "",
        "from compactlens.integrations import compaction_middleware",
        "",
        "agent = create_agent(",
        "    ChatOpenAI(model=MODEL, base_url=BASE_URL),",
        "    tools=[lookup],",
        "    middleware=[compaction_middleware(compactor)],",
        "    checkpointer=InMemorySaver(),",
        ")",
        'thread = {"configurable": {"thread_id": "demo"}}',
        "for question in QUESTIONS:",
        '    state = agent.invoke({"messages": [{"role": "user", "content": question}]}, thread)',
        '    print(state["messages"][-1].content)',
    ],
    "pydantic-ai": [
        "from pydantic_ai import Agent",
        "from pydantic_ai.models.openai import OpenAIChatModel",
        "from pydantic_ai.providers.openai import OpenAIProvider",
        "",
        "from compactlens.integrations import compaction_capability",
        "",
        "model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=BASE_URL))",
        "agent = Agent(model, tools=[lookup], capabilities=[compaction_capability(compactor)])",
        "history = []",
        "for question in QUESTIONS:",
        "    run = agent.run_sync(question, message_history=history)",
        "    history = run.all_messages()",
        "    print(run.output)",
    ],
    "openai-agents": [
        "import asyncio",
        "",
        "from agents import Agent, OpenAIChatCompletionsModel, Runner, SQLiteSession",
        "from agents import function_tool, set_tracing_disabled",
        "from openai import AsyncOpenAI",
        "",
        "from compactlens.integrations import CompactingSession",
        "",
        "set_tracing_disabled(True)  # the SDK's own traces; compactlens spans use OpenTelemetry",
        "client = AsyncOpenAI(base_url=BASE_URL)",
        "agent = Agent(",
        '    name="assistant",',
        "    model=OpenAIChatCompletionsModel(model=MODEL, openai_client=client),",
        "    tools=[function_tool(lookup)],",
        ")",
        "# Your session stays the full history; the runner gets the compacted view.",
        'session = CompactingSession(SQLiteSession("demo"), compactor)',
        "",
        "",
        "async def main():",
        "    for question in QUESTIONS:",
        "        run = await Runner.run(agent, question, session=session)",
        "        print(run.final_output)",
        "",
        "",
        "asyncio.run(main())",
    ],
    "agent-framework": [
        "import asyncio",
        "",
        "from agent_framework import Agent, tool",
        "from agent_framework.openai import OpenAIChatCompletionClient",
        "from openai import AsyncOpenAI",
        "",
        "from compactlens.integrations import CompactlensStrategy",
        "",
        "client = OpenAIChatCompletionClient(MODEL, async_client=AsyncOpenAI(base_url=BASE_URL))",
        "agent = Agent(",
        "    client,",
        "    tools=[tool(lookup)],",
        "    compaction_strategy=CompactlensStrategy(compactor),",
        ")",
        "",
        "",
        "async def main():",
        "    session = agent.create_session()",
        "    for question in QUESTIONS:",
        "        print((await agent.run(question, session=session)).text)",
        "",
        "",
        "asyncio.run(main())",
    ],
}


def _compactor_code(config: LabConfig, tok_line: str, sum_line: str) -> list[str]:
    """The lines that build ``compactor`` from ``config`` (a strategy or a one-shot)."""
    if config.mode == "compact":
        c = config.compact
        return [
            "from compactlens.integrations import Compactor, OneShot",
            "",
            tok_line,
            sum_line,
            "compactor = Compactor.from_one_shot(",
            "    OneShot(",
            "        summarizer=summarizer,",
            f"        target_tokens={c.target_tokens},",
            f"        keep_last_messages={c.keep_last_messages},",
            f"        trigger_tokens={c.trigger_tokens!r},  # compact once over this",
            "    ),",
            "    tokenizer=tokenizer,",
            '    record_to=os.environ.get("COMPACTLENS_RECORD_DIR"),',
            ")",
        ]
    config_text = pprint.pformat(config.strategy_config(), indent=1, width=92, sort_dicts=False)
    return [
        "from compactlens.integrations import Compactor",
        "",
        f"CONFIG = {config_text}",
        f"GUARDS = {config.guard_set().to_dict()!r}",
        f"PROFILE = {config.profile!r}",
        tok_line,
        sum_line,
        "compactor = Compactor.from_config(",
        "    CONFIG,",
        "    summarizer=summarizer,",
        "    guards=GUARDS,",
        "    profile=PROFILE,",
        "    tokenizer=tokenizer,",
        '    record_to=os.environ.get("COMPACTLENS_RECORD_DIR"),',
        ")",
    ]


def framework_snippet(
    config: LabConfig,
    framework: str,
    *,
    tokenizer: str = "estimate",
    summarizer: SummarizerSettings | None = None,
    transcript_path: str = "transcript.json",
) -> str:
    """A script that runs ``config`` inside ``framework`` (a key of :data:`FRAMEWORKS`).

    ``plain`` is :func:`config_to_snippet`. The others build a
    :class:`compactlens.integrations.Compactor` from the configuration, guards and profile
    and put it in front of the framework's model calls; set ``COMPACTLENS_RECORD_DIR`` to
    record every run for the inspector. A ``compact()`` configuration becomes a
    :class:`compactlens.integrations.OneShot`.
    """
    if framework == "plain":
        return config_to_snippet(
            config, tokenizer=tokenizer, summarizer=summarizer, transcript_path=transcript_path
        )
    if framework not in _AGENTS:
        raise ValueError(f"unknown framework {framework!r}; expected one of {list(FRAMEWORKS)}")
    summarizer = summarizer or SummarizerSettings()
    tok_import, tok_line = _tokenizer_code(tokenizer)
    sum_imports, sum_line = _summarizer_code(summarizer)
    head = [
        f'"""Use a tuned compactlens configuration in {FRAMEWORKS[framework]}.',
        "",
        *textwrap.wrap(f"Configuration: {_doc_line(config)}", 88, break_on_hyphens=False),
        "Set COMPACTLENS_RECORD_DIR to record each run (open the file in the inspector).",
        '"""',
        "",
        *sorted({"import os", *(i for i in sum_imports if not i.startswith("from compactlens"))}),
        "",
        *sorted({tok_import, *(i for i in sum_imports if i.startswith("from compactlens"))}),
        *_compactor_code(config, tok_line, sum_line),
        "",
        *_MODEL_LINES,
        'QUESTIONS = ["What is new in 2.0?", "And in 2.1?", "Which one should I install?"]',
        "",
        "",
        "def lookup(q: str) -> str:",
        '    """Look something up (replace with your own tools)."""',
        '    return f"Notes about {q}."',
        "",
        "",
    ]
    return "\n".join([*head, *_AGENTS[framework]]) + "\n"
