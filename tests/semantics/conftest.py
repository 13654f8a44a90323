"""Every semantics test runs on both backends: the results must be the same."""

import pytest

import onnx_builders


@pytest.fixture(autouse=True, params=["numpy", "jax"])
def backend(request, monkeypatch):
    monkeypatch.setattr(onnx_builders, "BACKEND", request.param)
    return request.param
