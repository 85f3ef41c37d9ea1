"""Every option of every drop-in is checked before any IR is built: a
float that is not finite (as the float32 the operators take) or of the
wrong sign, an integer option that is not an integer or lies beyond what
the kernels take, a dim of 0 the operator cannot compute on: each is an
InvalidArgument naming the argument, with nothing written."""

import math

import pytest
import torch
import torch.nn.functional as F

import rudnn
import rudnn.torch as rt

NAN, INF = math.nan, math.inf
BEYOND_FLOAT32 = 1e39  # finite as a double, inf as a float32
BELOW_FLOAT32 = 1e-50  # positive as a double, 0 as a float32


def attention_inputs():
    return torch.randn(1, 4, 2, 8), torch.randn(1, 5, 2, 8), torch.randn(1, 5, 2, 8)


def kda_inputs(B=1, T=4, H=2, K=8, V=8):
    q, k = torch.randn(B, T, H, K), F.normalize(torch.randn(B, T, H, K), dim=-1)
    return q, k, torch.randn(B, T, H, V), -torch.rand(B, T, H, K), torch.rand(B, T, H)


def decode_state():
    return torch.randn(3, 2, 8, 8)


def cache_state():
    return torch.randn(2, 6, 1, 8), torch.randn(2, 6, 1, 8)


def kv_call(caches, **options):
    q, new = torch.randn(2, 1, 2, 8), torch.randn(2, 1, 1, 8)
    return rt.kv_cache_attention(q, *caches, new, new, torch.tensor([1, 2]), **options)


def decode_call(pool, **options):
    return rt.kda_decode(*kda_inputs(B=2, T=1), pool, torch.tensor([0, 2]), **options)


GATE = dict(use_gate_in_kernel=True, A_log=torch.zeros(2))

# (the call, what it updates in place (or None), the option, its bad values)
FLOAT_OPTIONS = [
    (
        lambda _, x: rt.flash_attn_func(*attention_inputs(), softmax_scale=x),
        None,
        "softmax_scale",
        [NAN, INF, -INF, -1.0, 0.0, BEYOND_FLOAT32, BELOW_FLOAT32],
    ),
    (
        lambda _, x: rt.flash_attn_func(*attention_inputs(), softcap=x),
        None,
        "softcap",
        [NAN, INF, -1.0, BEYOND_FLOAT32, BELOW_FLOAT32],
    ),
    (
        lambda _, x: rt.flash_attn_varlen_func(
            *(t[0] for t in attention_inputs()),
            torch.tensor([0, 4]),
            torch.tensor([0, 5]),
            softmax_scale=x,
        ),
        None,
        "softmax_scale",
        [NAN, -INF],
    ),
    (
        lambda caches, x: kv_call(caches, softmax_scale=x),
        cache_state,
        "softmax_scale",
        [NAN, INF, -2.0, BELOW_FLOAT32],
    ),
    (lambda _, x: rt.chunk_kda(*kda_inputs(), scale=x), None, "scale", [NAN, INF, 0.0, -0.5]),
    (
        lambda _, x: rt.chunk_kda(*kda_inputs(), lower_bound=x, **GATE),
        None,
        "lower_bound",
        [NAN, -INF, 0.0, 2.0, -BEYOND_FLOAT32, -BELOW_FLOAT32],
    ),
    (lambda pool, x: decode_call(pool, scale=x), decode_state, "scale", [NAN, -INF]),
    (
        lambda pool, x: decode_call(pool, lower_bound=x, **GATE),
        decode_state,
        "lower_bound",
        [NAN, -INF],
    ),
    (
        lambda _, x: rt.layer_norm(torch.randn(3, 8), (8,), eps=x),
        None,
        "eps",
        [NAN, INF, -1e-5, BEYOND_FLOAT32],
    ),
    (lambda _, x: rt.rms_norm(torch.randn(3, 8), (8,), eps=x), None, "eps", [NAN, -INF, -1.0]),
    (
        lambda _, x: rt.flash_attn_func(*attention_inputs(), softmax_scale=x),
        None,
        "softmax_scale",
        ["0.5", True, torch.ones(2)],
    ),
]
FLOAT_CASES = [
    pytest.param(call, state, name, value, id=f"{name}={value!r}-{i}")
    for i, (call, state, name, values) in enumerate(FLOAT_OPTIONS)
    for value in values
]


def assert_names(error, argument):
    assert type(error.value) is rudnn.InvalidArgument
    assert error.value.argument == argument
    assert f"'{argument}'" in str(error.value)
    assert "not valid rudnn IR" not in str(error.value)


@pytest.mark.parametrize("call,state,name,value", FLOAT_CASES)
def test_float_options_must_be_finite_float32_of_their_sign(call, state, name, value):
    tensors = state() if state is not None else None
    updated = [] if tensors is None else [tensors] if torch.is_tensor(tensors) else list(tensors)
    before = [t.clone() for t in updated]
    with pytest.raises(rudnn.InvalidArgument) as error:
        call(tensors, value)
    assert_names(error, name)
    for was, now in zip(before, updated):
        assert torch.equal(was, now), "an in-place tensor changed on a refused call"


def test_softcap_nan_is_refused_not_switched_off():
    q, k, v = attention_inputs()
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_func(q, k, v, softcap=NAN)
    assert_names(error, "softcap")
    assert torch.isfinite(rt.flash_attn_func(q, k, v, softcap=0.0)).all()  # 0: no softcap


