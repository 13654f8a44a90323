"""The recurrent bench's models: one cell (LSTM, GRU, RNN) written in the forms exporters write.

Every form of a `Spec` computes the same function of the same feeds with the same weights, so
all forms and engines are checked against one oracle (`oracle`, a plain NumPy loop over time
in the ONNX operators' conventions):

- ``op``: the ONNX ``LSTM``/``GRU``/``RNN`` operator (what ``torch.onnx`` writes for
  ``nn.LSTM``/``nn.GRU``/``nn.RNN``);
- ``op_lens``: the same operator with ``sequence_lens``, an input ``L [B]`` (what
  ``torch.onnx`` writes for packed sequences): entry b runs `lengths` steps (T, 7T/8, 3T/4,
  5T/8 in turn), its Y zero after them;
- ``scan_matmul``: an ONNX Scan whose body multiplies by pre-transposed weights (``MatMul``),
  adds one bias and ``Split``s the gate row (LSTM gates in Keras order i, f, c, o);
- ``scan_gemm``: an ONNX Scan with PyTorch-layout weights, ``Gemm(transB=1)`` with its bias
  input per product, then ``Split`` (PyTorch gate order; GRU as ``torch.nn.GRUCell`` writes
  it: ``n + z * (h - n)``);
- ``loop_gather``: an ONNX Loop whose trip count is read from X's shape, whose body
  ``Gather``s step i of the captured X and ``Slice``s each gate out of the gate row;
- ``ti_cell``: an OpenVINO TensorIterator over a batch-first X whose body is the
  ``LSTMCell``/``GRUCell``/``RNNCell`` op (OpenVINO's gate order f, i, c, o);
- ``ti_decomposed``: the same TensorIterator with the cell written out in ``MatMul``
  (``transpose_b``), ``Add``, ``Split`` and activations.

GRU uses ``linear_before_reset=1`` (PyTorch's and Keras' GRU) in every form. ONNX forms have
inputs ``X [T, B, in]``, ``H0 [B, H]`` (and ``C0``), outputs ``Y [T, B, H]``, ``Hn`` (and
``Cn``); OpenVINO forms take and give ``X``/``Y`` batch-first (`canonical` transposes back).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper
from onnx import helper as h

OPSET = 17
IR_VERSION = 8
F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
f32 = np.float32

CELLS = ("lstm", "gru", "rnn")
ONNX_FORMS = ("op", "op_lens", "scan_matmul", "scan_gemm", "loop_gather")
OV_FORMS = ("ti_cell", "ti_decomposed")
FORMS = ONNX_FORMS + OV_FORMS
GATES = {"lstm": 4, "gru": 3, "rnn": 1}
# gate orders, as permutations of the ONNX order (LSTM i o f c; GRU z r h)
ONNX_ORDER = {"lstm": "iofc", "gru": "zrh", "rnn": "h"}
KERAS_ORDER = {"lstm": "ifco", "gru": "zrh", "rnn": "h"}
TORCH_ORDER = {"lstm": "ifco", "gru": "rzh", "rnn": "h"}
OV_ORDER = {"lstm": "fico", "gru": "zrh", "rnn": "h"}


@dataclass(frozen=True)
class Spec:
    """One model of the matrix: cell kind and sizes."""

    cell: str
    batch: int
    seq: int
    inp: int
    hidden: int
    seed: int = 0

    @property
    def gh(self) -> int:
        return GATES[self.cell] * self.hidden

    @property
    def states(self) -> list[str]:
        return ["H0", "C0"] if self.cell == "lstm" else ["H0"]

    @property
    def finals(self) -> list[str]:
        return ["Hn", "Cn"] if self.cell == "lstm" else ["Hn"]

    def weights(self):
        """ONNX-layout weights: W [G*H, in], R [G*H, H], Wb [G*H], Rb [G*H]."""
        rng = np.random.default_rng(1000 + self.seed)
        w = rng.standard_normal((self.gh, self.inp)) / np.sqrt(self.inp)
        r = rng.standard_normal((self.gh, self.hidden)) / np.sqrt(self.hidden)
        wb, rb = rng.standard_normal((2, self.gh)) * 0.1
        return w.astype(f32), r.astype(f32), wb.astype(f32), rb.astype(f32)

    def feeds(self) -> dict[str, np.ndarray]:
        """X [T, B, in] and the initial states [B, H] (ONNX forms)."""
        rng = np.random.default_rng(2000 + self.seed)
        out = {"X": rng.standard_normal((self.seq, self.batch, self.inp)).astype(f32)}
        for s in self.states:
            out[s] = (rng.standard_normal((self.batch, self.hidden)) * 0.5).astype(f32)
        return out


def order(w: np.ndarray, cell: str, to: str, axis: int = 0) -> np.ndarray:
    """`w`'s gate blocks (ONNX order along `axis`) in the order `to`."""
    blocks = dict(zip(ONNX_ORDER[cell], np.split(w, len(to), axis=axis)))
    return np.concatenate([blocks[g] for g in to], axis=axis)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def lengths(spec: Spec) -> np.ndarray:
    """The entries' step counts of the ``op_lens`` form."""
    return np.array([max(1, spec.seq - (b % 4) * spec.seq // 8) for b in range(spec.batch)],
                    np.int32)


def form_lengths(spec: Spec, form: str) -> np.ndarray | None:
    return lengths(spec) if form == "op_lens" else None


def oracle(spec: Spec, feeds: dict, lens: np.ndarray | None = None) -> list[np.ndarray]:
    """Y [T, B, H] and the final states, by a plain loop in float64 (ONNX conventions);
    with `lens`, entry b stops after `lens[b]` steps (its Y zero from there)."""
    w, r, wb, rb = (a.astype(np.float64) for a in spec.weights())
    H = spec.hidden
    hs = feeds["H0"].astype(np.float64)
    cs = feeds["C0"].astype(np.float64) if spec.cell == "lstm" else None
    ys = []
    for t, x in enumerate(feeds["X"].astype(np.float64)):
        xw, hr = x @ w.T + wb, hs @ r.T + rb
        h_new, c_new = None, cs
        if spec.cell == "lstm":
            i, o, f, c = np.split(xw + hr, 4, axis=-1)
            c_new = _sigmoid(f) * cs + _sigmoid(i) * np.tanh(c)
            h_new = _sigmoid(o) * np.tanh(c_new)
        elif spec.cell == "gru":
            z = _sigmoid(xw[:, :H] + hr[:, :H])
            rg = _sigmoid(xw[:, H:2 * H] + hr[:, H:2 * H])
            n = np.tanh(xw[:, 2 * H:] + rg * hr[:, 2 * H:])
            h_new = (1 - z) * n + z * hs
        else:
            h_new = np.tanh(xw + hr)
        live = np.ones((len(hs), 1), bool) if lens is None else (t < lens)[:, None]
        hs = np.where(live, h_new, hs)
        if cs is not None:
            cs = np.where(live, c_new, cs)
        ys.append(np.where(live, hs, 0.0))
    outs = [np.stack(ys) if ys else np.zeros((0, spec.batch, H)), hs]
    if cs is not None:
        outs.append(cs)
    return [o.astype(f32) for o in outs]


def canonical(form: str, outputs: list[np.ndarray]) -> list[np.ndarray]:
    """A form's outputs in the ONNX forms' layout (OpenVINO forms: Y batch-first)."""
    outs = [np.asarray(o) for o in outputs]
    if form in OV_FORMS:
        outs[0] = outs[0].transpose(1, 0, 2)
    return outs


def form_feeds(form: str, feeds: dict, spec: Spec | None = None) -> dict:
    if form in OV_FORMS:
        return {**feeds, "X": np.ascontiguousarray(feeds["X"].transpose(1, 0, 2))}
    if form == "op_lens":
        return {**feeds, "L": lengths(spec)}
    return feeds


# ----------------------------------------------------------------------------- ONNX


def _vi(name, elem=F, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def _init(name, value, dtype=None):
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _used(nodes) -> set[str]:
    names = set()
    for n in nodes:
        names.update(n.input)
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                names |= _used(a.g.node)
    return names


def _model(nodes, inputs, outputs, inits) -> onnx.ModelProto:
    used = _used(nodes)
    inits = [i for i in inits if i.name in used]
    graph = h.make_graph(list(nodes), "recurrent", list(inputs), list(outputs), inits)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)],
                         ir_version=IR_VERSION, producer_name="itergraph-bench")
    onnx.checker.check_model(model, full_check=True)
    return model


