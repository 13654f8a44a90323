"""`Model.run_many` against one `Model.run` per input: batched where the proof admits it,
one by one where it does not (the data-dependent decoder), order kept, padding dropped."""

from __future__ import annotations

import numpy as np
import pytest
import scale_models as M
from onnx import helper as h

import itergraph as ig
from itergraph.errors import InputError
from itergraph.scale.run_many import batching_plan
from onnx_builders import F, model, vi

BACKENDS = ["numpy", "jax"]


def _same(got: list[dict], want: list[dict]) -> None:
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert list(g) == list(w)
        for k in w:
            assert g[k].shape == w[k].shape and g[k].dtype == w[k].dtype, k
            np.testing.assert_allclose(g[k], w[k], rtol=1e-5, atol=1e-6)


class Counting:
    """Wraps a model's `run` to count calls and record the batch sizes it was given."""

    def __init__(self, m):
        self.m, self.sizes = m, []
        self._run = m.run
        m.run = self.run

    def run(self, feeds, **kw):
        self.sizes.append(next(iter(feeds.values())).shape[0])
        return self._run(feeds, **kw)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_batched_equals_single_runs_in_order(backend):
    m = ig.load(M.lstm_scan())
    feeds = M.lstm_feeds(11, lengths=(6, 3, 6, 9))  # three lengths: three groups
    want = [m.run(f, backend=backend) for f in feeds]
    counter = Counting(m)
    got = list(m.run_many(iter(feeds), batch_size=4, backend=backend))
    _same(got, want)
    # batched: each call takes a full (padded) batch of 4; 11 inputs of 3 lengths -> 4 calls
    assert counter.sizes == [4] * len(counter.sizes) and len(counter.sizes) == 4
    assert batching_plan(m)[1].ok


def test_padding_of_the_last_batch_is_dropped():
    m = ig.load(M.lstm_scan())
    feeds = M.lstm_feeds(5)
    got = list(m.run_many(feeds, batch_size=4))
    assert [g["Y"].shape[0] for g in got] == [1] * 5
    _same(got, [m.run(f) for f in feeds])


def test_examples_with_several_rows_are_cut_back_to_their_rows():
    m = ig.load(M.lstm_scan())
    feeds = M.lstm_feeds(3)
    two = {k: np.concatenate([feeds[0][k], feeds[1][k]]) for k in feeds[0]}
    got = list(m.run_many([two, feeds[2]], batch_size=2))
    _same(got, [m.run(two), m.run(feeds[2])])


@pytest.mark.parametrize("backend", BACKENDS)
def test_decoder_with_data_dependent_trip_count_runs_one_by_one(backend):
    m = ig.load(M.decoder())
    axes, verdict = batching_plan(m)
    assert axes == {"S": 0} and not verdict.ok
    feeds = M.decoder_feeds(12)
    want = [m.run(f, backend=backend) for f in feeds]
    assert len({w["TOKENS"].shape for w in want}) > 1  # the examples stop at different steps
    counter = Counting(m)
    got = list(m.run_many(feeds, batch_size=4, backend=backend))
    _same(got, want)
    assert counter.sizes == [1] * 12
    # Batched anyway, the loop would stop for all examples at the first EOS: wrong answers.
    joined = {"S": np.concatenate([f["S"] for f in feeds])}
    assert m.run(joined)["TOKENS"].shape[0] != max(w["TOKENS"].shape[0] for w in want)


def _decoder_with_batched_condition():
    """The decoder's condition without the reduction: a [1]-shaped batched value squeezed to
    a scalar, so it is per example only when the batch is 1."""
    from onnx import TensorProto

    from onnx_builders import body, const
    nodes = [h.make_node("Tanh", ["h"], ["h2"]),
             h.make_node("ReduceSum", ["h2", "one"], ["s"], keepdims=0),
             h.make_node("Less", ["s", "zero"], ["lt"]),
             h.make_node("Squeeze", ["lt"], ["cond_out"])]
    g = body(nodes, [vi("it", TensorProto.INT64, []), vi("c", TensorProto.BOOL, []),
                     vi("h", F, ["N", 3])],
             [vi("cond_out", TensorProto.BOOL, []), vi("h2", F, ["N", 3])],
             [const("zero", np.float32(0)), const("one", np.array([1], np.int64))])
    loop = h.make_node("Loop", ["M", "", "S"], ["H"], body=g)
    return model([loop], [vi("S", F, ["N", 3])], [vi("H", F, ["N", 3])],
                 [const("M", np.int64(5))])


def test_a_loop_condition_on_batched_values_is_refused():
    verdict = batching_plan(ig.load(_decoder_with_batched_condition()))[1]
    assert not verdict.ok and "batch axis" in verdict.reason  # the squeeze to a scalar


def _matmul_model(batch_on_contracted: bool):
    w = h.make_tensor("W", F, [3, 3], np.eye(3, dtype=np.float32).ravel().tolist())
    nodes = [h.make_node("Transpose", ["X"], ["XT"], perm=[1, 0]),
             h.make_node("MatMul", ["XT", "X"] if batch_on_contracted else ["X", "W"], ["Y"])]
    return model(nodes, [vi("X", F, ["N", 3])], [vi("Y", F, [None, None])], [w])


def test_ops_mixing_examples_are_refused_and_run_one_by_one():
    mixing = ig.load(_matmul_model(True))
    verdict = batching_plan(mixing)[1]
    assert not verdict.ok and "contracts the batch axis" in verdict.reason
    feeds = [{"X": np.full((1, 3), k, np.float32)} for k in range(5)]
    _same(list(mixing.run_many(feeds, batch_size=4)), [mixing.run(f) for f in feeds])
    assert batching_plan(ig.load(_matmul_model(False)))[1].ok


def test_batch_axes_names_the_axis_of_an_input_without_a_symbolic_one():
    onnx_model = M.lstm_scan()
    for v in onnx_model.graph.input:
        v.type.tensor_type.shape.dim[0].dim_value = 1  # now a fixed dimension 0
    m = ig.load(onnx_model)
    assert batching_plan(m)[0] == {}
    with pytest.raises(InputError, match="unknown input"):
        list(m.run_many([], batch_axes={"nope": 0}))


def test_buckets_pad_only_the_named_axis_and_group_by_bucket():
    m = ig.load(M.lstm_scan())
    feeds = M.lstm_feeds(6, lengths=(3, 4, 7))
    got = list(m.run_many(feeds, batch_size=4, buckets=[4, 8], pad_axes={"X": 1}))
    for f, g in zip(feeds, got):  # run as if the input had been padded with zeros
        t = f["X"].shape[1]
        padded = dict(f, X=np.pad(f["X"], [(0, 0), (0, (4 if t <= 4 else 8) - t), (0, 0)]))
        _same([g], [m.run(padded)])
    with pytest.raises(InputError, match="buckets"):
        list(m.run_many(feeds, pad_axes={"X": 1}))
