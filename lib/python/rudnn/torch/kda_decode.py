"""One decoding step of Kimi Delta Attention over a pool of per-request
states, as serving engines run flash-linear-attention's fused_recurrent_kda
(initial_state the pool, ssm_state_indices the slots, the final state
written back in place)."""

import torch

from rudnn.torch._common import (
    call,
    check_dim,
    check_tensor,
    check_updatable,
    int32_indices,
)
from rudnn.torch.kda import (
    _GATE_SCHEMA,
    _INPUTS_SCHEMA,
    _OPTIONS_SCHEMA,
    _apply,
    _attributes,
    _check_inputs,
    _tensors,
)


@torch.library.custom_op(
    "rudnn::kda_decode",
    mutates_args=("state_pool",),
    schema=f"({_INPUTS_SCHEMA}, Tensor(a!) state_pool, Tensor slots, {_GATE_SCHEMA}, "
    f"{_OPTIONS_SCHEMA}) -> Tensor",
)
def _kda_decode(q, k, v, g, beta, state_pool, slots, a_log, dt_bias, *options):
    if v.numel() == 0 or state_pool.shape[0] == 0:
        # No token or value channel to compute, or no slot in the pool: each
        # entry's o is 0 (empty) and the pool stays as it was.
        return v.new_zeros(v.shape)
    (output,) = call(
        "rudnn.kda_decode",
        _tensors(q, k, v, g, beta, a_log, dt_bias, state_pool=state_pool, slots=slots),
        ("output",),
        **_attributes(q, v, *options),
    )
    return output


@_kda_decode.register_fake
def _(q, k, v, g, beta, state_pool, slots, *rest):
    return v.new_empty(v.shape)


def kda_decode(
    q,
    k,
    v,
    g,
    beta,
    state_pool,
    slots,
    scale=None,
    use_qk_l2norm_in_kernel=False,
    *,
    use_gate_in_kernel=False,
    A_log=None,
    dt_bias=None,
    lower_bound=None,
    use_beta_sigmoid_in_kernel=False,
):
    """q, k, g [B, T, Q or H, K], v [B, T, H, V], beta [B, T, H]: entry b's
    T new tokens (1, or a few when speculating) start from
    state_pool[slots[b]] ([P, H, K, V]: f32, f16 or bf16) and leave their
    final state there, in place. slots [B] (int32 or int64), each slot at
    most once. Returns o [B, T, H, V]. An entry whose slot lies outside the
    pool or repeats is refused: its state untouched, its o 0. The input
    transforms, grouped value heads and scale as in chunk_kda. Forward
    only.

    An int64 slot beyond int32 is refused (InvalidArgument naming slots) on
    CPU; on CUDA, where reading it would synchronise, it becomes -1, outside
    the pool, so its entry is refused as above rather than wrapping to
    another request's slot. An empty pool refuses every entry."""
    heads = _check_inputs(q, k, v, g, beta)
    check_tensor("state_pool", state_pool, 4, like=q)
    check_dim("state_pool", state_pool, 1, heads, "value heads H")
    check_dim("state_pool", state_pool, 2, q.shape[3], "key dim K")
    check_dim("state_pool", state_pool, 3, v.shape[3], "value dim V")
    check_updatable("state_pool", state_pool)
    check_tensor("slots", slots, 1, dtypes=(torch.int32, torch.int64))
    check_dim("slots", slots, 0, q.shape[0], "batch")
    slots = int32_indices("slots", slots, device=q.device)
    return _apply(
        _kda_decode,
        (q, k, v, g, beta),
        (state_pool, slots),
        scale,
        use_qk_l2norm_in_kernel,
        use_gate_in_kernel,
        A_log,
        dt_bias,
        lower_bound,
        use_beta_sigmoid_in_kernel,
    )