def _io(spec: Spec):
    state = ["B", spec.hidden]
    inputs = [_vi("X", F, ["T", "B", spec.inp])] + [_vi(s, F, state) for s in spec.states]
    outputs = [_vi("Y", F, ["T", "B", spec.hidden])] + [_vi(s, F, state) for s in spec.finals]
    return inputs, outputs


def onnx_model(spec: Spec, form: str) -> onnx.ModelProto:
    return {"op": _op, "op_lens": lambda s: _op(s, lens=True), "scan_matmul": _scan_matmul,
            "scan_gemm": _scan_gemm, "loop_gather": _loop_gather}[form](spec)


def _op(spec: Spec, lens: bool = False) -> onnx.ModelProto:
    w, r, wb, rb = spec.weights()
    op = spec.cell.upper()
    ins = ["X", "W", "R", "B", "L" if lens else ""] + [f"{s}_1" for s in spec.states]
    outs = ["Y4"] + [f"{s}_1" for s in spec.finals]
    attrs = {"hidden_size": spec.hidden}
    if spec.cell == "gru":
        attrs["linear_before_reset"] = 1
    nodes = [h.make_node("Unsqueeze", [s, "ax0"], [f"{s}_1"]) for s in spec.states]
    nodes.append(h.make_node(op, ins, outs, name=spec.cell, **attrs))
    nodes.append(h.make_node("Squeeze", ["Y4", "ax1"], ["Y"]))
    nodes += [h.make_node("Squeeze", [f"{s}_1", "ax0"], [s]) for s in spec.finals]
    inits = [_init("W", w[None]), _init("R", r[None]), _init("B", np.concatenate([wb, rb])[None]),
             _init("ax0", [0], np.int64), _init("ax1", [1], np.int64)]
    inputs, outputs = _io(spec)
    if lens:
        inputs.append(_vi("L", TensorProto.INT32, ["B"]))
    return _model(nodes, inputs, outputs, inits)


