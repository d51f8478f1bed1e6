"""Each wire format read back by the real package that owns it (not a test module).

``READERS[format](document)`` raises when the package rejects the document and
returns how many messages or items it read. The packages (the ``dev`` extra):

* ``openai-chat``: ``openai`` ``ChatCompletionMessageParam`` (pydantic ``TypeAdapter``);
* ``openai-responses``: ``openai`` ``ResponseInputItemParam``, then the OpenAI Agents
  SDK: the items go through an in-memory ``SQLiteSession`` (``add_items`` /
  ``get_items``) and ``Converter.items_to_messages`` turns them into chat messages, as
  the SDK does before calling a model;
* ``anthropic``: ``anthropic`` ``MessageParam`` (and ``TextBlockParam`` for a list ``system``);
* ``claude-code``: the ``message`` of each user/assistant line as ``anthropic``
  ``MessageParam``;
* ``langchain``: ``langchain_core.messages.messages_from_dict``;
* ``agent-framework``: ``agent_framework.Message.from_dict``;
* ``ai-sdk``: :mod:`ai_sdk_schema` (the AI SDK is TypeScript; its published schema).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any

from ai_sdk_schema import validate_model_messages
from pydantic import TypeAdapter


def _listed(document: Any, key: str) -> list[Any]:
    if isinstance(document, Mapping):
        return list(document[key])
    return list(document)


def read_openai_chat(document: Any) -> int:
    from openai.types.chat import ChatCompletionMessageParam

    messages = _listed(document, "messages")
    TypeAdapter(list[ChatCompletionMessageParam]).validate_python(messages)
    return len(messages)


async def _through_session(items: list[Any]) -> list[Any]:
    from agents import SQLiteSession

    session = SQLiteSession("writeback")  # in memory
    try:
        await session.add_items(items)
        return list(await session.get_items())
    finally:
        session.close()


def read_openai_responses(document: Any) -> int:
    from agents.models.chatcmpl_converter import Converter
    from openai.types.responses import ResponseInputItemParam

    key = "input" if isinstance(document, Mapping) and "input" in document else "output"
    items = _listed(document, key)
    TypeAdapter(list[ResponseInputItemParam]).validate_python(items)
    stored = asyncio.run(_through_session(items))
    assert stored == items, "the Agents SDK session changed the items"
    Converter.items_to_messages([_chat_expressible(item) for item in stored])
    return len(items)


def _chat_expressible(item: Any) -> Any:
    """The item without the parts Chat Completions cannot express.

    ``input_file`` given only by ``file_url`` and ``input_image`` given only by
    ``file_id``: the Responses API takes them (``ResponseInputFileParam``,
    ``ResponseInputImageParam``), but the Agents SDK's Chat Completions converter
    says it cannot ("Only file_data or file_id is supported", "Only image URLs are
    supported"): a limit of that path, not of the item.
    """
    content = item.get("content") if isinstance(item, Mapping) else None
    if not isinstance(content, list):
        return item
    return {**item, "content": [p for p in content if not _chat_inexpressible(p)]}


def _chat_inexpressible(part: Mapping[str, Any]) -> bool:
    kind = part.get("type")
    if kind == "input_file":
        return not (part.get("file_data") or part.get("file_id"))
    if kind == "input_image":
        return not part.get("image_url")
    return False


def read_anthropic(document: Any) -> int:
    from anthropic.types import MessageParam, TextBlockParam

    messages = _listed(document, "messages")
    TypeAdapter(list[MessageParam]).validate_python(messages)
    if isinstance(document, Mapping) and isinstance(document.get("system"), list):
        TypeAdapter(list[TextBlockParam]).validate_python(document["system"])
    return len(messages)


def read_claude_code(document: Any) -> int:
    from anthropic.types import MessageParam

    inner = [
        line["message"]
        for line in (document if isinstance(document, list) else [document])
        if line.get("type") in ("user", "assistant") and "message" in line
    ]
    adapter: TypeAdapter[MessageParam] = TypeAdapter(MessageParam)
    for message in inner:
        adapter.validate_python({"role": message["role"], "content": message["content"]})
    return len(inner)


def read_langchain(document: Any) -> int:
    from langchain_core.messages import messages_from_dict

    return len(messages_from_dict(_listed(document, "messages")))


def read_agent_framework(document: Any) -> int:
    from agent_framework import Message

    return len([Message.from_dict(dict(d)) for d in _listed(document, "messages")])


def read_ai_sdk(document: Any) -> int:
    messages = _listed(document, "messages")
    problems = validate_model_messages(messages)
    if problems:
        raise ValueError("not AI SDK 7 ModelMessage JSON:\n" + "\n".join(problems[:10]))
    return len(messages)


READERS: dict[str, Callable[[Any], int]] = {
    "openai-chat": read_openai_chat,
    "openai-responses": read_openai_responses,
    "anthropic": read_anthropic,
    "claude-code": read_claude_code,
    "langchain": read_langchain,
    "agent-framework": read_agent_framework,
    "ai-sdk": read_ai_sdk,
}
