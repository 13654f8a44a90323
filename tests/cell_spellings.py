"""Recurrent cells written as ONNX Scan/Loop bodies in many spellings (for the fuse_cells tests).

`build(**options)` returns ``(model, feeds)``: an LSTM, GRU or RNN over ``X [T, B, I]`` with
random weights, whose outputs are ``Y`` (every new hidden state) and the final states. ONNX
Runtime runs every spelling, so it is the oracle. Options:

- ``cell``: "lstm", "gru", "rnn";
- ``product``: "matmul" (``x @ W^T``), "gemm" (``Gemm(x, W, b, transB=1)``), "gemm_alpha"
  (``Gemm(x, 2 W^T, b / 2, alpha=0.5, beta=2)``), "concat" (``concat([x, h]) @ K``, LSTM and
  RNN), "per_gate" (one pair of products per gate);
- ``gates``: "split" (Split with sizes), "split18" (Split with num_outputs), "slice";
- ``order``: gate order (LSTM letters i, o, f, c; GRU z, r, h);
- ``bias``: 0 (none), 1 (one combined bias), 2 (input and recurrent biases apart);
- ``clip``: a threshold applied before every activation, or None;
- ``loop``: "scan", "scan_reverse" (input read backwards), "scan_out_reverse", "scan_axis1"
  (batch-first X and Y), "loop_gather" (Loop over ``Gather(X, i)``, trip count input M),
  "loop_list" (the same appending each h to a list, stacked after the loop, as torch.onnx
  writes ``outputs.append(h)``);
- GRU: ``lbr`` (linear_before_reset) and ``update``: "std" ``(1-z) n + z h``, "torch"
  ``n + z (h - n)``, "u" ``u n + (1 - u) h``;
- LSTM: ``peephole``, ``couple`` (f = 1 - i), ``f_act`` (the gates' activation);
- ``mask``: Keras masking as tf2onnx and OpenVINO write it: a boolean step input ``M [T, B,
  1]`` selects every state, ``Where(m, new, old)`` ("where") or ``Cast(m) * new +
  Cast(Not(m)) * old`` ("cast"); with ``mask_output`` also a carried output ``o`` (initial
  value ``O0``) that takes the new h where the mask holds and is the scan output, with
  ``mask_output="fill"`` a scan output that is the new h where the mask holds and a constant
  elsewhere (loops "scan", "scan_reverse", "loop_gather");
- ``extra``: a deliberate difference: "gate_output" (a gate is also a scan output),
  "mixed_act" (one gate with another activation), "gate_twice" (c' adds i once more),
  "c_output" (c concatenated), "x_squared" (x * x enters the gates), "counter" (an extra
  carried counter).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as h

F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
ONNX_ORDER = {"lstm": "iofc", "gru": "zrh", "rnn": "h"}


def build(cell="lstm", product="matmul", gates="split", order=None, bias=2, clip=None,
          loop="scan", lbr=1, update="std", peephole=False, couple=False, f_act="Sigmoid",
          extra=None, mask=None, mask_output=False, B=2, T=4, I=3, H=5, seed=0):
    rng = np.random.default_rng(seed)
    order = order or ONNX_ORDER[cell]
    G = len(order)
    w = {g: (rng.standard_normal((I, H)) / np.sqrt(I)).astype(np.float32) for g in order}
    r = {g: (rng.standard_normal((H, H)) / np.sqrt(H)).astype(np.float32) for g in order}
    wb = {g: (rng.standard_normal(H) * 0.3).astype(np.float32) for g in order}
    rb = {g: (rng.standard_normal(H) * 0.3).astype(np.float32) for g in order}
    inits: dict[str, np.ndarray] = {"one": np.array(1.0, np.float32)}
    nodes: list = []
    n = [0]

    def op(kind, ins, **attrs):
        n[0] += 1
        out = f"{kind.lower()}_{n[0]}"
        nodes.append(h.make_node(kind, ins, [out], **attrs))
        return out

    def const(name, value):
        inits[name] = np.asarray(value)
        return name

    def cat(d):
        return np.concatenate([d[g] for g in order], axis=-1)

    def gate_parts(src):
        if G == 1:
            return {order[0]: src}
        outs = [f"{src}_{g}" for g in order]
        if gates == "split":
            nodes.append(h.make_node("Split", [src, const(f"sizes{G}", [H] * G)], outs, axis=1))
        elif gates == "split18":
            nodes.append(h.make_node("Split", [src], outs, axis=-1, num_outputs=G))
        else:
            for k, o in enumerate(outs):
                nodes.append(h.make_node("Slice", [src, const(f"s{k}", [k * H]),
                                                   const(f"e{k}", [(k + 1) * H]),
                                                   const("axm1", [-1])], [o]))
        return dict(zip(order, outs))

    xb = {g: wb[g] + (rb[g] if bias == 1 else 0) for g in order}

    def x_rows(x):  # {gate: x part of the pre-activation}, biases per `bias`
        if product == "per_gate":
            return {g: op("MatMul", [x, const(f"W{g}", w[g])]) for g in order}
        if product == "gemm":
            args = [x, const("Wg", cat(w).T.copy())] + ([const("Wb", cat(xb))] if bias else [])
            return gate_parts(op("Gemm", args, transB=1))
        if product == "gemm_alpha":
            args = [x, const("W2", 2 * cat(w))] + ([const("Wb2", cat(xb) / 2)] if bias else [])
            return gate_parts(op("Gemm", args, alpha=0.5, beta=2.0))
        v = op("MatMul", [x, const("W", cat(w))])
        return gate_parts(op("Add", [v, const("Wb", cat(xb))]) if bias else v)

    def h_rows(hv):
        if product == "per_gate":
            return {g: op("MatMul", [hv, const(f"R{g}", r[g])]) for g in order}
        if product == "gemm":
            args = [hv, const("Rg", cat(r).T.copy())] + (
                [const("Rb", cat(rb))] if bias == 2 else [])
            return gate_parts(op("Gemm", args, transB=1))
        v = op("MatMul", [hv, const("R", cat(r))])
        return gate_parts(op("Add", [v, const("Rb", cat(rb))]) if bias == 2 else v)

    def act(kind, v):
        if clip is not None:
            v = op("Clip", [v, const("lo", np.float32(-clip)), const("hi", np.float32(clip))])
        return op(kind, [v])

    def pre_sum(xg, hg, g):
        s = op("Add", [xg, hg])
        if product == "per_gate" and bias:
            s = op("Add", [s, const(f"b{g}", wb[g] + rb[g])])
        return s

    if product == "concat":
        K = np.concatenate([cat(w), cat(r)], axis=0)
        xh = op("Concat", ["x_t", "h_in"], axis=1)
        v = op("MatMul", [xh, const("K", K)])
        parts = gate_parts(op("Add", [v, const("b", cat(wb) + cat(rb))]) if bias else v)
        pre = dict(parts)
    elif cell == "gru":
        xs, hs = x_rows("x_t"), h_rows("h_in")
        pre = {g: pre_sum(xs[g], hs[g], g) for g in "zr"}
    else:
        xs, hs = x_rows("x_t"), h_rows("h_in")
        pre = {g: pre_sum(xs[g], hs[g], g) for g in order}
    if extra == "x_squared":
        pre[order[0]] = op("Add", [pre[order[0]], op("Mul", ["x_t", "x_t"])])
        assert I == H
    outs = {"h": None, "c": None}
    if cell == "rnn":
        outs["h"] = act("Tanh", pre["h"])
    elif cell == "gru":
        z = act("Sigmoid", pre["z"])
        rg = act("Sigmoid", pre["r"])
        if lbr:
            n_ = act("Tanh", op("Add", [xs["h"], op("Mul", [rg, hs["h"]])]))
        else:
            rh = op("Mul", [rg, "h_in"])
            rr = op("MatMul", [rh, const("Rh", r["h"])])
            if bias == 2:
                rr = op("Add", [rr, const("Rbh", rb["h"])])
            n_ = act("Tanh", op("Add", [xs["h"], rr]))
        if update == "std":
            outs["h"] = op("Add", [op("Mul", [op("Sub", ["one", z]), n_]), op("Mul", [z, "h_in"])])
        elif update == "torch":
            outs["h"] = op("Add", [n_, op("Mul", [z, op("Sub", ["h_in", n_])])])
        else:  # u = z here: h' = u n + (1 - u) h
            outs["h"] = op("Add", [op("Mul", [z, n_]), op("Mul", [op("Sub", ["one", z]), "h_in"])])
    else:
        p = {g: (rng.standard_normal(H) * 0.3).astype(np.float32) for g in "iof"}

        def peep(g, state, v):
            if not peephole:
                return v
            return op("Add", [v, op("Mul", [const(f"P{g}", p[g]), state])])

        i = act(f_act, peep("i", "c_in", pre["i"]))
        other = "HardSigmoid" if extra == "mixed_act" else f_act
        f = op("Sub", ["one", i]) if couple else act(other, peep("f", "c_in", pre["f"]))
        g = act("Tanh", pre["c"])
        c_new = op("Add", [op("Mul", [f, "c_in"]), op("Mul", [i, g])])
        if extra == "gate_twice":
            c_new = op("Add", [c_new, i])
        o = act(f_act, peep("o", c_new, pre["o"]))
        outs["h"] = op("Mul", [o, op("Tanh", [c_new])])
        outs["c"] = c_new
    return _wrap(cell, loop, nodes, outs, inits, extra, B, T, I, H, rng, mask, mask_output)


def _select(nodes, spelling, new, old, tag):
    """``where(m_t, new, old)`` as tf2onnx ("cast") or OpenVINO ("where") writes it."""
    if spelling == "where":
        nodes.append(h.make_node("Where", ["m_t", new, old], [f"sel_{tag}"]))
    else:
        nodes += [h.make_node("Cast", ["m_t"], [f"mf_{tag}"], to=F),
                  h.make_node("Not", ["m_t"], [f"nm_{tag}"]),
                  h.make_node("Cast", [f"nm_{tag}"], [f"nmf_{tag}"], to=F),
                  h.make_node("Mul", [f"mf_{tag}", new], [f"a_{tag}"]),
                  h.make_node("Mul", [old, f"nmf_{tag}"], [f"b_{tag}"]),
                  h.make_node("Add", [f"a_{tag}", f"b_{tag}"], [f"sel_{tag}"])]
    return f"sel_{tag}"


def _wrap(cell, loop, nodes, outs, inits, extra, B, T, I, H, rng, mask=None,
          mask_output=False):
    states = ["h", "c"] if cell == "lstm" else ["h"]
    nodes = list(nodes)
    y = outs["h"]
    if mask is not None:
        if loop not in ("scan", "scan_reverse", "loop_gather"):
            raise ValueError(f"no mask with loop {loop!r}")
        new = dict(outs)
        outs = {s: _select(nodes, mask, new[s], f"{s}_in", s) for s in states}
        y = outs["h"]
        if mask_output == "fill":  # Keras's zero_output_for_mask (the fill is a constant)
            inits["FILL"] = np.full(H, 0.25, np.float32)
            y = _select(nodes, mask, new["h"], "FILL", "o")
        elif mask_output:
            y = outs["o"] = _select(nodes, mask, new["h"], "o_in", "o")
            states = [*states, "o"]
    body_out = [outs[s] for s in states]
    nodes.append(h.make_node("Identity", [y], ["y_t"]))
    scan_outs = ["y_t"]
    if extra == "gate_output":
        scan_outs.append(next(o for n in nodes for o in n.output if o.startswith("sigmoid")))
    if extra == "c_output":
        nodes.append(h.make_node("Identity", [outs["c"]], ["c_t"]))
        scan_outs.append("c_t")
    st_vi = [h.make_tensor_value_info(f"{s}_in", F, ["B", H]) for s in states]
    counter = extra == "counter"
    if counter:
        nodes.append(h.make_node("Add", ["k_in", "one"], ["k_out"]))
        st_vi.append(h.make_tensor_value_info("k_in", F, []))
        body_out.append("k_out")
    out_vi = [h.make_tensor_value_info(v, F, [] if v == "k_out" else ["B", H])
              for v in body_out + scan_outs]
    n_scan = len(scan_outs)
    x_vi = h.make_tensor_value_info("x_t", F, ["B", I])
    init_names = [f"{s.upper()}0" for s in states] + (["K0"] if counter else [])
    final_names = [f"{s.upper()}n" for s in states] + (["Kn"] if counter else [])
    scan_names = ["Y"] + [f"S{k}" for k in range(1, n_scan)]
    feeds = {}
    X = rng.standard_normal((T, B, I)).astype(np.float32)
    for s in states:
        feeds[f"{s.upper()}0"] = (rng.standard_normal((B, H)) * 0.5).astype(np.float32)
    if counter:
        feeds["K0"] = np.array(0.0, np.float32)
    Mk = None
    if mask is not None:  # each entry skips some steps, the first ones for entry 0
        Mk = rng.random((T, B, 1)) < 0.6
        Mk[: T // 2, 0] = False
        feeds["MK"] = Mk
    if loop == "loop_list":  # torch.onnx: outputs.append(h) in a scripted loop
        nodes.insert(0, h.make_node("Gather", ["X", "i"], ["x_t"], axis=0))
        nodes.append(h.make_node("Identity", ["cond_in"], ["cond_out"]))
        nodes.append(h.make_node("SequenceInsert", ["seq_in", outs["h"]], ["seq_out"]))
        seq_t = h.make_tensor_sequence_value_info
        body = h.make_graph(nodes, "body", [h.make_tensor_value_info("i", I64, []),
                                            h.make_tensor_value_info("cond_in", BOOL, []),
                                            *st_vi, seq_t("seq_in", F, None)],
                            [h.make_tensor_value_info("cond_out", BOOL, []),
                             *out_vi[:len(body_out)], seq_t("seq_out", F, None)])
        top = [h.make_node("SequenceEmpty", [], ["seq0"], dtype=F),
               h.make_node("Loop", ["M", "", *init_names, "seq0"], [*final_names, "seq"],
                           body=body),
               h.make_node("ConcatFromSequence", ["seq"], ["Y"], axis=0, new_axis=1)]
        feeds["M"] = np.array(T, np.int64)
        inputs = [h.make_tensor_value_info("M", I64, [])]
    elif loop == "loop_gather":
        nodes.insert(0, h.make_node("Gather", ["X", "i"], ["x_t"], axis=0))
        if Mk is not None:
            nodes.insert(0, h.make_node("Gather", ["MK", "i"], ["m_t"], axis=0))
        nodes.append(h.make_node("Identity", ["cond_in"], ["cond_out"]))
        body = h.make_graph(nodes, "body", [h.make_tensor_value_info("i", I64, []),
                                            h.make_tensor_value_info("cond_in", BOOL, []),
                                            *st_vi],
                            [h.make_tensor_value_info("cond_out", BOOL, []), *out_vi])
        top = h.make_node("Loop", ["M", "", *init_names], [*final_names, *scan_names],
                          body=body)
        feeds["M"] = np.array(T, np.int64)
        inputs = [h.make_tensor_value_info("M", I64, [])]
    else:
        m_vi = [] if Mk is None else [h.make_tensor_value_info("m_t", BOOL, ["B", 1])]
        body = h.make_graph(nodes, "body", [*st_vi, x_vi, *m_vi], out_vi)
        attrs = {"num_scan_inputs": 1 + len(m_vi)}
        if loop == "scan_reverse":
            attrs["scan_input_directions"] = [1] * (1 + len(m_vi))
        if loop == "scan_out_reverse":
            attrs["scan_output_directions"] = [1] * n_scan
        if loop == "scan_axis1":
            attrs["scan_input_axes"] = [1]
            attrs["scan_output_axes"] = [1] * n_scan
            X = np.ascontiguousarray(X.transpose(1, 0, 2))
        top = h.make_node("Scan", [*init_names, "X", *(["MK"] if m_vi else [])],
                          [*final_names, *scan_names], body=body, **attrs)
        inputs = []
    feeds = {"X": X, **feeds}
    x_dims = ["B", "T", I] if loop == "scan_axis1" else ["T", "B", I]
    inputs = [h.make_tensor_value_info("X", F, x_dims)] + inputs + [
        h.make_tensor_value_info(k, F, [] if k == "K0" else ["B0", H]) for k in init_names]
    if Mk is not None:
        inputs.append(h.make_tensor_value_info("MK", BOOL, ["T", "B", 1]))
    outputs = [h.make_tensor_value_info(k, F, [] if k == "Kn" else ["B", H])
               for k in final_names]
    outputs += [h.make_tensor_value_info(k, F, ["a", "b", H]) for k in scan_names]
    g = h.make_graph(top if isinstance(top, list) else [top], "cell", inputs, outputs,
                     [numpy_helper.from_array(np.asarray(v, np.float32 if np.asarray(v).dtype
                                                         .kind == "f" else np.int64), k)
                      for k, v in inits.items()])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 18)], ir_version=8)
    onnx.checker.check_model(m, full_check=True)
    return m, {k: feeds[k] for k in ["X", "M"] + init_names + ["MK"] if k in feeds}