@pytest.mark.parametrize(
    "window",
    [(2**40, 3), (3, 2**31), (-2, 0), (1.5, 2), (True, 0), (4,), "left", None],
    ids=str,
)
def test_window_sizes_beyond_int32_or_not_integers_are_refused(window):
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_func(*attention_inputs(), window_size=window)
    assert_names(error, "window_size")


@pytest.mark.parametrize("name", ["max_seqlen_q", "max_seqlen_k"])
@pytest.mark.parametrize("value", [-1, 2.5, True])
def test_varlen_maximal_lengths_are_sizes(name, value):
    q = torch.randn(4, 2, 8)
    offsets = torch.tensor([0, 4])
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_varlen_func(q, q, q, offsets, offsets, **{name: value})
    assert_names(error, name)


@pytest.mark.parametrize(
    "arguments,name",
    [
        (dict(hidden_size=0), "hidden_size"),
        (dict(hidden_size=-3), "hidden_size"),
        (dict(hidden_size=3.5), "hidden_size"),
        (dict(hidden_size=True), "hidden_size"),
        (dict(input_size=0), "input_size"),
        (dict(input_size="4"), "input_size"),
        (dict(num_layers=0), "num_layers"),
        (dict(num_layers=True), "num_layers"),
        (dict(num_layers=1025), "num_layers"),
        (dict(num_layers=2.0), "num_layers"),
        (dict(proj_size=-1), "proj_size"),
    ],
    ids=lambda a: str(a),
)
def test_lstm_sizes_are_positive_integers(arguments, name):
    sizes = dict(input_size=4, hidden_size=3) | arguments
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.LSTM(**sizes)
    assert_names(error, name)


@pytest.mark.parametrize("shape", [(-1,), (True,), (2.0,), ("4",)], ids=str)
def test_normalized_shape_holds_sizes(shape):
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.layer_norm(torch.randn(3, 4), shape)
    assert_names(error, "normalized_shape")


def test_zero_dims_the_attention_kernels_cannot_compute_on():
    q, k, v = attention_inputs()
    for tensors, name in (
        ((q[..., :0], k[..., :0], v), "q"),  # D = 0: o is the mean of v, not empty
        ((q, k, v[..., :0]), "v"),  # E = 0: lse is still to compute
        ((q, k[:, :, :0], v[:, :, :0]), "k"),  # no key head for 2 query heads
    ):
        with pytest.raises(rudnn.InvalidArgument) as error:
            rt.flash_attn_func(*tensors)
        assert_names(error, name)
        packed = [t[0] for t in tensors]
        with pytest.raises(rudnn.InvalidArgument) as error:
            rt.flash_attn_varlen_func(*packed, torch.tensor([0, 4]), torch.tensor([0, 5]))
        assert_names(error, name)


def test_zero_dims_kv_cache_attention_cannot_compute_on():
    # Each would still append the new tokens, so no result is empty.
    q, new = torch.randn(2, 1, 2, 8), torch.randn(2, 1, 1, 8)
    k_cache, v_cache = cache_state()
    lengths = torch.tensor([1, 2])
    before = k_cache.clone(), v_cache.clone()
    for (q_, kc, vc, k_, v_), name in (
        ((q[..., :0], k_cache[..., :0], v_cache, new[..., :0], new), "q"),
        ((q, k_cache, v_cache[..., :0], new, new[..., :0]), "v_cache"),
        ((q[:, :, :0], k_cache, v_cache, new, new), "q"),
        ((q, k_cache[:, :, :0], v_cache[:, :, :0], new[:, :, :0], new[:, :, :0]), "k_cache"),
    ):
        with pytest.raises(rudnn.InvalidArgument) as error:
            rt.kv_cache_attention(q_, kc, vc, k_, v_, lengths)
        assert_names(error, name)
    assert torch.equal(k_cache, before[0]) and torch.equal(v_cache, before[1])


def test_zero_dims_kda_cannot_compute_on():
    q, k, v, g, beta = kda_inputs()
    with pytest.raises(rudnn.InvalidArgument) as error:  # K = 0: o is 0, not empty
        rt.chunk_kda(q[..., :0], k[..., :0], v, g[..., :0], beta)
    assert_names(error, "q")
    with pytest.raises(rudnn.InvalidArgument) as error:  # no q head for 2 value heads
        rt.chunk_kda(q[:, :, :0], k[:, :, :0], v, g, beta)
    assert_names(error, "v")
    pool = decode_state()
    before = pool.clone()
    q, k, v, g, beta = kda_inputs(B=2, T=1)
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.kda_decode(q[..., :0], k[..., :0], v, g[..., :0], beta, pool[:, :, :0], torch.arange(2))
    assert_names(error, "q")
    assert torch.equal(pool, before)


def test_empty_offsets_are_refused():
    q = torch.randn(4, 2, 8)
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.flash_attn_varlen_func(
            q, q, q, torch.tensor([], dtype=torch.int32), torch.tensor([0, 4])
        )
    assert_names(error, "cu_seqlens_q")
    with pytest.raises(rudnn.InvalidArgument) as error:
        rt.chunk_kda(*kda_inputs(), cu_seqlens=torch.tensor([], dtype=torch.int64))
    assert_names(error, "cu_seqlens")
