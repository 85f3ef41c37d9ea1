"""torch.compile(fullgraph=True) traces the drop-ins as custom ops (no
graph break) and the compiled module computes what eager does, forward and
backward."""

import torch

import rudnn.torch as rt
from conftest import assert_close


class Block(torch.nn.Module):
    """A pre-norm attention block with a linear-attention branch."""

    def __init__(self, width=32, heads=2):
        super().__init__()
        self.heads = heads
        self.norm = torch.nn.Parameter(torch.ones(width))
        self.qkv = torch.nn.Linear(width, 3 * width)

    def forward(self, x, residual):
        y, h = rt.rms_norm(x, (x.shape[-1],), self.norm, eps=1e-6, residual=residual)
        B, T, _ = y.shape
        q, k, v = self.qkv(y).view(B, T, 3, self.heads, -1).unbind(2)
        attended = rt.flash_attn_func(q, k, v, causal=True)
        gate = -torch.nn.functional.softplus(k)
        beta = torch.sigmoid(v.mean(-1))
        linear, _ = rt.chunk_kda(q, k, v, gate, beta, use_qk_l2norm_in_kernel=True)
        return rt.layer_norm(attended + linear, (v.shape[-1],)).reshape(B, T, -1) + h


def test_torch_compile_fullgraph_matches_eager():
    block = Block()
    x, residual = torch.randn(2, 11, 32), torch.randn(2, 11, 32)
    compiled = torch.compile(block, fullgraph=True)
    expected = block(x, residual)
    got = compiled(x, residual)
    assert_close(got, expected, 1e-5, "compiled forward")

    def grads(module):
        module.zero_grad()
        inputs = [x.clone().requires_grad_(True), residual.clone().requires_grad_(True)]
        (module(*inputs) ** 2).sum().backward()
        return [inputs[0].grad, inputs[1].grad, block.qkv.weight.grad.clone()]

    for a, b, name in zip(grads(compiled), grads(block), ["x", "residual", "qkv.weight"]):
        assert_close(a, b, 1e-5, "d" + name)


def test_custom_ops_are_registered_with_fake_implementations():
    # torch.library's own check: schema, fake impl and autograd agree.
    q, k, v = (torch.randn(1, 5, 2, 8) for _ in range(3))
    for slopes in (None, torch.rand(1, 2)):  # without and with ALiBi
        torch.library.opcheck(
            torch.ops.rudnn.attention.default,
            (q, k, v, None, None, slopes, 0.3, True, -1, -1, 0.0, False),
            test_utils=("test_schema", "test_faketensor"),
        )
    x = torch.randn(4, 9)
    torch.library.opcheck(
        torch.ops.rudnn.rms_norm.default,
        (x, None, None, 1e-6),
        test_utils=("test_schema", "test_faketensor"),
    )


def test_torch_compile_traces_in_place_updates():
    # kda_decode and kv_cache_attention write their pools and caches in place:
    # compiled, they leave the same memory as eager does.
    q, k, v = torch.randn(2, 1, 2, 16), torch.randn(2, 1, 2, 16), torch.randn(2, 1, 2, 16)
    g, beta, slots = -torch.rand(2, 1, 2, 16), torch.rand(2, 1, 2), torch.tensor([2, 0])
    lengths = torch.tensor([3, 7])

    def step(pool, k_cache, v_cache):
        o = rt.kda_decode(q, k, v, g, beta, pool, slots)
        return o + rt.kv_cache_attention(q, k_cache, v_cache, k, v, lengths)

    pools = [torch.randn(3, 2, 16, 16), torch.randn(2, 16, 2, 16), torch.randn(2, 16, 2, 16)]
    eager = [t.clone() for t in pools]
    compiled = [t.clone() for t in pools]
    expected = step(*eager)
    got = torch.compile(step, fullgraph=True)(*compiled)
    assert_close(got, expected, 1e-6, "output")
    for a, b, name in zip(compiled, eager, ["pool", "k_cache", "v_cache"]):
        assert torch.equal(a, b), name