def _cell_nodes(spec: Spec, xg: list[str], hg: list[str], order_: str, hin="h_in",
                cin="c_in", hout="h_out", cout="c_out", torch_gru=False) -> list:
    """The element-wise part of a cell from per-gate pre-activations: `xg` (input part, bias
    included) and `hg` (recurrent part, bias included), one name per gate in `order_` (an
    empty `xg` entry: the gate's `hg` holds the whole pre-activation)."""
    g = dict(zip(order_, zip(xg, hg)))
    nodes = []

    def pre(k):
        x, r = g[k]
        if not x:
            return r
        nodes.append(h.make_node("Add", [x, r], [f"pre_{k}"]))
        return f"pre_{k}"

    if spec.cell == "lstm":
        for k, act in (("i", "Sigmoid"), ("f", "Sigmoid"), ("o", "Sigmoid"), ("c", "Tanh")):
            nodes.append(h.make_node(act, [pre(k)], [f"a_{k}"]))
        nodes += [h.make_node("Mul", ["a_f", cin], ["fc"]),
                  h.make_node("Mul", ["a_i", "a_c"], ["ic"]),
                  h.make_node("Add", ["fc", "ic"], [cout]),
                  h.make_node("Tanh", [cout], ["tc"]),
                  h.make_node("Mul", ["a_o", "tc"], [hout])]
    elif spec.cell == "gru":
        nodes += [h.make_node("Sigmoid", [pre("z")], ["a_z"]),
                  h.make_node("Sigmoid", [pre("r")], ["a_r"]),
                  h.make_node("Mul", ["a_r", g["h"][1]], ["rh"]),
                  h.make_node("Add", [g["h"][0], "rh"], ["pre_n"]),
                  h.make_node("Tanh", ["pre_n"], ["n"])]
        if torch_gru:  # n + z * (h - n)
            nodes += [h.make_node("Sub", [hin, "n"], ["hn"]),
                      h.make_node("Mul", ["a_z", "hn"], ["zhn"]),
                      h.make_node("Add", ["n", "zhn"], [hout])]
        else:  # (1 - z) * n + z * h
            nodes += [h.make_node("Sub", ["one", "a_z"], ["omz"]),
                      h.make_node("Mul", ["omz", "n"], ["zn"]),
                      h.make_node("Mul", ["a_z", hin], ["zh"]),
                      h.make_node("Add", ["zn", "zh"], [hout])]
    else:
        nodes.append(h.make_node("Tanh", [pre("h")], [hout]))
    return nodes


