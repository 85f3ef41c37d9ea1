"""rudnn.torch.LSTM loads torch.nn.LSTM's state_dict unchanged and gives
its outputs: stacked, bidirectional, batch first, packed sequences."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import rudnn
import rudnn.torch as rt
from conftest import assert_close


@pytest.mark.parametrize("bidirectional,batch_first", [(True, True), (False, False)])
def test_lstm_matches_torch(bidirectional, batch_first):
    reference = torch.nn.LSTM(
        5, 7, num_layers=2, bidirectional=bidirectional, batch_first=batch_first
    )
    ours = rt.LSTM(5, 7, num_layers=2, bidirectional=bidirectional, batch_first=batch_first)
    ours.load_state_dict(reference.state_dict())
    x = torch.randn(3, 9, 5) if batch_first else torch.randn(9, 3, 5)
    directions = 2 if bidirectional else 1
    h0, c0 = torch.randn(2 * directions, 3, 7), torch.randn(2 * directions, 3, 7)
    with torch.no_grad():
        out, (h_n, c_n) = ours(x, (h0, c0))
        reference.double()
        out_ref, (h_ref, c_ref) = reference(x.double(), (h0.double(), c0.double()))
    assert_close(out, out_ref, 1e-5, "out")
    assert_close(h_n, h_ref, 1e-5, "h_n")
    assert_close(c_n, c_ref, 1e-5, "c_n")


def test_f32_products_round_to_tf32_only_where_cudnn_would(monkeypatch):
    # On CPU tensors never (torch.nn.LSTM's CPU kernels are exact fp32); on
    # CUDA ones while torch.backends.cudnn.allow_tf32 is set, read at each
    # call. Forced here on the CPU, the products round their operands to
    # TF32: off fp32's result by more than fp32's error, within TF32's.
    reference = torch.nn.LSTM(24, 20, num_layers=2, bidirectional=True)
    ours = rt.LSTM(24, 20, num_layers=2, bidirectional=True)
    ours.load_state_dict(reference.state_dict())
    x = torch.randn(6, 17, 24)
    with torch.no_grad():
        exact, _ = ours(x)
        monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
        assert not rt.LSTM._allow_tf32(x)
        monkeypatch.setattr(type(ours), "_allow_tf32", staticmethod(lambda input: True))
        rounded, _ = ours(x)
        reference.double()
        want, _ = reference(x.double())
    assert_close(exact, want, 1e-5, "out")
    assert_close(rounded, want, 5e-3, "out in TF32")
    assert (rounded.double() - want).abs().max() > 1e-5 * want.abs().max()


def test_lstm_packed_sequences():
    reference = torch.nn.LSTM(4, 6, bidirectional=True, batch_first=True, bias=False)
    ours = rt.LSTM(4, 6, bidirectional=True, batch_first=True, bias=False)
    ours.load_state_dict(reference.state_dict())
    x, lengths = torch.randn(3, 8, 4), torch.tensor([8, 3, 5])
    packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
    with torch.no_grad():
        out, (h_n, _) = ours(packed)
        reference.double()
        out_ref, (h_ref, _) = reference(
            pack_padded_sequence(x.double(), lengths, batch_first=True, enforce_sorted=False)
        )
    out, _ = pad_packed_sequence(out, batch_first=True)
    out_ref, _ = pad_packed_sequence(out_ref, batch_first=True)
    assert_close(out, out_ref, 1e-5, "out")
    assert_close(h_n, h_ref, 1e-5, "h_n")


def test_lstm_bad_inputs_name_the_argument():
    lstm = rt.LSTM(4, 6)
    with pytest.raises(rudnn.InvalidArgument, match="'input'"):
        lstm(torch.randn(5, 2, 3))
    with pytest.raises(rudnn.InvalidArgument, match="'h0'"):
        lstm(torch.randn(5, 2, 4), (torch.zeros(1, 3, 6), torch.zeros(1, 2, 6)))
    with pytest.raises(rudnn.Unsupported, match="proj_size"):
        rt.LSTM(4, 6, proj_size=2)


def _pair(bidirectional, batch_first, bias=True, recompute_gates=False, layers=2):
    """A torch.nn.LSTM in float64 and rudnn's LSTM in f32 on its state_dict."""
    reference = torch.nn.LSTM(
        5, 6, num_layers=layers, bias=bias, bidirectional=bidirectional,
        batch_first=batch_first,
    ).double()
    ours = rt.LSTM(
        5, 6, num_layers=layers, bias=bias, bidirectional=bidirectional,
        batch_first=batch_first, recompute_gates=recompute_gates,
    )
    ours.load_state_dict({k: v.float() for k, v in reference.state_dict().items()})
    return reference, ours


