"""An LSTM layer written with the TensorRT-style loop API, checked against ONNX's LSTM operator.

In the spirit of TensorRT's sampleCharRNN loop-based LSTM cell: an iterator walks the sequence,
recurrences carry the hidden state h and the cell state c, each step concatenates [x_t, h],
multiplies by the stacked weights, slices the four gates (ONNX order: input, output, forget,
cell), applies sigmoid/tanh, and a CONCATENATE loop output collects every h. The trip count is
computed from the input's run-time shape (add_shape -> add_gather), so one network serves every
sequence length. The same weights drive an ONNX ``LSTM`` node run by ONNX Runtime.

Porting from TensorRT: only the import differs (``import tensorrt as trt``).
Run: ``python examples/trt_lstm.py`` (prints the largest absolute difference per output).
"""

from __future__ import annotations

import numpy as np

import itergraph as ig
import itergraph.network as trt

E = trt.ElementWiseOperation


def weights(input_size: int, hidden: int, seed: int = 0) -> dict[str, np.ndarray]:
    """ONNX LSTM weights for one direction: W [4H, I], R [4H, H], Wb and Rb [4H] (i, o, f, c)."""
    rng = np.random.default_rng(seed)
    s = 1 / np.sqrt(hidden)

    def u(*shape):
        return rng.uniform(-s, s, shape).astype(np.float32)

    return {"W": u(4 * hidden, input_size), "R": u(4 * hidden, hidden),
            "Wb": u(4 * hidden), "Rb": u(4 * hidden)}


