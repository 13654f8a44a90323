"""Names in an ONNX file are text.

Protobuf declares every ``string`` field UTF-8; a file whose bytes there are not (overwritten,
or written by a tool that does not check) reaches Python as ``bytes``, which no name lookup,
error message or writer can use. ONNX Runtime loads such a node name or intermediate tensor
name (it never decodes them) but its Python API fails on a graph input or output so named;
OpenVINO's ONNX frontend behaves the same. itergraph refuses every such name at load with a
`ModelError` naming the node (or graph) and the field. Names holding NUL or other control
characters are valid UTF-8: they are read as they are, as both peers read them. Free text that
names nothing (the model's ``doc_string``, producer, ``metadata_props``) is read with each byte
that is not UTF-8 written ``\\xNN`` (`as_text`), so that the writers can write it back.
"""

from __future__ import annotations

import onnx

from ...errors import ModelError


def _label(p: onnx.NodeProto) -> str:
    op = p.op_type if isinstance(p.op_type, str) else repr(p.op_type)
    name = p.name if isinstance(p.name, str) else repr(p.name)[2:-1]  # b'..' -> ..
    return f"{op} node '{name or '<unnamed>'}'"


def _refuse(owner: str, field: str, text: bytes) -> None:
    raise ModelError(f"{owner}: {field} {text!r} is not valid UTF-8 (ONNX names are protobuf "
                     "strings, which must be)")


def check_node_text(p: onnx.NodeProto) -> None:
    """Raise `ModelError` naming `p` where its op type,
    domain, name, an input or output name, or an attribute name is not valid UTF-8."""
    fields = [("op_type", p.op_type), ("domain", p.domain), ("name", p.name)]
    fields += [(f"input {i}", n) for i, n in enumerate(p.input)]
    fields += [(f"output {i}", n) for i, n in enumerate(p.output)]
    fields += [("attribute name", a.name) for a in p.attribute]
    for field, text in fields:
        if not isinstance(text, str):
            _refuse(_label(p), f"its {field}", text)


def check_graph_text(gp: onnx.GraphProto) -> None:
    """Raise `ModelError` where `gp`'s name, or the name of one of its inputs, outputs,
    initializers or ``value_info`` entries, is not valid UTF-8 (its nodes: `check_node_text`)."""
    if not isinstance(gp.name, str):
        _refuse("graph", "its name", gp.name)
    owner = f"graph '{gp.name}'"
    lists = [("input", gp.input), ("output", gp.output), ("value_info entry", gp.value_info),
             ("initializer", gp.initializer)]
    for kind, entries in lists:
        for i, e in enumerate(entries):
            if not isinstance(e.name, str):
                _refuse(owner, f"{kind} {i}'s name", e.name)
    for i, st in enumerate(gp.sparse_initializer):
        if not isinstance(st.values.name, str):
            _refuse(owner, f"sparse initializer {i}'s name", st.values.name)


def as_text(s: str | bytes) -> str:
    """Free text of the file as ``str``: bytes that are not UTF-8 written ``\\xNN``."""
    return s if isinstance(s, str) else s.decode("utf-8", "backslashreplace")
