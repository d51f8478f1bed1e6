"""A validator of AI SDK 7 ``ModelMessage`` JSON, written from the published schema.

Source: the zod schemas of the ``ai`` package 7.0.173 (``src/prompt/message.ts``,
``src/prompt/content-part.ts``, ``src/types/provider-metadata.ts``,
``src/types/json-value.ts``) and the types of ``@ai-sdk/provider-utils`` 5.0.81
(``src/types/*.ts``). Read from the npm tarballs; this is our own transcription, not
their code. ``validate_model_message`` returns the problems (empty when valid).

Rules as in zod: objects accept keys they do not name (zod strips them), optional
keys may be absent, unions take the first member that fits. JSON has no ``URL``,
``Uint8Array`` or ``Buffer``: where the schema takes ``z.instanceof(URL)`` a string
is accepted here (``JSON.parse`` gives strings, and the AI SDK's own file-data
conversion takes URL strings), and binary data appears as base64 strings.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Check = Callable[[Any, str], list[str]]


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def string(value: Any, at: str) -> list[str]:
    return [] if isinstance(value, str) else [f"{at}: expected string, got {_type_name(value)}"]


def boolean(value: Any, at: str) -> list[str]:
    return [] if isinstance(value, bool) else [f"{at}: expected boolean, got {_type_name(value)}"]


def unknown(value: Any, at: str) -> list[str]:
    return []


def literal(expected: str) -> Check:
    def check(value: Any, at: str) -> list[str]:
        return [] if value == expected else [f"{at}: expected {expected!r}, got {value!r}"]

    return check


def json_value(value: Any, at: str) -> list[str]:
    if value is None or isinstance(value, str | bool | int | float):
        return []
    if isinstance(value, list):
        return [e for k, v in enumerate(value) for e in json_value(v, f"{at}[{k}]")]
    if isinstance(value, Mapping):
        return [e for k, v in value.items() for e in json_value(v, f"{at}.{k}")]
    return [f"{at}: not a JSON value ({_type_name(value)})"]


def record_of(inner: Check) -> Check:
    def check(value: Any, at: str) -> list[str]:
        if not isinstance(value, Mapping):
            return [f"{at}: expected object, got {_type_name(value)}"]
        return [e for k, v in value.items() for e in inner(v, f"{at}.{k}")]

    return check


def array_of(inner: Check) -> Check:
    def check(value: Any, at: str) -> list[str]:
        if not isinstance(value, list):
            return [f"{at}: expected array, got {_type_name(value)}"]
        return [e for k, v in enumerate(value) for e in inner(v, f"{at}[{k}]")]

    return check


def union(*members: Check) -> Check:
    def check(value: Any, at: str) -> list[str]:
        problems: list[str] = []
        for member in members:
            found = member(value, at)
            if not found:
                return []
            problems.extend(found)
        return [f"{at}: matches no member of the union ({'; '.join(problems[:4])})"]

    return check


def obj(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    def check(value: Any, at: str) -> list[str]:
        if not isinstance(value, Mapping):
            return [f"{at}: expected object, got {_type_name(value)}"]
        problems: list[str] = []
        for key, inner in required.items():
            if key not in value:
                problems.append(f"{at}.{key}: required")
            else:
                problems.extend(inner(value[key], f"{at}.{key}"))
        for key, inner in (optional or {}).items():
            if key in value:  # zod .optional(): absent or undefined (JSON has no undefined)
                problems.extend(inner(value[key], f"{at}.{key}"))
        return problems

    return check


def tagged(key: str, members: Mapping[str, Check]) -> Check:
    """``z.discriminatedUnion(key, ...)``."""

    def check(value: Any, at: str) -> list[str]:
        if not isinstance(value, Mapping):
            return [f"{at}: expected object, got {_type_name(value)}"]
        member = members.get(value.get(key))  # type: ignore[arg-type]
        if member is None:
            return [f"{at}.{key}: {value.get(key)!r} is not one of {sorted(members)}"]
        return member(value, at)

    return check


provider_metadata = record_of(record_of(json_value))
OPTS: dict[str, Check] = {"providerOptions": provider_metadata}
inline_data = string  # DataContent in JSON: a base64 string
url = string  # z.instanceof(URL), as JSON text
provider_reference = record_of(string)
tagged_file_data = tagged(
    "type",
    {
        "data": obj({"type": literal("data"), "data": inline_data}),
        "url": obj({"type": literal("url"), "url": url}),
        "reference": obj({"type": literal("reference"), "reference": provider_reference}),
        "text": obj({"type": literal("text"), "text": string}),
    },
)
tagged_reasoning_file_data = tagged(
    "type",
    {
        "data": obj({"type": literal("data"), "data": inline_data}),
        "url": obj({"type": literal("url"), "url": url}),
    },
)

text_part = obj({"type": literal("text"), "text": string}, OPTS)
image_part = obj(
    {"type": literal("image"), "image": union(inline_data, url, provider_reference)},
    {"mediaType": string, **OPTS},
)
file_part = obj(
    {
        "type": literal("file"),
        "data": union(tagged_file_data, inline_data, url, provider_reference),
        "mediaType": string,
    },
    {"filename": string, **OPTS},
)
reasoning_part = obj({"type": literal("reasoning"), "text": string}, OPTS)
custom_part = obj({"type": literal("custom"), "kind": string}, OPTS)
reasoning_file_part = obj(
    {
        "type": literal("reasoning-file"),
        "data": union(tagged_reasoning_file_data, inline_data, url),
        "mediaType": string,
    },
    OPTS,
)
tool_call_part = obj(
    # input: z.unknown() (zod lets an unknown key be absent; the type requires it)
    {"type": literal("tool-call"), "toolCallId": string, "toolName": string},
    {"input": unknown, "providerExecuted": boolean, **OPTS},
)


def _content_entry(
    kind: str, required: Mapping[str, Check], optional: Mapping[str, Check]
) -> Check:
    return obj({"type": literal(kind), **required}, {**optional, **OPTS})


output_content = union(
    _content_entry("text", {"text": string}, {}),
    _content_entry("file", {"data": tagged_file_data, "mediaType": string}, {"filename": string}),
    _content_entry("file-data", {"data": string, "mediaType": string}, {"filename": string}),
    _content_entry("file-url", {"url": string}, {"mediaType": string}),
    _content_entry("file-id", {"fileId": union(string, record_of(string))}, {}),
    _content_entry("file-reference", {"providerReference": record_of(string)}, {}),
    _content_entry("image-data", {"data": string, "mediaType": string}, {}),
    _content_entry("image-url", {"url": string}, {}),
    _content_entry("image-file-id", {"fileId": union(string, record_of(string))}, {}),
    _content_entry("image-file-reference", {"providerReference": record_of(string)}, {}),
    _content_entry("custom", {}, {}),
)
tool_output = tagged(
    "type",
    {
        "text": obj({"type": literal("text"), "value": string}, OPTS),
        "json": obj({"type": literal("json"), "value": json_value}, OPTS),
        "execution-denied": obj({"type": literal("execution-denied")}, {"reason": string, **OPTS}),
        "error-text": obj({"type": literal("error-text"), "value": string}, OPTS),
        "error-json": obj({"type": literal("error-json"), "value": json_value}, OPTS),
        "content": obj({"type": literal("content"), "value": array_of(output_content)}, OPTS),
    },
)
tool_result_part = obj(
    {
        "type": literal("tool-result"),
        "toolCallId": string,
        "toolName": string,
        "output": tool_output,
    },
    OPTS,
)
tool_approval_request = obj(
    {"type": literal("tool-approval-request"), "approvalId": string, "toolCallId": string},
    {"reason": string, "isAutomatic": boolean, "signature": string, "inputSchemaInput": unknown},
)
tool_approval_response = obj(
    {"type": literal("tool-approval-response"), "approvalId": string, "approved": boolean},
    {"reason": string},
)

system_message = obj({"role": literal("system"), "content": string}, OPTS)
user_message = obj(
    {
        "role": literal("user"),
        "content": union(string, array_of(union(text_part, image_part, file_part))),
    },
    OPTS,
)
assistant_message = obj(
    {
        "role": literal("assistant"),
        "content": union(
            string,
            array_of(
                union(
                    text_part,
                    custom_part,
                    file_part,
                    reasoning_part,
                    reasoning_file_part,
                    tool_call_part,
                    tool_result_part,
                    tool_approval_request,
                )
            ),
        ),
    },
    OPTS,
)
tool_message = obj(
    {
        "role": literal("tool"),
        "content": array_of(union(tool_result_part, tool_approval_response)),
    },
    OPTS,
)
_BY_ROLE: dict[str, Check] = {
    "system": system_message,
    "user": user_message,
    "assistant": assistant_message,
    "tool": tool_message,
}


def validate_model_message(value: Any, at: str = "message") -> list[str]:
    """The problems of ``value`` as an AI SDK 7 ``ModelMessage`` (empty when it is one)."""
    if not isinstance(value, Mapping):
        return [f"{at}: expected object, got {_type_name(value)}"]
    check = _BY_ROLE.get(value.get("role"))  # type: ignore[arg-type]
    if check is None:
        return [f"{at}.role: {value.get('role')!r} is not one of {sorted(_BY_ROLE)}"]
    return check(value, at)


def validate_model_messages(values: Any) -> list[str]:
    """The problems of a ``ModelMessage[]``."""
    if not isinstance(values, list):
        return [f"messages: expected array, got {_type_name(values)}"]
    return [e for k, v in enumerate(values) for e in validate_model_message(v, f"messages[{k}]")]
