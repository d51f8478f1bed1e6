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


#: The most a link's configuration may unpack to: far above any real configuration (a
#: pipeline of a few stages is under 2 KB), far below what a crafted link could unpack to.
MAX_UNPACKED = 64 * 1024


def decode_config(text: str) -> LabConfig:
    """Inverse of :func:`encode_config`; ``ValueError`` on anything malformed, and on a
    link that unpacks to more than :data:`MAX_UNPACKED` bytes (inflated only that far)."""
    if len(text) > 8000:
        raise ValueError("configuration text is too long")
    try:
        padded = text + "=" * (-len(text) % 4)
        inflate = zlib.decompressobj()
        raw = inflate.decompress(base64.urlsafe_b64decode(padded.encode()), MAX_UNPACKED)
        too_large = bool(inflate.unconsumed_tail)
        if not too_large:
            raw += inflate.flush()
            if not inflate.eof:
                raise ValueError("the compressed text is incomplete")
    except Exception as exc:  # any decoding problem is a bad link
        raise ValueError(f"the configuration in the link cannot be read ({exc})") from None
    if too_large or len(raw) > MAX_UNPACKED:
        raise ValueError(
            f"the configuration in the link unpacks to more than {MAX_UNPACKED // 1024} KB"
        )
    try:
        data = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"the configuration in the link cannot be read ({exc})") from None
    return LabConfig.from_dict(data)
