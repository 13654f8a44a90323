"""Small ONNX models, each with one loop feature some target refuses (or none)."""

from __future__ import annotations

import onnx
from onnx import helper as h

from onnx_builders import I64, B, F, body, const, model, vi


def counted_loop(n: int = 3, scan_output: bool = True, static: bool = True) -> onnx.ModelProto:
    """for k < n (a constant): x = x * 0.5 + 1, optionally also stacking x (scan output)."""
    outs = [vi("cond_out", B, []), vi("x_out", F, [2])] + ([vi("s", F, [2])] if scan_output
                                                           else [])
    nodes = [h.make_node("Identity", ["cond"], ["cond_out"]),
             h.make_node("Mul", ["x_in", "half"], ["m"]),
             h.make_node("Add", ["m", "one"], ["x_out"])]
    if scan_output:
        nodes.append(h.make_node("Identity", ["x_out"], ["s"]))
    b = body(nodes, [vi("i", I64, []), vi("cond", B, []), vi("x_in", F, [2])], outs,
             [const("half", [0.5, 0.5], "float32"), const("one", [1.0, 1.0], "float32")])
    loop_outs = ["y"] + (["ys"] if scan_output else [])
    return model([h.make_node("Loop", ["n", "", "x"], loop_outs, body=b, name="counted")],
                 [vi("x", F, [2] if static else ["N"])],
                 [vi("y", F, [2])] + ([vi("ys", F, [n, 2])] if scan_output else []),
                 [const("n", n, "int64")])


def while_loop_with_scan_output() -> onnx.ModelProto:
    """while sum(x) < 10: x = x + 1, stacking x: a count known only at run time."""
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("ReduceSum", ["x_out"], ["t"], keepdims=0),
              h.make_node("Less", ["t", "ten"], ["cond_out"]),
              h.make_node("Identity", ["x_out"], ["s"])],
             [vi("i", I64, []), vi("cond", B, []), vi("x_in", F, [2])],
             [vi("cond_out", B, []), vi("x_out", F, [2]), vi("s", F, [2])],
             [const("one", [1.0, 1.0], "float32"), const("ten", 10.0, "float32")])
    return model([h.make_node("Loop", ["", "c0", "x"], ["y", "ys"], body=b, name="grow_while")],
                 [vi("x", F, [2])], [vi("y", F, [2]), vi("ys", F, [None, 2])],
                 [const("c0", True)])


def growing_carried_loop() -> onnx.ModelProto:
    """for k < 3: acc = concat(acc, x) - the carried value grows every iteration."""
    b = body([h.make_node("Identity", ["cond"], ["cond_out"]),
              h.make_node("Concat", ["acc", "x"], ["acc_out"], axis=0)],
             [vi("i", I64, []), vi("cond", B, []), vi("acc", F, [None])],
             [vi("cond_out", B, []), vi("acc_out", F, [None])])
    return model([h.make_node("Loop", ["n", "", "x"], ["y"], body=b, name="grower")],
                 [vi("x", F, [2])], [vi("y", F, [None])], [const("n", 3, "int64")])


def sequence_loop() -> onnx.ModelProto:
    """for k < 3: seq.append(x): a sequence carried by the loop."""
    b = body([h.make_node("Identity", ["cond"], ["cond_out"]),
              h.make_node("SequenceInsert", ["seq", "x"], ["seq_out"])],
             [vi("i", I64, []), vi("cond", B, []),
              h.make_tensor_sequence_value_info("seq", F, [2])],
             [vi("cond_out", B, []), h.make_tensor_sequence_value_info("seq_out", F, [2])])
    return model([h.make_node("SequenceEmpty", [], ["s0"], dtype=F),
                  h.make_node("Loop", ["n", "", "s0"], ["seq"], body=b, name="appender"),
                  h.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0, new_axis=1)],
                 [vi("x", F, [2])], [vi("y", F, [3, 2])], [const("n", 3, "int64")])


def scan_model(length: int = 4) -> onnx.ModelProto:
    """A running sum over the rows of xs (Scan-9)."""
    b = body([h.make_node("Add", ["acc", "row"], ["acc_out"]),
              h.make_node("Identity", ["acc_out"], ["y_row"])],
             [vi("acc", F, [2]), vi("row", F, [2])], [vi("acc_out", F, [2]), vi("y_row", F, [2])])
    return model([h.make_node("Scan", ["a0", "xs"], ["acc", "ys"], body=b, num_scan_inputs=1,
                              name="running_sum")],
                 [vi("a0", F, [2]), vi("xs", F, [length, 2])],
                 [vi("acc", F, [2]), vi("ys", F, [length, 2])])


