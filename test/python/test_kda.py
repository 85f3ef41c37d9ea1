"""chunk_kda against the KDA recurrence written in PyTorch, token by
token in float64: outputs, final states and every gradient, batched and
packed, with chunk tails and odd head dims."""

import inspect

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt
from conftest import assert_close, gradients


def recurrence(q, k, v, g, beta, scale, initial_state=None, qk_l2norm=False):
    """o [B, T, H, V] and the final state [B, H, K, V], one token at a time."""
    if qk_l2norm:
        q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + 1e-6)
        k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + 1e-6)
    B, T, H, K = q.shape
    state = q.new_zeros(B, H, K, v.shape[-1]) if initial_state is None else initial_state
    outputs = []
    for t in range(T):
        state = state * torch.exp(g[:, t])[..., None]
        update = beta[:, t, :, None] * (v[:, t] - torch.einsum("bhk,bhkv->bhv", k[:, t], state))
        state = state + torch.einsum("bhk,bhv->bhkv", k[:, t], update)
        outputs.append(scale * torch.einsum("bhk,bhkv->bhv", q[:, t], state))
    return torch.stack(outputs, 1), state


INPUT_NAMES = ["q", "k", "v", "g", "beta", "initial_state"]


def gradient_pairs(ours, theirs, leaves, weight, names=INPUT_NAMES):
    """(ours, the reference's, name) for each leaf: the gradients of
    ⟨weight, ours(*leaves)⟩ and of ⟨weight, theirs⟩ on the leaves in
    float64."""
    got = gradients(ours, leaves, weight)
    want = gradients(theirs, [t.double() for t in leaves], weight.double())
    return zip(got, want, names)


def assert_matches(ours, theirs, leaves, weight, names=INPUT_NAMES, output="o"):
    """ours on `leaves` against theirs, the reference, on them in float64:
    the result (named `output`; None: compared by the caller) and every
    gradient (see gradient_pairs)."""
    if output is not None:
        assert_close(ours(*leaves), theirs(*[t.double() for t in leaves]), 1e-4, output)
    for a, b, name in gradient_pairs(ours, theirs, leaves, weight, names):
        assert_close(a, b, 1e-4, "d" + name)


def inputs(B, T, H, K, V, dtype=torch.float32):
    q, k = torch.randn(B, T, H, K, dtype=dtype), torch.randn(B, T, H, K, dtype=dtype)
    k = F.normalize(k.float(), dim=-1).to(dtype)  # keeps the delta rule contractive
    v = torch.randn(B, T, H, V, dtype=dtype)
    g = -torch.rand(B, T, H, K) * 0.2
    beta = torch.rand(B, T, H, dtype=dtype)
    return q, k, v, g, beta


@pytest.mark.parametrize("qk_l2norm", [False, True])
def test_chunk_kda_matches_the_recurrence(qk_l2norm):
    B, T, H, K, V = 2, 70, 2, 17, 9  # two chunks of 64, the second a tail of 6
    q, k, v, g, beta = inputs(B, T, H, K, V)
    s0 = torch.randn(B, H, K, V) * 0.1
    scale = 0.2
    o, final = rt.chunk_kda(
        q,
        k,
        v,
        g,
        beta,
        scale=scale,
        initial_state=s0,
        output_final_state=True,
        use_qk_l2norm_in_kernel=qk_l2norm,
    )
    args = [t.double() for t in (q, k, v, g, beta)]
    o_ref, final_ref = recurrence(*args, scale, s0.double(), qk_l2norm)
    assert_close(o, o_ref, 1e-4, "o")
    assert_close(final, final_ref, 1e-4, "final_state")

    d_out, d_final = torch.randn_like(o), torch.randn_like(final)

    def ours(q, k, v, g, beta, s0):
        o, final = rt.chunk_kda(
            q, k, v, g, beta, scale, s0, True, use_qk_l2norm_in_kernel=qk_l2norm
        )
        return torch.cat([o.flatten(), final.flatten()])

    def theirs(q, k, v, g, beta, s0):
        o, final = recurrence(q, k, v, g, beta, scale, s0, qk_l2norm)
        return torch.cat([o.flatten(), final.flatten()])

    weight = torch.cat([d_out.flatten(), d_final.flatten()])
    assert_matches(ours, theirs, [q, k, v, g, beta, s0], weight, output=None)


