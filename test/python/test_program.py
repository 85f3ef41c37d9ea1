"""rudnn.compile: rudnn IR called on torch tensors and NumPy arrays through
DLPack, without copies; compiled once per signature; errors typed and
naming the argument."""

import numpy as np
import pytest
import torch

import rudnn

RMS_NORM = """
func.func @main(%x: tensor<?x24xf32> {rudnn.name = "x"},
                %gamma: tensor<24xf32> {rudnn.name = "gamma"})
    -> (tensor<?x24xf32> {rudnn.name = "y"}, tensor<?xf32> {rudnn.name = "rstd"}) {
  %y, %rstd, %h = rudnn.rms_norm %x gamma %gamma eps 1.0e-06
      : (tensor<?x24xf32>, tensor<24xf32>)
      -> (tensor<?x24xf32>, tensor<?xf32>, tensor<?x24xf32>)
  return %y, %rstd : tensor<?x24xf32>, tensor<?xf32>
}
"""


def rms_norm(x, gamma):
    rstd = 1 / np.sqrt((x.astype(np.float64) ** 2).mean(-1) + 1e-6)
    return x * rstd[:, None] * gamma, rstd


def test_numpy_arrays_run_on_emulation():
    module = rudnn.compile(RMS_NORM)
    assert list(module.functions) == ["main"]
    assert [a["name"] for a in module.main.arguments] == ["x", "gamma"]
    x, gamma = np.random.randn(7, 24).astype(np.float32), np.random.randn(24).astype(np.float32)
    y, rstd = module.main(x, gamma)
    y_ref, rstd_ref = rms_norm(x, gamma)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (7, 24)
    np.testing.assert_allclose(y, y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd, rstd_ref, rtol=1e-5)


def test_tensors_are_read_and_written_in_place():
    module = rudnn.compile(RMS_NORM)
    # A strided view of a larger buffer (rows 48 floats apart) is read
    # where it lies, and the results land in the caller's memory.
    storage = torch.randn(9, 48)
    x = storage[1:8, 10:34]
    gamma = torch.randn(24)
    out = torch.full((7, 2, 24), 7.0)
    y_view, rstd = out[:, 1, :], torch.empty(7)
    y, rstd_back = module(x, gamma, out=(y_view, rstd))
    assert y.data_ptr() == y_view.data_ptr() and rstd_back.data_ptr() == rstd.data_ptr()
    assert torch.all(out[:, 0, :] == 7.0)  # the other half of each row untouched
    y_ref, rstd_ref = rms_norm(x.numpy(), gamma.numpy())
    np.testing.assert_allclose(out[:, 1, :].numpy(), y_ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rstd.numpy(), rstd_ref, rtol=1e-5)

    array_out = np.zeros((7, 24), np.float32), np.zeros(7, np.float32)
    y_np, _ = module(x.numpy(), gamma.numpy(), out=array_out)
    assert np.shares_memory(y_np, array_out[0])
    np.testing.assert_allclose(array_out[0], y_ref, rtol=1e-5, atol=1e-5)


def test_compiles_once_per_signature(tmp_path):
    path = tmp_path / "norm.mlir"
    path.write_text(RMS_NORM)
    context = rudnn.Context(backend="emulation", cache_dir="")
    module = rudnn.compile(str(path), context=context)
    gamma = torch.randn(24)
    module(torch.randn(3, 24), gamma)
    compiled = context.counters()["kernels_compiled"]
    assert compiled > 0
    module(torch.randn(50, 24), gamma)  # the dynamic dim changes: no compile
    assert context.counters()["kernels_compiled"] == compiled
    assert context.backend == "emulation"


def test_errors_are_typed_and_name_the_argument():
    module = rudnn.compile(RMS_NORM)
    gamma = torch.randn(24)
    with pytest.raises(rudnn.InvalidArgument, match="'gamma'"):
        module(torch.randn(3, 24), torch.randn(25))
    with pytest.raises(rudnn.InvalidArgument, match="'x'"):
        module(torch.randn(3, 24, dtype=torch.float64), gamma)
    with pytest.raises(rudnn.InvalidArgument, match="'gamma'"):
        module(torch.randn(3, 24))
    with pytest.raises(rudnn.InvalidArgument, match="'x'"):
        module([1.0, 2.0], gamma)
    with pytest.raises(rudnn.InvalidArgument) as error:
        rudnn.compile(RMS_NORM.replace("eps 1.0e-06", "eps -1.0"))
    assert isinstance(error.value, ValueError) and "eps" in str(error.value)
    with pytest.raises(rudnn.InvalidArgument, match="'bogus'"):
        rudnn.Context(backend="bogus")
    with pytest.raises(rudnn.InvalidArgument, match="'source'.*missing.mlir"):
        rudnn.compile("missing.mlir")


def test_a_bad_call_writes_nothing():
    module = rudnn.compile(RMS_NORM)
    y = torch.full((3, 24), 5.0)
    with pytest.raises(rudnn.InvalidArgument, match="'rstd'"):
        module(torch.randn(3, 24), torch.randn(24), out=(y, torch.full((4,), 5.0)))
    assert torch.all(y == 5.0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_tensors_run_on_the_gpu():
    module = rudnn.compile(RMS_NORM)
    x, gamma = torch.randn(5, 24, device="cuda"), torch.randn(24, device="cuda")
    y, _ = module(x, gamma)
    assert y.is_cuda
    y_ref, _ = rms_norm(x.cpu().numpy(), gamma.cpu().numpy())
    np.testing.assert_allclose(y.cpu().numpy(), y_ref, rtol=1e-5, atol=1e-5)