def _split_gates(src: str, order_: str, prefix: str, hidden: int) -> tuple[list, list[str]]:
    names = [f"{prefix}_{k}" for k in order_]
    if len(order_) == 1:
        return [h.make_node("Identity", [src], names)], names
    return [h.make_node("Split", [src, "split"], names, axis=1)], names


def _state_vis(spec: Spec, names: list[str]):
    return [_vi(n, F, ["B", spec.hidden]) for n in names]


def _scan(spec: Spec, body_nodes, inits, name: str) -> onnx.ModelProto:
    st_in = ["h_in", "c_in"][:len(spec.states)]
    st_out = ["h_out", "c_out"][:len(spec.states)]
    body = h.make_graph(
        body_nodes + [h.make_node("Identity", ["h_out"], ["y_t"])], name,
        _state_vis(spec, st_in) + [_vi("x_t", F, ["B", spec.inp])],
        _state_vis(spec, st_out) + [_vi("y_t", F, ["B", spec.hidden])])
    scan = h.make_node("Scan", spec.states + ["X"], spec.finals + ["Y"], body=body,
                       num_scan_inputs=1, name=name)
    return _model([scan], *_io(spec), inits)


def _scan_matmul(spec: Spec) -> onnx.ModelProto:
    w, r, wb, rb = spec.weights()
    o = KERAS_ORDER[spec.cell]
    wt, rt = order(w, spec.cell, o).T.copy(), order(r, spec.cell, o).T.copy()
    nodes = [h.make_node("MatMul", ["x_t", "WT"], ["xw"]),
             h.make_node("MatMul", ["h_in", "RT"], ["hr"])]
    inits = [_init("WT", wt), _init("RT", rt), _init("split", [spec.hidden] * len(o), np.int64),
             _init("one", 1.0, f32)]
    if spec.cell == "gru":  # z, r from one gate row; n keeps its parts apart
        nodes += [h.make_node("Add", ["xw", "Wb"], ["xwb"]),
                  h.make_node("Add", ["hr", "Rb"], ["hrb"])]
        inits += [_init("Wb", order(wb, "gru", o)), _init("Rb", order(rb, "gru", o))]
        s1, xs = _split_gates("xwb", o, "x", spec.hidden)
        s2, hs = _split_gates("hrb", o, "r", spec.hidden)
        nodes += s1 + s2 + _cell_nodes(spec, xs, hs, o)
    else:
        nodes += [h.make_node("Add", ["xw", "hr"], ["s"]), h.make_node("Add", ["s", "b"], ["g"])]
        inits.append(_init("b", order(wb + rb, spec.cell, o)))
        s, gs = _split_gates("g", o, "g", spec.hidden)
        nodes += s + _cell_nodes(spec, [""] * len(o), gs, o)
    return _scan(spec, nodes, inits, "scan_matmul")


def _scan_gemm(spec: Spec) -> onnx.ModelProto:
    w, r, wb, rb = spec.weights()
    o = TORCH_ORDER[spec.cell]
    inits = [_init("W_ih", order(w, spec.cell, o)), _init("W_hh", order(r, spec.cell, o)),
             _init("b_ih", order(wb, spec.cell, o)), _init("b_hh", order(rb, spec.cell, o)),
             _init("split", [spec.hidden] * len(o), np.int64), _init("one", 1.0, f32)]
    nodes = [h.make_node("Gemm", ["x_t", "W_ih", "b_ih"], ["gi"], transB=1),
             h.make_node("Gemm", ["h_in", "W_hh", "b_hh"], ["gh"], transB=1)]
    if spec.cell == "gru":
        s1, xs = _split_gates("gi", o, "x", spec.hidden)
        s2, hs = _split_gates("gh", o, "r", spec.hidden)
        nodes += s1 + s2 + _cell_nodes(spec, xs, hs, o, torch_gru=True)
    else:
        nodes.append(h.make_node("Add", ["gi", "gh"], ["g"]))
        s, gs = _split_gates("g", o, "g", spec.hidden)
        nodes += s + _cell_nodes(spec, [""] * len(o), gs, o)
    return _scan(spec, nodes, inits, "scan_gemm")


