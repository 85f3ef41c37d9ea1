"""Run by wheel_test.sh in a fresh environment holding only the installed
wheel: rudnn imports from that environment, its librudnn links no LLVM or
MLIR library and nothing outside the wheel but the C and C++ runtimes,
rudnn.info() says what it found, and every drop-in runs on the emulation
backend against a float64 reference (the pytest suite's, from the source
tree given as the argument)."""

import os
import subprocess
import sys

import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt

package = os.path.dirname(rudnn.__file__)
assert sys.prefix in package, f"rudnn imported from {package}, not {sys.prefix}"
sys.path.append(sys.argv[1])  # the references, after the installed rudnn
from test_attention import reference as attention_reference  # noqa: E402
from test_kda import recurrence  # noqa: E402

library = next(name for name in os.listdir(package) if name.startswith("librudnn.so"))
linked = subprocess.run(
    ["ldd", os.path.join(package, library)], capture_output=True, text=True, check=True
).stdout
system = ("linux-vdso", "libstdc++", "libm.so", "libgcc_s", "libc.so", "/lib64/ld-linux")
outside = [line.split()[0] for line in linked.splitlines() if not line.strip().startswith(system)]
assert not outside, f"librudnn links {outside}"
print(rudnn.info())


def check(name, got, want, tolerance=1e-4):
    error = ((got.double() - want.double()).abs().max() / want.double().abs().max()).item()
    assert error < tolerance, f"{name}: relative error {error}"
    print(f"{name}: relative error {error:.2g}")


torch.manual_seed(0)
B, T, H, G, D = 2, 9, 4, 2, 16
q, k, v = torch.randn(B, T, H, D), torch.randn(B, T, G, D), torch.randn(B, T, G, D)
want, _ = attention_reference(q.double(), k.double(), v.double(), D**-0.5, causal=True)
check("flash_attn_func", rt.flash_attn_func(q, k, v, causal=True), want)
cu = torch.tensor([0, T, 2 * T], dtype=torch.int32)
packed = rt.flash_attn_varlen_func(
    q.flatten(0, 1), k.flatten(0, 1), v.flatten(0, 1), cu, cu, T, T, causal=True
)
check("flash_attn_varlen_func", packed.view(B, T, H, D), want)
kv = torch.stack([k, v], dim=2)
check("flash_attn_kvpacked_func", rt.flash_attn_kvpacked_func(q, kv, causal=True), want)
qkv = torch.stack([q, q, q], dim=2)
want_self, _ = attention_reference(qkv[:, :, 0].double(), qkv[:, :, 1].double(),
                                   qkv[:, :, 2].double(), D**-0.5, causal=True)
check("flash_attn_qkvpacked_func", rt.flash_attn_qkvpacked_func(qkv, causal=True), want_self)
check(
    "flash_attn_varlen_qkvpacked_func",
    rt.flash_attn_varlen_qkvpacked_func(qkv.flatten(0, 1), cu, T, causal=True).view(B, T, H, D),
    want_self,
)
check(
    "flash_attn_varlen_kvpacked_func",
    rt.flash_attn_varlen_kvpacked_func(
        q.flatten(0, 1), kv.flatten(0, 1), cu, cu, T, T, causal=True
    ).view(B, T, H, D),
    want,
)

# The last token decoded over a cache of the first T - 1, appended in place.
k_cache, v_cache = torch.zeros(B, 16, G, D), torch.zeros(B, 16, G, D)
k_cache[:, : T - 1], v_cache[:, : T - 1] = k[:, :-1], v[:, :-1]
o = rt.flash_attn_with_kvcache(
    q[:, -1:], k_cache, v_cache, k[:, -1:], v[:, -1:], cache_seqlens=T - 1, causal=True
)
check("flash_attn_with_kvcache", o, want[:, -1:])
assert torch.equal(k_cache[:, T - 1], k[:, -1])

K, V = 16, 8
kq, kk = torch.randn(B, T, H, K), F.normalize(torch.randn(B, T, H, K), dim=-1)
kv_, g, beta = torch.randn(B, T, H, V), -torch.rand(B, T, H, K) * 0.2, torch.rand(B, T, H)
want_o, want_state = recurrence(*(x.double() for x in (kq, kk, kv_, g, beta)), K**-0.5)
o, state = rt.chunk_kda(kq, kk, kv_, g, beta, output_final_state=True)
check("chunk_kda", o, want_o)
check("chunk_kda final state", state, want_state)
o, state = rt.fused_recurrent_kda(kq, kk, kv_, g, beta, output_final_state=True)
check("fused_recurrent_kda", o, want_o)

x, weight, bias = torch.randn(5, 33), torch.randn(33), torch.randn(33)
check(
    "layer_norm",
    rt.layer_norm(x, (33,), weight, bias, 1e-5),
    F.layer_norm(x.double(), (33,), weight.double(), bias.double(), 1e-5),
)
check(
    "rms_norm",
    rt.rms_norm(x, (33,), weight, eps=1e-6),
    F.rms_norm(x.double(), (33,), weight.double(), eps=1e-6),
)

theirs = torch.nn.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True).double()
ours = rt.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True)
ours.load_state_dict({name: p.float() for name, p in theirs.state_dict().items()})
sequence = torch.randn(3, 7, 6)
check("LSTM", ours(sequence)[0], theirs(sequence.double())[0])
print(f"wheel rudnn {rudnn.__version__} from {package}: every drop-in ran")