def loop_without_count_or_condition() -> onnx.ModelProto:
    """A Loop with neither M nor cond: it ends only when the body's condition turns false."""
    b = body([h.make_node("Add", ["x_in", "one"], ["x_out"]),
              h.make_node("ReduceSum", ["x_out"], ["t"], keepdims=0),
              h.make_node("Less", ["t", "ten"], ["cond_out"])],
             [vi("i", I64, []), vi("cond", B, []), vi("x_in", F, [2])],
             [vi("cond_out", B, []), vi("x_out", F, [2])],
             [const("one", [1.0, 1.0], "float32"), const("ten", 10.0, "float32")])
    return model([h.make_node("Loop", ["", "", "x"], ["y"], body=b, name="bare_while")],
                 [vi("x", F, [2])], [vi("y", F, [2])])


def runtime_count_loop() -> onnx.ModelProto:
    """for k < n with n a graph input."""
    b = body([h.make_node("Identity", ["cond"], ["cond_out"]),
              h.make_node("Add", ["x_in", "x_in"], ["x_out"])],
             [vi("i", I64, []), vi("cond", B, []), vi("x_in", F, [2])],
             [vi("cond_out", B, []), vi("x_out", F, [2])])
    return model([h.make_node("Loop", ["n", "", "x"], ["y"], body=b, name="n_times")],
                 [vi("x", F, [2]), vi("n", I64, [])], [vi("y", F, [2])])


def if_rank_mismatch() -> onnx.ModelProto:
    """If c: y = x (rank 1) else y = reshape(x, [1, 2]) (rank 2); valid ONNX (If-16 lets
    the branches' shapes differ), written without the full checker's shape merge."""
    then = body([h.make_node("Identity", ["x"], ["a"])], [], [vi("a", F, [2])], name="then")
    other = body([h.make_node("Reshape", ["x", "shape12"], ["b"])], [], [vi("b", F, [1, 2])],
                 [const("shape12", [1, 2], "int64")], name="else")
    g = h.make_graph([h.make_node("If", ["c"], ["y"], then_branch=then, else_branch=other,
                                  name="pick")], "g", [vi("c", B, []), vi("x", F, [2])],
                     [h.make_value_info("y", h.make_tensor_type_proto(F, None))])
    return h.make_model(g, opset_imports=[h.make_opsetid("", 21)], ir_version=10)


def rank_changing_carry(declared=(3,), branches: str = "unsqueeze-sum") -> onnx.ModelProto:
    """for i < n: z = unsqueeze(z, 0) * 2 if i is even else sum(z, 0) - 1 (``branches`` =
    ``"unsqueeze-sum"``): the carried z is 1-D, 2-D, 1-D ... and the body declares it
    `declared`. ``"unsqueeze"``: z = unsqueeze(z, 0) with no If (rank 1, 2, 3, ...);
    ``"concat"``: z = concat(z, z) or z * 2 in an If (the rank stays, the length grows)."""
    ax = const("ax", [0], "int64")
    keep = [h.make_node("Identity", ["cond"], ["cond_out"])]
    if branches == "unsqueeze":
        nodes = keep + [h.make_node("Unsqueeze", ["z", "ax"], ["z_out"])]
    else:
        if branches == "unsqueeze-sum":
            then = body([h.make_node("Unsqueeze", ["z", "ax"], ["u"]),
                         h.make_node("Add", ["u", "u"], ["t_out"])], [], [vi("t_out", F, None)])
            other = body([h.make_node("ReduceSum", ["z", "ax"], ["r"], keepdims=0),
                          h.make_node("Sub", ["r", "one"], ["e_out"])], [],
                         [vi("e_out", F, None)], [const("one", 1.0, "float32")])
        else:
            then = body([h.make_node("Concat", ["z", "z"], ["t_out"], axis=0)], [],
                        [vi("t_out", F, None)])
            other = body([h.make_node("Add", ["z", "z"], ["e_out"])], [], [vi("e_out", F, None)])
        nodes = keep + [h.make_node("Mod", ["i", "two"], ["m"]),
                        h.make_node("Equal", ["m", "zero"], ["even"]),
                        h.make_node("If", ["even"], ["z_out"], then_branch=then,
                                    else_branch=other, name="alternate")]
    b = body(nodes, [vi("i", I64, []), vi("cond", B, []),
                     vi("z", F, None if declared is None else list(declared))],
             [vi("cond_out", B, []), vi("z_out", F, None)],
             [ax, const("two", 2, "int64"), const("zero", 0, "int64")])
    return model([h.make_node("Loop", ["n", "", "x"], ["y"], body=b, name="reshaper")],
                 [vi("x", F, [3]), vi("n", I64, [])], [vi("y", F, ["y0"])], opset=17)
