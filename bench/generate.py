"""Seeded synthetic agent transcripts in OpenAI Chat JSON, for the benchmark.

Each transcript is a system prompt followed by ``turns`` turns of: a user request,
an assistant message with 1-3 parallel ``tool_calls`` (JSON arguments), one tool
result per call (50 to 4,000 characters, log-uniform, shaped like file contents,
grep hits, shell output, JSON payloads, directory listings or doc excerpts) and an
assistant answer. The same ``(turns, seed)`` always gives the same bytes.

Usage: ``python bench/generate.py 100 1000 10000 [--seed N]`` prints the cached paths.
Files are cached under ``bench/.data/`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import string
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

#: Bump when the output for a given (turns, seed) changes, so stale caches are not reused.
GENERATOR_VERSION = 1
DEFAULT_SEED = 20240611
DATA_DIR = Path(__file__).resolve().parent / ".data"

MIN_RESULT_CHARS = 50
MAX_RESULT_CHARS = 4000


def _split(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_WORDS = _split(
    "the a an of to in for on with by from into over after before when while this that "
    "request response handler service client server cache index queue worker session "
    "token config value error retry timeout buffer stream record field schema table "
    "column user account order payment invoice report metric event message channel thread "
    "process file path module package function method class object instance parameter "
    "argument result update create delete fetch load save parse render validate compute "
    "resolve merge split returns raises expects handles stores reads writes checks builds "
    "calls uses keeps drops new old first last next previous current default optional "
    "required invalid missing large small fast slow stable pending active closed open "
    "empty full partial complete"
)
_IDENTS = _split(
    "user_id order_id retries max_items page_size cursor payload headers status_code "
    "elapsed_ms batch results items total offset limit config_path api_key_name region "
    "created_at updated_at owner_name checksum encoding chunk_size worker_count"
)
_DIRS = _split("src lib tests docs scripts app core api utils models services handlers config")
_EXTS = _split(".py .ts .go .rs .md .json .yaml .toml .sql .sh")
_TOOLS = ("read_file", "grep", "run_shell", "search_docs", "http_get", "list_dir")


def _words(rng: random.Random, lo: int, hi: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(rng.randint(lo, hi)))


def _sentence(rng: random.Random) -> str:
    text = _words(rng, 6, 18)
    return text[0].upper() + text[1:] + "."


def _paragraph(rng: random.Random, lo: int = 2, hi: int = 5) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(lo, hi)))


def _path(rng: random.Random) -> str:
    parts = [rng.choice(_DIRS) for _ in range(rng.randint(1, 3))]
    return "/".join(parts) + "/" + rng.choice(_IDENTS) + rng.choice(_EXTS)


def _code_line(rng: random.Random) -> str:
    indent = "    " * rng.randint(0, 3)
    kind = rng.randrange(6)
    a, b = rng.choice(_IDENTS), rng.choice(_IDENTS)
    if kind == 0:
        return (
            f"{indent}def {rng.choice(_WORDS)}_{a}(self, {b}: int = {rng.randint(0, 99)}) -> bool:"
        )
    if kind == 1:
        return f"{indent}{a} = {b}.get({rng.choice(_IDENTS)!r}, {rng.randint(0, 9999)})"
    if kind == 2:
        return f"{indent}if {a} is None or {a} > {rng.randint(1, 500)}:"
    if kind == 3:
        return f"{indent}return {a}"
    if kind == 4:
        return f"{indent}# {_words(rng, 4, 12)}"
    return f"{indent}self.{a}.append({b})"


def _result_read_file(rng: random.Random) -> Callable[[int], str]:
    return lambda n: f"{n:4d}  {_code_line(rng)}"


def _result_grep(rng: random.Random) -> Callable[[int], str]:
    return lambda n: f"{_path(rng)}:{rng.randint(1, 2000)}:{_code_line(rng).strip()}"


def _result_shell(rng: random.Random) -> Callable[[int], str]:
    levels = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")

    def line(n: int) -> str:
        if rng.random() < 0.3:
            ok = "PASSED" if rng.random() < 0.9 else "FAILED"
            return f"tests/test_{rng.choice(_IDENTS)}.py::test_{rng.choice(_WORDS)}_{n} {ok}"
        stamp = f"12:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}.{rng.randint(0, 999):03d}"
        return f"{stamp} {rng.choice(levels)} [{rng.choice(_IDENTS)}] {_words(rng, 4, 14)}"

    return line


def _result_docs(rng: random.Random) -> Callable[[int], str]:
    return lambda n: _paragraph(rng, 1, 3)


def _result_json(rng: random.Random) -> Callable[[int], str]:
    def line(n: int) -> str:
        item = {
            "id": f"{rng.choice(_IDENTS)}-{rng.randint(1000, 99999)}",
            "status": rng.choice(("ok", "pending", "failed", "retrying")),
            "value": round(rng.uniform(0, 1000), 3),
            "note": _words(rng, 2, 8),
        }
        return "  " + json.dumps(item) + ","

    return line


def _result_list_dir(rng: random.Random) -> Callable[[int], str]:
    def line(n: int) -> str:
        size = rng.randint(0, 250_000)
        return f"-rw-r--r--  1 dev dev {size:>8d}  {_path(rng)}"

    return line


_RESULT_SHAPES: dict[str, Callable[[random.Random], Callable[[int], str]]] = {
    "read_file": _result_read_file,
    "grep": _result_grep,
    "run_shell": _result_shell,
    "search_docs": _result_docs,
    "http_get": _result_json,
    "list_dir": _result_list_dir,
}


def _arguments(rng: random.Random, tool: str) -> dict[str, Any]:
    if tool == "read_file":
        return {"path": _path(rng), "start_line": rng.randint(1, 400), "max_lines": 200}
    if tool == "grep":
        return {"pattern": rng.choice(_IDENTS), "path": rng.choice(_DIRS), "ignore_case": True}
    if tool == "run_shell":
        cmd = rng.choice(("pytest -q", "make build", "git log --oneline -n 20", "ls -la"))
        return {"command": f"{cmd} {rng.choice(_DIRS)}", "timeout_s": 120}
    if tool == "search_docs":
        return {"query": _words(rng, 2, 6), "top_k": rng.randint(3, 10)}
    if tool == "http_get":
        return {"url": f"http://127.0.0.1:8080/api/{rng.choice(_IDENTS)}?page={rng.randint(1, 9)}"}
    return {"path": rng.choice(_DIRS), "recursive": rng.random() < 0.5}


def _result_size(rng: random.Random) -> int:
    lo, hi = math.log(MIN_RESULT_CHARS), math.log(MAX_RESULT_CHARS)
    return int(math.exp(rng.uniform(lo, hi)))


def _tool_result(rng: random.Random, tool: str) -> str:
    size = _result_size(rng)
    make_line = _RESULT_SHAPES[tool](rng)
    lines: list[str] = []
    length = 0
    n = 1
    while length <= size:  # the joined text is length - 1 characters long
        line = make_line(n)
        lines.append(line)
        length += len(line) + 1
        n += 1
    return "\n".join(lines)[:size]


def _call_id(rng: random.Random, used: set[str]) -> str:
    alphabet = string.ascii_letters + string.digits
    while True:
        cid = "call_" + "".join(rng.choices(alphabet, k=24))
        if cid not in used:
            used.add(cid)
            return cid


def generate_messages(turns: int, seed: int = DEFAULT_SEED) -> list[dict[str, Any]]:
    """A system prompt then ``turns`` turns of user, tool calls, tool results and an answer."""
    if turns < 0:
        raise ValueError("turns must be >= 0")
    rng = random.Random(seed)
    used: set[str] = set()
    system = (
        "You are a careful software engineering agent. Use the tools to inspect the "
        "repository before answering. " + " ".join(_paragraph(rng, 4, 6) for _ in range(4))
    )
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for _ in range(turns):
        messages.append({"role": "user", "content": _paragraph(rng, 1, 3)})
        tools = [rng.choice(_TOOLS) for _ in range(rng.randint(1, 3))]
        calls = [
            {
                "id": _call_id(rng, used),
                "type": "function",
                "function": {"name": tool, "arguments": json.dumps(_arguments(rng, tool))},
            }
            for tool in tools
        ]
        preface = _sentence(rng) if rng.random() < 0.4 else None
        messages.append({"role": "assistant", "content": preface, "tool_calls": calls})
        for call, tool in zip(calls, tools, strict=True):
            messages.append(
                {"role": "tool", "tool_call_id": call["id"], "content": _tool_result(rng, tool)}
            )
        answer = "\n\n".join(_paragraph(rng, 1, 4) for _ in range(rng.randint(1, 3)))
        messages.append({"role": "assistant", "content": answer})
    return messages


def transcript_path(turns: int, seed: int = DEFAULT_SEED, data_dir: Path = DATA_DIR) -> Path:
    return data_dir / f"synthetic_t{turns}_s{seed}_v{GENERATOR_VERSION}.json"


def ensure_transcript(turns: int, seed: int = DEFAULT_SEED, data_dir: Path = DATA_DIR) -> Path:
    """The cached transcript file for ``(turns, seed)``, generating it when missing."""
    path = transcript_path(turns, seed, data_dir)
    if path.is_file():
        return path
    data_dir.mkdir(parents=True, exist_ok=True)
    doc = {
        "source": "compactlens bench/generate.py (synthetic)",
        "messages": generate_messages(turns, seed),
        "meta": {"generator_version": GENERATOR_VERSION, "turns": turns, "seed": seed},
    }
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    tmp.replace(path)
    return path


def load_messages(path: Path) -> list[dict[str, Any]]:
    messages = json.loads(path.read_bytes())["messages"]
    if not isinstance(messages, list):
        raise ValueError(f"{path}: 'messages' is not a list")
    return messages


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("turns", type=int, nargs="+")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR)
    args = parser.parse_args(argv)
    for turns in args.turns:
        print(ensure_transcript(turns, args.seed, args.data_dir))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
