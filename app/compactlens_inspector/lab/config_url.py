"""A lab configuration as a short URL-safe text (the ``cfg`` query parameter)."""

from __future__ import annotations

import base64
import json
import zlib

from compactlens_inspector.lab.lab_config import LabConfig


def encode_config(config: LabConfig) -> str:
    """A short URL-safe text for a configuration (zlib + base64url of its JSON)."""
    raw = json.dumps(config.to_dict(), separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(zlib.compress(raw, 9)).decode().rstrip("=")


def decode_config(text: str) -> LabConfig:
    """Inverse of :func:`encode_config`; ``ValueError`` on anything malformed."""
    if len(text) > 8000:
        raise ValueError("configuration text is too long")
    try:
        padded = text + "=" * (-len(text) % 4)
        raw = zlib.decompress(base64.urlsafe_b64decode(padded.encode()), bufsize=65536)
        data = json.loads(raw)
    except Exception as exc:  # any decoding problem is a bad link
        raise ValueError(f"the configuration in the link cannot be read ({exc})") from None
    return LabConfig.from_dict(data)