def _loop_gather(spec: Spec) -> onnx.ModelProto:
    w, r, wb, rb = spec.weights()
    o, H = ONNX_ORDER[spec.cell], spec.hidden
    inits = [_init("WT", w.T.copy()), _init("RT", r.T.copy()), _init("b", wb + rb),
             _init("Wb", wb), _init("Rb", rb), _init("ax1", [1], np.int64),
             _init("zero", [0], np.int64), _init("one", 1.0, f32)]
    for k in range(len(o) + 1):
        inits.append(_init(f"at{k}", [k * H], np.int64))
    nodes = [h.make_node("Gather", ["X", "i"], ["x_t"], axis=0),
             h.make_node("MatMul", ["x_t", "WT"], ["xw"]),
             h.make_node("MatMul", ["h_in", "RT"], ["hr"])]

    def slices(src, prefix):
        names = []
        for k, g in enumerate(o):
            nodes.append(h.make_node("Slice", [src, f"at{k}", f"at{k + 1}", "ax1"],
                                     [f"{prefix}_{g}"]))
            names.append(f"{prefix}_{g}")
        return names

    if spec.cell == "gru":
        nodes += [h.make_node("Add", ["xw", "Wb"], ["xwb"]),
                  h.make_node("Add", ["hr", "Rb"], ["hrb"])]
        xs, hs = slices("xwb", "x"), slices("hrb", "r")
        nodes += _cell_nodes(spec, xs, hs, o)
    else:
        nodes += [h.make_node("Add", ["xw", "hr"], ["s"]), h.make_node("Add", ["s", "b"], ["g"])]
        nodes += _cell_nodes(spec, [""] * len(o), slices("g", "g"), o)
    st_in = ["h_in", "c_in"][:len(spec.states)]
    st_out = ["h_out", "c_out"][:len(spec.states)]
    nodes += [h.make_node("Identity", ["cond_in"], ["cond_out"]),
              h.make_node("Identity", ["h_out"], ["y_t"])]
    body = h.make_graph(
        nodes, "loop_gather",
        [_vi("i", I64, []), _vi("cond_in", BOOL, [])] + _state_vis(spec, st_in),
        [_vi("cond_out", BOOL, [])] + _state_vis(spec, st_out) + [_vi("y_t", F, ["B", H])])
    top = [h.make_node("Shape", ["X"], ["shape"]),
           h.make_node("Gather", ["shape", "zero0"], ["M"], axis=0),
           h.make_node("Loop", ["M", "", *spec.states], [*spec.finals, "Y"], body=body,
                       name="loop_gather")]
    inits.append(_init("zero0", 0, np.int64))
    return _model(top, *_io(spec), inits)


# ----------------------------------------------------------------------------- OpenVINO


