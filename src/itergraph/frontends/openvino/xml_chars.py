"""Control characters in OpenVINO IR names.

ONNX names may hold any character, control characters included (ONNX Runtime and OpenVINO
read them). XML 1.0 has no way to write U+0001-U+001F other than tab, newline and carriage
return, not even as a character reference, yet OpenVINO's IR serializer writes them as
references (``&#27;``) and its parser (pugixml) reads those and raw ones alike. So:

- the IR writer writes such characters as references, as OpenVINO does (`escape_controls`),
  and refuses a tensor name holding NUL (`nul_text`): OpenVINO's own parser refuses a raw NUL
  and its writer cuts a name at one;
- the reader accepts them, raw or as references, as OpenVINO does (`ControlShield`): expat,
  a strict XML 1.0 parser, would refuse the document.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

_CONTROLS = [c for c in range(1, 32) if c not in (9, 10, 13)]
_CODES = frozenset(_CONTROLS)
_RAW = re.compile(b"[" + b"".join(re.escape(bytes([c])) for c in _CONTROLS) + b"]")
_REF = re.compile(rb"&#(?:([0-9]{1,8})|x([0-9a-fA-F]{1,8}));")
_MAX_REF = 13  # bytes of the longest reference ``&#x0010FF1F;``
_DECLARED = re.compile(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([^"']*)["']""")
# The reader puts a private-use character expat accepts, U+10FF00 + the code, in place of each
# control character, and turns it back once parsed. The document's own U+10FF00-U+10FF1F
# become two characters, U+10FF00 and U+10FF20 + k, so that every stand-in reads back.
_BASE, _SHIFT = 0x10FF00, 0x20
_NATIVE = re.compile(rb"\xf4\x8f\xbc[\x80-\x9f]")  # U+10FF00-U+10FF1F in UTF-8
_NATIVE_HEADS = (b"\xf4\x8f\xbc", b"\xf4\x8f", b"\xf4")  # one cut by a chunk's end
_STAND_INS = re.compile("\U0010ff00[\U0010ff20-\U0010ff3f]|[\U0010ff01-\U0010ff1f]")


def escape_controls(xml: bytes) -> bytes:
    """`xml` (UTF-8) with every control character XML 1.0 cannot hold written as a reference.
    A control byte is never part of a multi-byte UTF-8 sequence."""
    return _RAW.sub(lambda m: b"&#%d;" % m.group(0)[0], xml)


def escape_nul_in_labels(net: ET.Element) -> None:
    """The names of `net` and of its layers (labels only) with each NUL written ``\\x00``."""
    for el in [net, *net.iter("layer")]:
        if "\0" in el.get("name", ""):
            el.set("name", el.get("name").replace("\0", "\\x00"))


def nul_text(net: ET.Element) -> tuple[ET.Element, str, str] | None:
    """The first layer of `net` (bodies included) with a NUL in one of its attributes (a
    port's ``names``, a ``data`` attribute...), with what holds it and the text; None when
    there is none. Run it after `escape_nul_in_labels`."""
    for layer in net.iter("layer"):
        for el in layer.iter():
            for key, text in el.attrib.items():
                if "\0" in text:
                    what = "the tensor name" if key == "names" else f"{el.tag} attribute '{key}'"
                    return layer, what, text
    return None


class ControlShield:
    """Makes a document's control characters (raw, or references) pass expat, and gives
    them back in the parsed text. `feed` takes the document chunk by chunk, `close` returns
    what it held back (a reference or character cut by a chunk's end); `text` restores a
    parsed string. Only a UTF-8 document is touched (OpenVINO IR is UTF-8; in UTF-16 a byte
    of 1 is no control character)."""

    def __init__(self):
        self.active: bool | None = None  # decided by the document's first bytes
        self.pending = b""
        self.used = False  # a stand-in was made

    def feed(self, chunk: bytes) -> bytes:
        if self.active is None and chunk:
            self.active = _is_utf8(chunk)
        if not self.active:
            return chunk
        data = self.pending + chunk
        cut = len(data)
        amp = data.rfind(b"&", max(0, len(data) - _MAX_REF))
        if amp >= 0 and b";" not in data[amp:]:
            cut = amp
        for head in _NATIVE_HEADS:
            if data.endswith(head):
                cut = min(cut, len(data) - len(head))
                break
        data, self.pending = data[:cut], data[cut:]
        return self._shield(data)

    def close(self) -> bytes:
        data, self.pending = self.pending, b""
        return self._shield(data) if self.active else data

    def _shield(self, data: bytes) -> bytes:
        data = _NATIVE.sub(lambda m: self._native(m.group(0)[3] - 0x80), data)
        data = _RAW.sub(lambda m: self._stand_in(m.group(0)[0]), data)
        return _REF.sub(self._ref, data)

    def _ref(self, m: re.Match) -> bytes:
        code = int(m.group(1)) if m.group(1) else int(m.group(2), 16)
        if code in _CODES:
            return self._stand_in(code)
        if _BASE <= code < _BASE + _SHIFT:
            return self._native(code - _BASE)
        return m.group(0)

    def _stand_in(self, code: int) -> bytes:
        self.used = True
        return chr(_BASE + code).encode()

    def _native(self, k: int) -> bytes:
        self.used = True
        return (chr(_BASE) + chr(_BASE + _SHIFT + k)).encode()

    def text(self, s: str) -> str:
        """`s` with its stand-ins turned back into the characters they stand for."""
        if not self.used:
            return s
        return _STAND_INS.sub(_back, s)


def _back(m: re.Match) -> str:
    t = m.group(0)
    return chr(ord(t[1]) - _SHIFT) if len(t) == 2 else chr(ord(t) - _BASE)


def _is_utf8(head: bytes) -> bool:
    """Whether a document starting with `head` is UTF-8: no NUL among its first bytes (UTF-16
    and UTF-32 have them) and no other encoding declared."""
    if head.startswith(b"\xef\xbb\xbf"):
        head = head[3:]
    if b"\0" in head[:4]:
        return False
    m = _DECLARED.match(head)
    return m is None or m.group(1).lower() in (b"utf-8", b"utf8")