def _gradients(module, inputs, hx, d_out, d_h, d_c, packed_lengths=None, batch_first=False):
    """The gradients of ⟨d_out, out⟩ + ⟨d_h, h_n⟩ + ⟨d_c, c_n⟩ with respect to
    the input, h0, c0 and each parameter (in the state_dict's order)."""
    leaves = [inputs, *hx]
    for leaf in leaves:
        leaf.requires_grad_(True)
    given = inputs
    if packed_lengths is not None:
        given = pack_padded_sequence(
            inputs, packed_lengths, batch_first=batch_first, enforce_sorted=False
        )
    out, (h_n, c_n) = module(given, tuple(hx))
    if packed_lengths is not None:
        out, _ = pad_packed_sequence(out, batch_first=batch_first, total_length=inputs.shape[1 if batch_first else 0])
    loss = (out * d_out).sum() + (h_n * d_h).sum() + (c_n * d_c).sum()
    parameters = [p for _, p in module.named_parameters()]
    return torch.autograd.grad(loss, leaves + parameters)


@pytest.mark.parametrize(
    "bidirectional,batch_first,bias,recompute_gates",
    [(True, True, True, False), (False, False, False, True)],
)
def test_lstm_gradients_match_torch(bidirectional, batch_first, bias, recompute_gates):
    reference, ours = _pair(bidirectional, batch_first, bias, recompute_gates)
    directions = 2 if bidirectional else 1
    x = torch.randn(3, 7, 5) if batch_first else torch.randn(7, 3, 5)
    h0, c0 = torch.randn(2 * directions, 3, 6), torch.randn(2 * directions, 3, 6)
    d_out = torch.randn(*x.shape[:2], directions * 6)
    d_h, d_c = torch.randn_like(h0), torch.randn_like(c0)
    want = _gradients(reference, x.double(), [h0.double(), c0.double()],
                      d_out.double(), d_h.double(), d_c.double())
    got = _gradients(ours, x.clone(), [h0.clone(), c0.clone()], d_out, d_h, d_c)
    names = ["input", "h0", "c0"] + [n for n, _ in ours.named_parameters()]
    for name, g, w in zip(names, got, want):
        assert_close(g, w, 1e-4, name)


def test_lstm_gradients_through_packed_sequences():
    reference, ours = _pair(True, True, layers=1)
    x, lengths = torch.randn(4, 6, 5), torch.tensor([6, 1, 4, 3])
    h0, c0 = torch.randn(2, 4, 6), torch.randn(2, 4, 6)
    d_out = torch.randn(4, 6, 12)
    d_h, d_c = torch.randn_like(h0), torch.randn_like(c0)
    want = _gradients(reference, x.double(), [h0.double(), c0.double()], d_out.double(),
                      d_h.double(), d_c.double(), lengths, batch_first=True)
    got = _gradients(ours, x.clone(), [h0.clone(), c0.clone()], d_out, d_h, d_c, lengths,
                     batch_first=True)
    names = ["input", "h0", "c0"] + [n for n, _ in ours.named_parameters()]
    for name, g, w in zip(names, got, want):
        assert_close(g, w, 1e-4, name)
    # Past each length the input gets no gradient.
    assert torch.count_nonzero(got[0][1, 1:]) == 0


def test_lstm_trains_under_torch_compile():
    torch.manual_seed(0)
    ours = rt.LSTM(3, 4, batch_first=True)
    compiled = torch.compile(ours, backend="aot_eager", fullgraph=True)
    x = torch.randn(2, 5, 3, requires_grad=True)
    out, (h_n, _) = compiled(x)
    (out.square().sum() + h_n.sum()).backward()
    eager = rt.LSTM(3, 4, batch_first=True)
    eager.load_state_dict(ours.state_dict())
    x2 = x.detach().clone().requires_grad_(True)
    out2, (h2, _) = eager(x2)
    (out2.square().sum() + h2.sum()).backward()
    assert_close(x.grad, x2.grad, 1e-6, "input")
    assert_close(ours.weight_hh_l0.grad, eager.weight_hh_l0.grad, 1e-6, "weight_hh_l0")


def test_lstm_refuses_training_options_at_construction():
    with pytest.raises(rudnn.Unsupported, match="dropout"):
        rt.LSTM(4, 6, num_layers=2, dropout=0.1)


@pytest.mark.parametrize("batch_first", [False, True])
def test_lstm_takes_unbatched_sequences_as_torch_does(batch_first):
    reference, ours = _pair(True, batch_first, layers=1)
    x = torch.randn(6, 5, requires_grad=True)
    h0, c0 = torch.randn(2, 6), torch.randn(2, 6)
    out, (h_n, c_n) = ours(x, (h0, c0))
    out_ref, (h_ref, c_ref) = reference(x.double(), (h0.double(), c0.double()))
    assert out.shape == (6, 12) and h_n.shape == (2, 6)
    assert_close(out, out_ref, 1e-5, "out")
    assert_close(c_n, c_ref, 1e-5, "c_n")
    out.sum().backward()
    x_ref = x.detach().double().requires_grad_(True)
    reference(x_ref, (h0.double(), c0.double()))[0].sum().backward()
    assert_close(x.grad, x_ref.grad, 1e-4, "input gradient")
    ours.flatten_parameters()  # torch.nn.LSTM's, for code that calls it
    assert [len(layer) for layer in ours.all_weights] == [4, 4]