def lstm_network(w: dict[str, np.ndarray], batch: int) -> trt.Network:
    """Inputs X [seq, batch, I] (seq dynamic), h0 and c0 [batch, H]; outputs Y, h_last, c_last."""
    hidden, input_size = w["R"].shape[1], w["W"].shape[1]
    net = trt.Builder(trt.Logger(trt.Logger.WARNING)).create_network(
        1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    x = net.add_input("X", trt.float32, (-1, batch, input_size))
    h0 = net.add_input("h0", trt.float32, (batch, hidden))
    c0 = net.add_input("c0", trt.float32, (batch, hidden))

    def constant(a: np.ndarray):
        return net.add_constant(a.shape, trt.Weights(a)).get_output(0)

    w_cat = constant(np.concatenate([w["W"], w["R"]], axis=1))  # [4H, I + H]
    bias = constant((w["Wb"] + w["Rb"]).reshape(1, 4 * hidden))

    # trip count = X.shape[0], known only at run time
    seq_len = net.add_gather(net.add_shape(x).get_output(0),
                             constant(np.array(0, np.int32)), 0).get_output(0)
    seq_len = net.add_cast(seq_len, trt.int32).get_output(0)

    loop = net.add_loop()
    loop.name = "lstm"
    loop.add_trip_limit(seq_len, trt.TripLimit.COUNT)
    x_t = loop.add_iterator(x).get_output(0)  # [batch, I]
    h_rec = loop.add_recurrence(h0)
    c_rec = loop.add_recurrence(c0)
    h, c = h_rec.get_output(0), c_rec.get_output(0)

    xh = net.add_concatenation([x_t, h])
    xh.axis = 1  # [batch, I + H]
    gates = net.add_matrix_multiply(xh.get_output(0), trt.MatrixOperation.NONE,
                                    w_cat, trt.MatrixOperation.TRANSPOSE).get_output(0)
    gates = net.add_elementwise(gates, bias, E.SUM).get_output(0)  # [batch, 4H]

    def gate(k: int, act: trt.ActivationType):
        part = net.add_slice(gates, (0, k * hidden), (batch, hidden), (1, 1)).get_output(0)
        return net.add_activation(part, act).get_output(0)

    sig, tanh = trt.ActivationType.SIGMOID, trt.ActivationType.TANH
    i, o, f, g = gate(0, sig), gate(1, sig), gate(2, sig), gate(3, tanh)
    c_next = net.add_elementwise(net.add_elementwise(f, c, E.PROD).get_output(0),
                                 net.add_elementwise(i, g, E.PROD).get_output(0),
                                 E.SUM).get_output(0)
    h_next = net.add_elementwise(o, net.add_activation(c_next, tanh).get_output(0),
                                 E.PROD).get_output(0)
    h_rec.set_input(1, h_next)
    c_rec.set_input(1, c_next)

    y = loop.add_loop_output(h_next, trt.LoopOutput.CONCATENATE, 0)
    y.set_input(1, seq_len)  # [seq, batch, H]
    h_last = loop.add_loop_output(h, trt.LoopOutput.LAST_VALUE)
    c_last = loop.add_loop_output(c, trt.LoopOutput.LAST_VALUE)
    for layer, name in ((y, "Y"), (h_last, "h_last"), (c_last, "c_last")):
        layer.get_output(0).name = name
        net.mark_output(layer.get_output(0))
    return net


def onnx_lstm_reference(w: dict[str, np.ndarray], feeds: dict[str, np.ndarray]) -> dict:
    """The same LSTM as one ONNX ``LSTM`` node, run by ONNX Runtime."""
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper

    hidden = w["R"].shape[1]
    inits = [numpy_helper.from_array(w["W"][None], "W"), numpy_helper.from_array(w["R"][None], "R"),
             numpy_helper.from_array(np.concatenate([w["Wb"], w["Rb"]])[None], "B")]
    node = helper.make_node("LSTM", ["X", "W", "R", "B", "", "h0_", "c0_"],
                            ["Y4", "Yh", "Yc"], hidden_size=hidden)
    nodes = [
        helper.make_node("Unsqueeze", ["h0", "zero"], ["h0_"]),
        helper.make_node("Unsqueeze", ["c0", "zero"], ["c0_"]),
        node,
        helper.make_node("Squeeze", ["Y4", "one"], ["Y"]),
        helper.make_node("Squeeze", ["Yh", "zero"], ["h_last"]),
        helper.make_node("Squeeze", ["Yc", "zero"], ["c_last"]),
    ]
    inits += [numpy_helper.from_array(np.array([0], np.int64), "zero"),
              numpy_helper.from_array(np.array([1], np.int64), "one")]
    f32 = TensorProto.FLOAT
    graph = helper.make_graph(
        nodes, "onnx_lstm",
        [helper.make_tensor_value_info(k, f32, None) for k in ("X", "h0", "c0")],
        [helper.make_tensor_value_info(k, f32, None) for k in ("Y", "h_last", "c_last")],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return dict(zip(("Y", "h_last", "c_last"), sess.run(None, feeds)))


def run_example(seq: int = 7, batch: int = 3, input_size: int = 5, hidden: int = 4,
                seed: int = 0) -> dict[str, float]:
    """Build the network, run it with itergraph and the ONNX LSTM in ORT; max |diff| per output."""
    w = weights(input_size, hidden, seed)
    rng = np.random.default_rng(seed + 1)
    feeds = {"X": rng.standard_normal((seq, batch, input_size)).astype(np.float32),
             "h0": rng.standard_normal((batch, hidden)).astype(np.float32),
             "c0": rng.standard_normal((batch, hidden)).astype(np.float32)}
    ours = ig.load(lstm_network(w, batch)).run(feeds)
    ref = onnx_lstm_reference(w, feeds)
    diffs = {}
    for k in ("Y", "h_last", "c_last"):
        assert ours[k].shape == ref[k].shape, (k, ours[k].shape, ref[k].shape)
        diffs[k] = float(np.max(np.abs(ours[k] - ref[k]))) if ours[k].size else 0.0
    return diffs


def main() -> int:
    worst = 0.0
    for seq in (7, 1, 20):
        diffs = run_example(seq=seq)
        print(f"seq={seq}: " + ", ".join(f"max |diff| {k} = {v:.2e}" for k, v in diffs.items()))
        worst = max(worst, *diffs.values())
    print(f"max abs diff vs ONNX LSTM (onnxruntime): {worst:.2e}")
    return 0 if worst < 1e-5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
