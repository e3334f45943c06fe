"""Text decoding that never crashes: UTF-8 first, BOM-aware, then single-byte fallbacks.

A file decoded here can be written back byte for byte: :class:`Decoded` remembers the encoding
and the byte-order mark, and :func:`encode` re-applies both.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
SNIFF_BYTES = 8192
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_BINARY_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"%PDF", "PDF document"),
    (b"PK\x03\x04", "zip archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\x1f\x8b", "gzip archive"),
    (b"SQLite format 3", "SQLite database"),
)


@dataclass(frozen=True)
class Decoded:
    """A decoded file: its text, the encoding and BOM to write it back with."""

    text: str
    encoding: str
    bom: bytes = b""
    lossless: bool = True

    @property
    def label(self) -> str:
        """A short human name, e.g. ``utf-8``, ``utf-8 with BOM``, ``cp1251``."""
        return f"{self.encoding} with BOM" if self.bom else self.encoding


def bom_encoding(data: bytes) -> tuple[bytes, str] | None:
    """The BOM at the start of ``data`` and its encoding, or ``None``."""
    for bom, name in BOMS:
        if data.startswith(bom):
            return bom, name
    return None


def binary_kind(head: bytes) -> str | None:
    """What kind of binary file ``head`` (the first bytes) starts, or ``None`` for text."""
    if bom_encoding(head) is not None:
        return None
    for signature, kind in _BINARY_SIGNATURES:
        if head.startswith(signature):
            return kind
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "WebP image"
    sample = head[:SNIFF_BYTES]
    if b"\x00" in sample:
        return "binary data"
    if sample:
        controls = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 12, 13, 27))
        if controls / len(sample) > 0.3:
            return "binary data"
    return None


def _cookie_encoding(data: bytes) -> str | None:
    head = b"\n".join(data[:1024].splitlines()[:2])
    match = _COOKIE.search(head)
    if not match:
        return None
    try:
        return codecs.lookup(match.group(1).decode("ascii")).name
    except (LookupError, UnicodeDecodeError):
        return None


def _looks_cyrillic(data: bytes) -> bool:
    high = [byte for byte in data if byte >= 0x80]
    if not high:
        return False
    letters = sum(1 for byte in high if byte >= 0xC0 or byte in (0xA8, 0xB8))
    runs = re.findall(rb"[\xc0-\xff]{3,}", data)
    return letters / len(high) >= 0.8 and len(runs) >= 1


def _try(data: bytes, encoding: str) -> str | None:
    try:
        return data.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None


def decode(data: bytes) -> Decoded:
    """Decode file bytes: BOM, UTF-8, a coding cookie, cp1251 (if it looks Cyrillic), latin-1."""
    found = bom_encoding(data)
    if found is not None:
        bom, name = found
        text = _try(data[len(bom) :], name)
        if text is not None:
            return Decoded(text, name, bom)
        return Decoded(data[len(bom) :].decode(name, "replace"), name, bom, lossless=False)
    text = _try(data, "utf-8")
    if text is not None:
        return Decoded(text, "utf-8")
    cookie = _cookie_encoding(data)
    if cookie and cookie not in ("utf-8",):
        text = _try(data, cookie)
        if text is not None and text.encode(cookie) == data:
            return Decoded(text, cookie)
    if _looks_cyrillic(data):
        text = _try(data, "cp1251")
        if text is not None:
            return Decoded(text, "cp1251")
    return Decoded(data.decode("latin-1"), "latin-1")


def sniff_stream_encoding(head: bytes) -> tuple[str, bytes]:
    """Pick the encoding for streaming a huge file from its first bytes: ``(encoding, bom)``.

    Only ASCII-compatible encodings can be streamed line by line; UTF-16/32 return their name
    and the caller decides.
    """
    found = bom_encoding(head)
    if found is not None:
        bom, name = found
        return name, bom
    try:
        head.decode("utf-8")
        return "utf-8", b""
    except UnicodeDecodeError as exc:
        if exc.start >= len(head) - 4:  # a character cut at the end of the sample
            return "utf-8", b""
    cookie = _cookie_encoding(head)
    if cookie:
        return cookie, b""
    return ("cp1251" if _looks_cyrillic(head) else "latin-1"), b""


def encode(text: str, decoded: Decoded) -> bytes:
    """Encode ``text`` the way ``decoded`` was read (same encoding, same BOM).

    Raises :class:`UnicodeEncodeError` when ``text`` has characters the encoding cannot hold.
    """
    return decoded.bom + text.encode(decoded.encoding)


def newline_style(text: str) -> str:
    """``"\\r\\n"`` if the text mostly uses CRLF line endings, else ``"\\n"``."""
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    return "\r\n" if crlf > lf else "\n"