def openvino_model(spec: Spec, form: str, path: str, compress: bool = False) -> list[str]:
    """Write the OpenVINO form to `path` (.xml); returns its output names in oracle order.
    `compress`: weights stored as float16 and converted on reading (what ``ov.save_model``
    and OpenVINO's converters do by default)."""
    import openvino as ov
    import openvino.opset13 as ops

    w, r, wb, rb = spec.weights()
    T, B, H, n_in = spec.seq, spec.batch, spec.hidden, spec.inp
    x = ops.parameter([B, T, n_in], np.float32, name="X")
    init = [ops.parameter([B, H], np.float32, name=s) for s in spec.states]
    px = ops.parameter([B, 1, n_in], np.float32, name="x_t")
    pst = [ops.parameter([B, H], np.float32, name=f"{s}_in") for s in spec.states]
    o = OV_ORDER[spec.cell]
    wo, ro = order(w, spec.cell, o), order(r, spec.cell, o)
    if spec.cell == "gru":  # linear_before_reset: [b_z, b_r, Wb_h, Rb_h]
        bo = np.concatenate([(wb + rb)[:2 * H], wb[2 * H:], rb[2 * H:]])
    else:
        bo = order(wb + rb, spec.cell, o)
    if form == "ti_cell":
        x2 = ops.squeeze(px, ops.constant(np.array([1], np.int64)))
        args = (ops.constant(wo), ops.constant(ro), ops.constant(bo))
        if spec.cell == "lstm":
            cell = ops.lstm_cell(x2, pst[0], pst[1], *args, hidden_size=H)
            new = [cell.output(0), cell.output(1)]
        elif spec.cell == "gru":
            cell = ops.gru_cell(x2, pst[0], *args, hidden_size=H, linear_before_reset=True)
            new = [cell.output(0)]
        else:
            cell = ops.rnn_cell(x2, pst[0], *args, hidden_size=H, activations=["tanh"],
                                activations_alpha=[], activations_beta=[])
            new = [cell.output(0)]
    else:
        x2 = ops.reshape(px, ops.constant(np.array([B, n_in], np.int64)), special_zero=False)
        new = _ov_decomposed(ops, spec, x2, pst, wo, ro, bo)
    results = [ops.result(v) for v in new]
    y3 = ops.unsqueeze(new[0], ops.constant(np.array([1], np.int64)))
    y_res = ops.result(y3)
    body = ov.Model([*results, y_res], [px, *pst], "ti_body")
    ti = ops.tensor_iterator()
    ti.set_body(body)
    ti.set_sliced_input(px, x.output(0), 0, 1, 1, -1, 1)
    finals = []
    for p, v0, res in zip(pst, init, results):
        ti.set_merged_input(p, v0.output(0), res.output(0))
        finals.append(ti.get_iter_value(res.output(0), -1))
    y = ti.get_concatenated_slices(y_res.output(0), 0, 1, 1, -1, 1)
    outs = []
    for name, port in zip(["Y", *spec.finals], [y, *finals]):
        res = ops.result(port)
        res.get_output_tensor(0).set_names({name})
        outs.append(res)
    model = ov.Model(outs, [x, *init], f"ti_{spec.cell}")
    ov.save_model(model, path, compress_to_fp16=compress)
    return ["Y", *spec.finals]


def _ov_decomposed(ops, spec: Spec, x2, pst, wo, ro, bo):
    """The cell in OpenVINO ops: MatMul(transpose_b) + Add + Split + activations."""
    H = spec.hidden
    xw = ops.matmul(x2, ops.constant(wo), False, True)
    hr = ops.matmul(pst[0], ops.constant(ro), False, True)
    if spec.cell == "gru":
        xw = ops.add(xw, ops.constant(bo[:3 * H]))
        hr = ops.add(hr, ops.constant(np.concatenate([np.zeros(2 * H, f32), bo[3 * H:]])))
        xz, xr, xh = ops.split(xw, ops.constant(np.int64(1)), 3).outputs()
        hz, hr_, hh = ops.split(hr, ops.constant(np.int64(1)), 3).outputs()
        z = ops.sigmoid(ops.add(xz, hz))
        rg = ops.sigmoid(ops.add(xr, hr_))
        n = ops.tanh(ops.add(xh, ops.multiply(rg, hh)))
        one = ops.constant(np.array(1.0, f32))
        return [ops.add(ops.multiply(ops.subtract(one, z), n), ops.multiply(z, pst[0]))]
    g = ops.add(ops.add(xw, hr), ops.constant(bo))
    if spec.cell == "rnn":
        return [ops.tanh(g)]
    f, i, c, o = ops.split(g, ops.constant(np.int64(1)), 4).outputs()
    c_new = ops.add(ops.multiply(ops.sigmoid(f), pst[1]),
                    ops.multiply(ops.sigmoid(i), ops.tanh(c)))
    return [ops.multiply(ops.sigmoid(o), ops.tanh(c_new)), c_new]
