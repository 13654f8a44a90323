"""A hardened XML parser for OpenVINO IR files (standard library only).

OpenVINO IR never uses document type declarations, so any DTD is refused outright: that
closes entity expansion ("billion laughs", quadratic blow-up) and external entities (file or
network access) at the root, whatever the document's encoding. The check runs inside expat
(it sees the decoded document), plus a cheap pre-check on the raw text.

`parse(data)` returns an `xml.etree.ElementTree.Element` tree.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from xml.parsers import expat

from ...errors import ModelError, SecurityError

MAX_DEPTH = 512  # element nesting; IR nests 6 levels per loop body

_DECL = re.compile(rb"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


class _Refuse(Exception):
    """Raised from inside expat handlers; turned into `SecurityError` by `parse`."""


def parse(data: bytes | str, what: str = "XML") -> ET.Element:
    """Parse `data` (bytes or text) into an element tree, refusing DTDs and entities."""
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    m = _DECL.search(raw)
    if m:
        raise SecurityError(
            f"{what}: document type/entity declarations are not allowed in OpenVINO IR "
            f"(found '{m.group(0).decode('ascii', 'replace')}' at byte {m.start()})"
        )
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()
    depth = 0

    def refuse(kind: str):
        def handler(*args):
            raise _Refuse(kind)

        return handler

    def start(tag, attrs):
        nonlocal depth
        depth += 1
        if depth > MAX_DEPTH:
            raise _Refuse(f"element nesting deeper than {MAX_DEPTH}")
        builder.start(tag, attrs)

    def end(tag):
        nonlocal depth
        depth -= 1
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
    try:
        parser.Parse(raw, True)
    except _Refuse as e:
        raise SecurityError(f"{what}: refused: {e} (not allowed in OpenVINO IR)") from None
    except expat.ExpatError as e:
        raise ModelError(f"{what}: not well-formed XML: {e}") from None
    except (ValueError, LookupError) as e:  # an encoding expat cannot decode (UTF-7, ...)
        raise ModelError(f"{what}: the document's declared encoding cannot be read ({e}); "
                         "OpenVINO IR is UTF-8") from None
    root = builder.close()
    if root is None:
        raise ModelError(f"{what}: empty document")
    return root