def test_chunk_kda_packed_sequences():
    lengths = [33, 1, 40]
    cu_seqlens = torch.tensor([0, 33, 34, 74])
    q, k, v, g, beta = inputs(1, sum(lengths), 2, 16, 16)
    s0 = torch.randn(len(lengths), 2, 16, 16) * 0.1
    d_out = torch.randn(1, sum(lengths), 2, 16)

    def ours(q, k, v, g, beta, s0):
        return rt.chunk_kda(q, k, v, g, beta, initial_state=s0, cu_seqlens=cu_seqlens)[0]

    def theirs(q, k, v, g, beta, s0):
        outputs = []
        for n in range(len(lengths)):
            rows = slice(cu_seqlens[n], cu_seqlens[n + 1])
            o, _ = recurrence(
                q[:, rows],
                k[:, rows],
                v[:, rows],
                g[:, rows],
                beta[:, rows],
                16**-0.5,
                s0[n : n + 1],
            )
            outputs.append(o)
        return torch.cat(outputs, 1)

    assert_matches(ours, theirs, [q, k, v, g, beta, s0], d_out)


def test_chunk_kda_bf16():
    q, k, v, g, beta = inputs(1, 40, 2, 32, 32, dtype=torch.bfloat16)
    o, final = rt.chunk_kda(q, k, v, g, beta)
    assert final is None and o.dtype == torch.bfloat16
    o_ref, _ = recurrence(*(t.double() for t in (q, k, v, g, beta)), 32**-0.5)
    assert_close(o, o_ref, 3e-2, "o")


def test_chunk_kda_bad_inputs_name_the_argument():
    q, k, v, g, beta = inputs(2, 8, 2, 16, 16)
    with pytest.raises(rudnn.InvalidArgument, match="'beta'"):
        rt.chunk_kda(q, k, v, g, beta[:, :4])
    with pytest.raises(rudnn.InvalidArgument, match="'initial_state'"):
        rt.chunk_kda(q, k, v, g, beta, initial_state=torch.zeros(2, 2, 16, 8))
    with pytest.raises(rudnn.InvalidArgument, match="'q'"):
        rt.chunk_kda(q, k, v, g, beta, cu_seqlens=torch.tensor([0, 8]))
    with pytest.raises(rudnn.InvalidArgument, match="'g'"):
        rt.chunk_kda(q, k, v, g[..., :8], beta)
    with pytest.raises(rudnn.InvalidArgument, match="'v'"):
        rt.chunk_kda(q[:, :, :1].repeat(1, 1, 2, 1), k, torch.randn(2, 8, 3, 16), g, beta)
    with pytest.raises(rudnn.InvalidArgument, match="'A_log'"):
        rt.chunk_kda(q, k, v, g, beta, use_gate_in_kernel=True)
    with pytest.raises(rudnn.InvalidArgument, match="'dt_bias'"):
        rt.chunk_kda(
            q,
            k,
            v,
            g,
            beta,
            use_gate_in_kernel=True,
            A_log=torch.zeros(2),
            dt_bias=torch.zeros(2 * 16 + 1),
        )
    with pytest.raises(rudnn.InvalidArgument, match="'lower_bound'"):
        rt.chunk_kda(
            q, k, v, g, beta, use_gate_in_kernel=True, A_log=torch.zeros(2), lower_bound=1.0
        )


