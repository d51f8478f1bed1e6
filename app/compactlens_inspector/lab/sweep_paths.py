"""Paths to the numeric parameters of a lab configuration: list, read and replace them.

A path is ``stages.<i>.<name>``, ``stages.<i>.trigger.n``, ``stages.<i>.target.n``,
``target.n`` or ``compact.<name>``; sweeps and suggested fixes use them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from compactlens_inspector.lab.lab_config import LabConfig
from compactlens_inspector.lab.stages import STAGE_TYPES
from compactlens_inspector.style.wording import param_words


def sweepable_parameters(config: LabConfig) -> list[tuple[str, str]]:
    """(path, label) of every numeric parameter a sweep can vary.

    Paths are ``stages.<i>.<name>``, ``stages.<i>.trigger.n``, ``stages.<i>.target.n``,
    ``target.n`` or ``compact.<name>``.
    """
    out: list[tuple[str, str]] = []
    if config.mode == "compact":
        for name in ("target_tokens", "keep_last_messages"):
            out.append((f"compact.{name}", f"compact(): {param_words(name)}"))
        return out
    for i, stage in enumerate(config.stages):
        kind = str(stage.get("type"))
        label = STAGE_TYPES[kind].label if kind in STAGE_TYPES else kind
        for key in ("trigger", "target"):
            t = stage.get(key)
            if isinstance(t, Mapping) and isinstance(t.get("n"), int):
                words = f"{key} threshold ({t.get('metric')})"
                out.append((f"stages.{i}.{key}.n", f"{i + 1}. {label}: {words}"))
        spec = STAGE_TYPES.get(kind)
        for p in spec.params if spec else ():
            if p.kind == "int" or (p.kind == "optional_int" and stage.get(p.name) is not None):
                words = param_words(p.name, kind)
                out.append((f"stages.{i}.{p.name}", f"{i + 1}. {label}: {words}"))
    if config.target is not None and isinstance(config.target.get("n"), int):
        out.append(("target.n", f"pipeline target threshold ({config.target.get('metric')})"))
    return out


def get_path(config: LabConfig, path: str) -> Any:
    """The value at a sweep path (see :func:`sweepable_parameters`)."""
    data: Any = config.to_dict()
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data.get(part)
        if data is None:
            return None
    return data


def with_value(config: LabConfig, path: str, value: Any) -> LabConfig:
    """A copy of ``config`` with the value at ``path`` replaced (nothing is mutated)."""
    data = json.loads(json.dumps(config.to_dict()))
    parts = path.split(".")
    node: Any = data
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return LabConfig.from_dict(data)
