"""The :class:`Transcript` value: a conversation read from one source, in one wire format,
with the container it came in, and its ways out (wire items, a whole document, another
format)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import TYPE_CHECKING, Any

from compactlens.formats import get_format
from compactlens.formats.base import ConversionWarning
from compactlens.model.display import Card, card_html, card_text, clip, data_frame
from compactlens.model.messages import Message
from compactlens.model.recorded import RecordedCompaction
from compactlens.transcript.container import Container
from compactlens.transcript.write import _to_document, _to_wire

if TYPE_CHECKING:
    from compactlens.engine.index import PairingProblem
    from compactlens.model.tokens import Tokenizer


#: Columns of a transcript's frame: one row per message.
MESSAGE_COLUMNS = ("message", "role", "name", "chars", "tool_calls", "tool_results", "text")


@dataclass(frozen=True, slots=True)
class Transcript:
    """A conversation read from one source, in one wire format.

    ``messages`` are canonical messages that keep their wire objects; ``format``
    is the wire format name; ``container`` how they were stored; ``detection``
    why this format was chosen; ``warnings`` what a conversion could not carry, or for a
    transcript read from a file what reading left out (a JSON-lines file whose last line
    was cut off mid-line: the complete lines are loaded, and the note names the cut line
    and its size); ``compactions`` the compactions the
    agent itself recorded in the file (empty when its format has no such markers).
    """

    messages: tuple[Message, ...]
    format: str
    source: str = "<input>"
    container: Container = field(default_factory=Container)
    detection: str = ""
    warnings: tuple[ConversionWarning, ...] = ()
    compactions: tuple[RecordedCompaction, ...] = ()

    def __repr__(self) -> str:
        return card_text(self._card())

    def _repr_html_(self) -> str:
        return card_html(self._card())

    def to_pandas(self) -> Any:
        """A ``pandas.DataFrame`` with one row per message: its index, role, name,
        characters of text, the tools it calls, the results it holds, and its text (cut to
        200 characters)."""
        rows = [
            {
                "message": i,
                "role": m.role,
                "name": m.name,
                "chars": len(m.text),
                "tool_calls": ", ".join(c.name for c in m.tool_calls),
                "tool_results": len(m.tool_results),
                "text": clip(m.text, 200),
            }
            for i, m in enumerate(self.messages)
        ]
        return data_frame(rows, MESSAGE_COLUMNS)

    def _card(self) -> Card:
        roles = Counter(m.role for m in self.messages)
        latest = next((m.text for m in reversed(self.messages) if m.role == "user"), "")
        facts = [
            # The file's name, not its path: a card travels in shared notebooks.
            ("source", PurePath(self.source).name or self.source),
            ("messages", ", ".join(f"{n:,} {role}" for role, n in roles.most_common())),
            ("recorded compactions", f"{len(self.compactions):,}"),
        ]
        if self.warnings:
            shown = "; ".join(str(w) for w in self.warnings[:3])
            more = len(self.warnings) - 3
            facts.append(("warnings", shown + (f"; and {more:,} more" if more > 0 else "")))
        if latest:
            facts.append(("latest request", latest))
        return Card(
            title=(
                f"Transcript ({self.format}, {len(self.messages):,} "
                f"message{'' if len(self.messages) == 1 else 's'})"
            ),
            facts=tuple(facts),
            reason=self.detection,
        )

    @property
    def model(self) -> str | None:
        """The ``model`` of a request or response body, if any."""
        parent = self.container.parent()
        model = parent.get("model") if parent is not None else None
        return model if isinstance(model, str) else None

    @property
    def named_model(self) -> str | None:
        """The model the log names, where its agent writes it (Codex ``turn_context``,
        Claude Code assistant records, OpenHands ``llm_config``, Inspect AI ``eval``,
        a request body's ``model``...): the latest one named, or None.
        :func:`compactlens.model.tokenizer_for_model` picks the counter for it."""
        from compactlens.transcript.model_name import named_model

        return named_model(self.messages, self.container.passthrough, self.container.document)

    @property
    def tools(self) -> tuple[Any, ...] | None:
        """The ``tools`` of a request body, if any (as given, not converted)."""
        parent = self.container.parent()
        tools = parent.get("tools") if parent is not None else None
        return tuple(tools) if isinstance(tools, list) else None

    @property
    def system(self) -> str | None:
        """The text of the leading system or developer messages, if any."""
        texts: list[str] = []
        for m in self.messages:
            if not m.is_system:
                break
            texts.append(m.text)
        return "\n".join(texts) if texts else None

    @property
    def problems(self) -> tuple[PairingProblem, ...]:
        """Tool-call pairing problems (orphan results, unresolved calls, ...)."""
        from compactlens.engine.index import validate_pairing

        return tuple(validate_pairing(list(self.messages)))

    @property
    def orphan_results(self) -> tuple[int, ...]:
        """Indices of messages holding a tool result whose call id was never declared."""
        return tuple(sorted({p.message_index for p in self.problems if p.kind == "orphan_result"}))

    def with_messages(self, messages: Sequence[Message]) -> Transcript:
        """The same transcript (format, container) holding other messages."""
        return dataclasses.replace(self, messages=tuple(messages), warnings=())

    def count_tokens(self, tokenizer: Tokenizer | None = None) -> list[int]:
        """Per-message token counts of this transcript, read from its own wire format.

        The messages were read from the transcript's own wire objects (an
        Anthropic transcript is counted as Anthropic content, not as a Chat
        Completions conversion of it). To count another format, count
        ``transcript.convert(name)``.
        """
        from compactlens.model.tokens import CharEstimator, count_messages

        return count_messages(
            self.messages, tokenizer if tokenizer is not None else CharEstimator()
        )

    def to_wire(self, format: str | None = None) -> tuple[list[Any], list[ConversionWarning]]:
        """The message list in ``format`` (default: the transcript's own) and what did not fit.

        In the own format, unchanged messages are the original wire objects (the
        same objects) and non-message items are put back at their positions. A
        system message that lives outside the list (Anthropic ``system``,
        Responses ``instructions``) is not in it; :meth:`to_document` places it.
        """
        target = get_format(format or self.format)
        items, warnings, _ = _to_wire(self, target)
        return items, warnings

    def to_document(self, format: str | None = None) -> tuple[Any, list[ConversionWarning]]:
        """The whole JSON value to write (array, object, or a list of JSON-lines items)."""
        return _to_document(self, get_format(format or self.format))

    def convert(self, format: str) -> Transcript:
        """This transcript in another format, read back from its converted wire form.

        :attr:`warnings` lists what could not be carried over.
        """
        from compactlens.transcript.read import load_transcript

        target = get_format(format)
        document, warnings = _to_document(self, target)
        converted = load_transcript(document, target.name, source=self.source)
        return dataclasses.replace(
            converted,
            detection=f"converted from {self.format} to {target.name}",
            warnings=tuple(warnings),
        )
