"""A hardened, streaming XML parser for OpenVINO IR files (standard library only).

OpenVINO IR never uses document type declarations, so any DTD is refused outright: that
closes entity expansion ("billion laughs", quadratic blow-up) and external entities (file or
network access) at the root, whatever the document's encoding. The check runs inside expat
(it sees the decoded document), plus a cheap pre-check on the raw bytes of each chunk.

`parse(source, what, builder)` feeds the document to expat chunk by chunk (the whole text is
never held, nor a second copy of it) and hands the events to `builder`, an object with the
methods of `xml.etree.ElementTree.TreeBuilder` (``start``, ``end``, ``data``, ``close``); it
returns ``builder.close()``. The default builder makes an element tree.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from xml.parsers import expat

from ...errors import ModelError, SecurityError
from .xml_chars import ControlShield

MAX_DEPTH = 512  # element nesting; IR nests 6 levels per loop body
CHUNK = 1 << 20  # bytes fed to expat at a time

_DECL = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_OVERLAP = 64  # bytes of the previous chunk the pre-check sees again (a split declaration)


class _Refuse(Exception):
    """Raised from inside expat handlers; turned into `SecurityError` by `parse`."""


def chunks_of(data: bytes | bytearray | memoryview | str) -> Iterable[bytes]:
    """An in-memory document as chunks (text is encoded as UTF-8)."""
    raw = memoryview(data.encode("utf-8") if isinstance(data, str) else data)
    for start in range(0, len(raw), CHUNK):
        yield bytes(raw[start:start + CHUNK])


def parse(source: bytes | str | Iterable[bytes], what: str = "XML", builder=None):
    """Parse `source` (the document, or an iterable of its chunks in order) through
    `builder` (default: an element tree), refusing DTDs and entities; returns
    ``builder.close()``, the root element."""
    in_memory = isinstance(source, bytes | bytearray | memoryview | str)
    chunks = chunks_of(source) if in_memory else source
    builder = ET.TreeBuilder() if builder is None else builder
    parser = expat.ParserCreate()
    shield = ControlShield()  # control characters, as OpenVINO reads them
    depth = 0
    layers: list[str] = []  # the layers open and the last one closed, for error messages
    closed: list[str] = []

    def refuse(kind: str):
        def handler(*args):
            raise _Refuse(kind)

        return handler

    def start(tag, attrs):
        nonlocal depth
        depth += 1
        if depth > MAX_DEPTH:
            raise _Refuse(f"element nesting deeper than {MAX_DEPTH}")
        if shield.used:
            attrs = {k: shield.text(v) for k, v in attrs.items()}
        if tag == "layer":
            layers.append(f"layer '{attrs.get('name', '')}' (id {attrs.get('id', '?')})")
        builder.start(tag, attrs)

    def end(tag):
        nonlocal depth
        depth -= 1
        if tag == "layer":
            closed[:] = [layers.pop()]
        builder.end(tag)

    parser.StartDoctypeDeclHandler = refuse("document type declaration")
    parser.EntityDeclHandler = refuse("entity declaration")
    parser.UnparsedEntityDeclHandler = refuse("unparsed entity declaration")
    parser.ExternalEntityRefHandler = refuse("external entity reference")
    parser.NotationDeclHandler = refuse("notation declaration")
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True

    def parse_chunk(data: bytes, final: bool) -> None:
        if shield.used:  # from here on, text may hold stand-ins
            parser.CharacterDataHandler = lambda text: builder.data(shield.text(text))
        parser.Parse(data, final)

    offset, tail = 0, b""
    try:
        for chunk in chunks:
            _precheck(tail + chunk, offset - len(tail), what)
            parse_chunk(shield.feed(chunk), False)
            offset += len(chunk)
            tail = chunk[-_OVERLAP:]
        parse_chunk(shield.close(), True)
    except _Refuse as e:
        raise SecurityError(f"{what}: refused: {e} (not allowed in OpenVINO IR)") from None
    except expat.ExpatError as e:
        where = f" (inside {layers[-1]})" if layers else \
            f" (after {closed[-1]})" if closed else ""
        raise ModelError(f"{what}: not well-formed XML: {e}{where}") from None
    except (ValueError, LookupError) as e:  # an encoding expat cannot decode (UTF-7, ...)
        raise ModelError(f"{what}: the document's declared encoding cannot be read ({e}); "
                         "OpenVINO IR is UTF-8") from None
    root = builder.close()
    if root is None:
        raise ModelError(f"{what}: empty document")
    return root


def _precheck(raw: bytes, offset: int, what: str) -> None:
    m = _DECL.search(raw)
    if m:
        raise SecurityError(
            f"{what}: document type/entity declarations are not allowed in OpenVINO IR "
            f"(found '{m.group(0).decode('ascii', 'replace')}' at byte {offset + m.start()})"
        )