def test_gradients_of_the_final_state_alone():
    # The output unused: its gradient is zero, only the state's flows back.
    q, k, v, g, beta = inputs(2, 70, 2, 17, 9)
    s0 = torch.randn(2, 2, 17, 9) * 0.1
    d_final = torch.randn(2, 2, 17, 9)

    def ours(q, k, v, g, beta, s0):
        return rt.chunk_kda(q, k, v, g, beta, 0.2, s0, True)[1]

    def theirs(q, k, v, g, beta, s0):
        return recurrence(q, k, v, g, beta, 0.2, s0)[1]

    for a, b, name in gradient_pairs(ours, theirs, [q, k, v, g, beta, s0], d_final):
        if name == "q":
            assert torch.all(a == 0), "dq of a loss on the final state alone"
        else:
            assert_close(a, b, 1e-4, "d" + name)


@pytest.mark.parametrize("lower_bound", [None, -5.0], ids=["softplus", "bounded"])
def test_chunk_kda_gate_and_beta_from_raw_projections(lower_bound):
    # fla's use_gate_in_kernel and use_beta_sigmoid_in_kernel: g holds the raw
    # gate projections, beta logits; gradients reach A_log and dt_bias.
    B, T, H, K, V = 1, 40, 2, 16, 8
    q, k, v, _, _ = inputs(B, T, H, K, V)
    g_raw, beta_logits = torch.randn(B, T, H, K), torch.randn(B, T, H)
    A_log, dt_bias = torch.randn(H) * 0.5, torch.randn(H * K) * 0.5
    d_out = torch.randn(B, T, H, V)

    def ours(q, k, v, g, beta, A_log, dt_bias):
        return rt.chunk_kda(
            q,
            k,
            v,
            g,
            beta,
            use_gate_in_kernel=True,
            A_log=A_log,
            dt_bias=dt_bias,
            lower_bound=lower_bound,
            use_beta_sigmoid_in_kernel=True,
        )[0]

    def theirs(q, k, v, g, beta, A_log, dt_bias):
        x = g + dt_bias.view(H, K)
        if lower_bound is None:
            g = -torch.exp(A_log)[:, None] * F.softplus(x)
        else:
            g = lower_bound * torch.sigmoid(torch.exp(A_log)[:, None] * x)
        return recurrence(q, k, v, g, torch.sigmoid(beta), K**-0.5)[0]

    leaves = [q, k, v, g_raw, beta_logits, A_log, dt_bias]
    assert_matches(ours, theirs, leaves, d_out, INPUT_NAMES[:5] + ["A_log", "dt_bias"])


