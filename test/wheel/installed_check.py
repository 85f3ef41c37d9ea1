"""Run by scripts/test after `pip install .`: the installed package (not
the build tree's) imports, finds its native module and librudnn, and
computes an RMSNorm on the emulation backend."""

import os
import sys

import torch

import rudnn
import rudnn.torch

package = os.path.dirname(rudnn.__file__)
assert "site-packages" in package, f"imported rudnn from {package}, not the installed package"
x, weight = torch.randn(5, 33), torch.randn(33)
y = rudnn.torch.rms_norm(x, (33,), weight, eps=1e-6)
expected = torch.nn.functional.rms_norm(x.double(), (33,), weight.double(), eps=1e-6)
error = ((y.double() - expected).abs().max() / expected.abs().max()).item()
assert error < 1e-5, f"relative error {error}"
print(f"installed rudnn {rudnn.__version__} from {package}: rms_norm relative error {error:.2g}")
sys.exit(0)