def test_chunk_kda_grouped_value_heads():
    # q and k with 2 heads, each shared by 3 value heads (v, g, beta, state: 6).
    B, T, Q, H, K, V = 1, 37, 2, 6, 16, 8
    q, k = torch.randn(B, T, Q, K), F.normalize(torch.randn(B, T, Q, K), dim=-1)
    v, g = torch.randn(B, T, H, V), -torch.rand(B, T, H, K) * 0.2
    beta, s0 = torch.rand(B, T, H), torch.randn(B, H, K, V) * 0.1
    d_out = torch.randn(B, T, H, V)

    def ours(q, k, v, g, beta, s0):
        return rt.chunk_kda(q, k, v, g, beta, initial_state=s0)[0]

    def theirs(q, k, v, g, beta, s0):
        q, k = (t.repeat_interleave(H // Q, dim=2) for t in (q, k))
        return recurrence(q, k, v, g, beta, K**-0.5, s0)[0]

    assert_matches(ours, theirs, [q, k, v, g, beta, s0], d_out)


def test_chunk_kda_packed_sequences_from_a_zero_state():
    # Without initial_state the count of final states (one per sequence)
    # comes from the offsets alone.
    cu_seqlens = torch.tensor([0, 5, 6, 20])
    q, k, v, g, beta = inputs(1, 20, 2, 16, 8)
    o, final = rt.chunk_kda(q, k, v, g, beta, output_final_state=True, cu_seqlens=cu_seqlens)
    assert final.shape == (3, 2, 16, 8)
    for n in range(3):
        rows = slice(cu_seqlens[n], cu_seqlens[n + 1])
        o_ref, final_ref = recurrence(*(t[:, rows].double() for t in (q, k, v, g, beta)), 0.25)
        assert_close(o[:, rows], o_ref, 1e-4, f"o of sequence {n}")
        assert_close(final[n : n + 1], final_ref, 1e-4, f"final_state of sequence {n}")


# fla-core 0.6.0's chunk_kda: (name, default) in order, then **kwargs.
FLA_CHUNK_KDA = [
    ("q", inspect.Parameter.empty),
    ("k", inspect.Parameter.empty),
    ("v", inspect.Parameter.empty),
    ("g", inspect.Parameter.empty),
    ("beta", inspect.Parameter.empty),
    ("scale", None),
    ("initial_state", None),
    ("output_final_state", False),
    ("use_qk_l2norm_in_kernel", False),
    ("use_gate_in_kernel", False),
    ("use_beta_sigmoid_in_kernel", False),
    ("allow_neg_eigval", False),
    ("safe_gate", False),
    ("lower_bound", None),
    ("disable_recompute", False),
    ("return_intermediate_states", False),
    ("state_v_first", False),
    ("cu_seqlens", None),
    ("cu_seqlens_cpu", None),
    ("cp_context", None),
    ("use_graph", False),
    ("max_num_seqs", None),
    ("kwargs", inspect.Parameter.empty),
]


def parameters(function):
    return [(p.name, p.default) for p in inspect.signature(function).parameters.values()]


def test_chunk_kda_takes_fla_cores_signature():
    from fla.ops.kda import chunk_kda as fla_chunk_kda  # fla-core 0.6.0 (python-env)

    assert parameters(rt.chunk_kda) == parameters(fla_chunk_kda) == FLA_CHUNK_KDA


def test_chunk_kda_takes_fla_cores_options():
    torch.manual_seed(5)
    q, k, v, g, beta = inputs(1, 21, 2, 16, 8)
    s0 = torch.randn(1, 2, 16, 8)
    o, final = rt.chunk_kda(q, k, v, g, beta, initial_state=s0, output_final_state=True)
    # States held [N, H, V, K], by either name; any float dtype in.
    for name in ("state_v_first", "transpose_state_layout"):
        o_v, final_v = rt.chunk_kda(
            q, k, v, g, beta, initial_state=s0.transpose(-1, -2), output_final_state=True,
            **{name: True},
        )
        assert_close(o_v, o, 1e-6, "o")
        assert_close(final_v.transpose(-1, -2), final, 1e-6, "final_state")
    o_half, _ = rt.chunk_kda(q, k, v, g, beta, initial_state=s0.bfloat16())
    o_f32, _ = rt.chunk_kda(q, k, v, g, beta, initial_state=s0.bfloat16().float())
    assert_close(o_half, o_f32, 1e-6, "o from a bf16 state")
    # beta as logits of 2·sigmoid: fla's negative eigenvalues.
    logits = torch.randn_like(beta)
    o_neg, _ = rt.chunk_kda(
        q, k, v, g, logits, use_beta_sigmoid_in_kernel=True, allow_neg_eigval=True
    )
    assert_close(o_neg, recurrence(q, k, v, g, 2 * torch.sigmoid(logits), 0.25)[0], 1e-4, "o")
    # What changes nothing here is taken as fla takes it.
    o_same, _ = rt.chunk_kda(
        q, k, v, g, beta, initial_state=s0, disable_recompute=True, use_graph=True,
        max_num_seqs=4, chunk_size=32,
    )
    assert_close(o_same, o, 1e-6, "o")


@pytest.mark.parametrize(
    "options, name",
    [
        ({"return_intermediate_states": True}, "return_intermediate_states"),
        ({"cp_context": object()}, "cp_context"),
        ({"allow_neg_eigval": True}, "allow_neg_eigval"),
        ({"chunk_size": 16}, "chunk_size"),
        ({"safe_gate": True, "use_gate_in_kernel": True}, "lower_bound"),
        ({"safe_gate": True, "use_gate_in_kernel": True, "lower_bound": -6.0}, "lower_bound"),
        ({"state_v_first": True, "transpose_state_layout": True}, "transpose_state_layout"),
    ],
)
def test_chunk_kda_refuses_what_it_cannot_honour_by_name(options, name):
    q, k, v, g, beta = inputs(1, 8, 2, 16, 8)
    with pytest.raises((NotImplementedError, rudnn.InvalidArgument), match=name):
        rt.chunk_kda(q, k, v, g, beta, **options)


# Every pair of the three options' values, in four calls.
@pytest.mark.parametrize(
    "qk_l2norm, with_initial_state, output_final_state",
    [(False, False, False), (False, True, True), (True, False, True), (True, True, False)],
)
def test_chunk_kda_packed_with_every_optional_argument(
    qk_l2norm, with_initial_state, output_final_state
):
    torch.manual_seed(7)
    cu_seqlens = torch.tensor([0, 9, 10, 31], dtype=torch.int32)
    q, k, v, g, beta = inputs(1, 31, 2, 16, 8)
    s0 = torch.randn(3, 2, 16, 8) if with_initial_state else None
    o, final = rt.chunk_kda(
        q, k, v, g, beta, None, s0, output_final_state, qk_l2norm, cu_seqlens=cu_seqlens
    )
    assert (final is None) == (not output_final_state)
    for n in range(3):
        rows = slice(cu_seqlens[n], cu_seqlens[n + 1])
        start = None if s0 is None else s0[n : n + 1].double()
        o_ref, final_ref = recurrence(
            *(t[:, rows].double() for t in (q, k, v, g, beta)), 0.25, start, qk_l2norm
        )
        assert_close(o[:, rows], o_ref, 1e-4, f"o of sequence {n}")
        if output_final_state:
            assert_close(final[n : n + 1], final_ref, 1e-4, f"final_state of sequence {n}")


# fla-core 0.6.0's fused_recurrent_kda: its names in order, each with
# chunk_kda's default (A_log and dt_bias, positional here, default None).
FLA_FUSED_RECURRENT_KDA = [
    (name, dict(FLA_CHUNK_KDA).get(name))
    for name in "q k v g beta A_log dt_bias scale initial_state output_final_state "
    "use_qk_l2norm_in_kernel use_gate_in_kernel use_beta_sigmoid_in_kernel "
    "allow_neg_eigval lower_bound state_v_first cu_seqlens kwargs".split()
]


def test_fused_recurrent_kda_takes_fla_cores_signature_and_computes_the_recurrence():
    from fla.ops.kda import fused_recurrent_kda as fla_fused_recurrent_kda

    assert (
        parameters(rt.fused_recurrent_kda)
        == parameters(fla_fused_recurrent_kda)
        == FLA_FUSED_RECURRENT_KDA
    )
    torch.manual_seed(17)
    q, k, v, g, beta = inputs(2, 3, 2, 16, 8)
    s0 = torch.randn(2, 2, 16, 8)
    o, final = rt.fused_recurrent_kda(q, k, v, g, beta, None, None, None, s0, True, True)
    o_ref, final_ref = recurrence(
        *(t.double() for t in (q, k, v, g, beta)), 0.25, s0.double(), qk_l2norm=True
    )
    assert_close(o, o_ref, 1e-4, "o")
    assert_close(final, final_ref, 1e-4, "final_state")
    with pytest.raises(NotImplementedError, match="ssm_state_indices"):
        rt.fused_recurrent_kda(q, k, v, g, beta, ssm_state_indices=torch.tensor([0, 1]))
