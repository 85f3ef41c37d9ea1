"""rudnn.torch.GRU loads torch.nn.GRU's state_dict unchanged and gives its
outputs and gradients (torch.nn.GRU in float64 the reference): stacked,
bidirectional, batch first, without biases, packed sequences, unbatched
inputs, torch.compile."""

import pytest
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import rudnn
import rudnn.torch as rt
from conftest import assert_close


def _pair(bidirectional, batch_first, bias=True, layers=2, input_size=5, hidden=6):
    """A torch.nn.GRU in float64 and rudnn's GRU in f32 on its state_dict."""
    reference = torch.nn.GRU(
        input_size, hidden, num_layers=layers, bias=bias, bidirectional=bidirectional,
        batch_first=batch_first,
    ).double()
    ours = rt.GRU(
        input_size, hidden, num_layers=layers, bias=bias, bidirectional=bidirectional,
        batch_first=batch_first,
    )
    ours.load_state_dict({k: v.float() for k, v in reference.state_dict().items()})
    return reference, ours


def _gradients(module, inputs, h0, d_out, d_h, packed_lengths=None, batch_first=False):
    """The gradients of ⟨d_out, out⟩ + ⟨d_h, h_n⟩ with respect to the input,
    h0 and each parameter (in the state_dict's order)."""
    leaves = [inputs, h0]
    for leaf in leaves:
        leaf.requires_grad_(True)
    given = inputs
    if packed_lengths is not None:
        given = pack_padded_sequence(
            inputs, packed_lengths, batch_first=batch_first, enforce_sorted=False
        )
    out, h_n = module(given, h0)
    if packed_lengths is not None:
        out, _ = pad_packed_sequence(
            out, batch_first=batch_first, total_length=inputs.shape[1 if batch_first else 0]
        )
    loss = (out * d_out).sum() + (h_n * d_h).sum()
    parameters = [p for _, p in module.named_parameters()]
    return torch.autograd.grad(loss, leaves + parameters)


@pytest.mark.parametrize("bidirectional,batch_first", [(True, True), (False, False)])
def test_gru_matches_torch(bidirectional, batch_first):
    reference, ours = _pair(bidirectional, batch_first)
    x = torch.randn(3, 9, 5) if batch_first else torch.randn(9, 3, 5)
    h0 = torch.randn(2 * (2 if bidirectional else 1), 3, 6)
    with torch.no_grad():
        out, h_n = ours(x, h0)
        out_ref, h_ref = reference(x.double(), h0.double())
    assert_close(out, out_ref, 1e-5, "out")
    assert_close(h_n, h_ref, 1e-5, "h_n")


@pytest.mark.parametrize(
    "bidirectional,batch_first,bias", [(True, True, True), (False, False, False)]
)
def test_gru_gradients_match_torch(bidirectional, batch_first, bias):
    reference, ours = _pair(bidirectional, batch_first, bias)
    directions = 2 if bidirectional else 1
    x = torch.randn(3, 7, 5) if batch_first else torch.randn(7, 3, 5)
    h0 = torch.randn(2 * directions, 3, 6)
    d_out, d_h = torch.randn(*x.shape[:2], directions * 6), torch.randn_like(h0)
    want = _gradients(reference, x.double(), h0.double(), d_out.double(), d_h.double())
    got = _gradients(ours, x.clone(), h0.clone(), d_out, d_h)
    names = ["input", "h0"] + [n for n, _ in ours.named_parameters()]
    for name, g, w in zip(names, got, want):
        assert_close(g, w, 1e-4, name)


def test_gru_gradients_through_packed_sequences():
    reference, ours = _pair(True, True, layers=1)
    x, lengths = torch.randn(4, 6, 5), torch.tensor([6, 1, 4, 3])
    h0 = torch.randn(2, 4, 6)
    d_out, d_h = torch.randn(4, 6, 12), torch.randn_like(h0)
    want = _gradients(reference, x.double(), h0.double(), d_out.double(), d_h.double(),
                      lengths, batch_first=True)
    got = _gradients(ours, x.clone(), h0.clone(), d_out, d_h, lengths, batch_first=True)
    names = ["input", "h0"] + [n for n, _ in ours.named_parameters()]
    for name, g, w in zip(names, got, want):
        assert_close(g, w, 1e-4, name)
    # Past each length the input gets no gradient.
    assert torch.count_nonzero(got[0][1, 1:]) == 0


def test_gru_trains_under_torch_compile():
    torch.manual_seed(0)
    ours = rt.GRU(3, 4, batch_first=True)
    compiled = torch.compile(ours, backend="aot_eager", fullgraph=True)
    x = torch.randn(2, 5, 3, requires_grad=True)
    out, h_n = compiled(x)
    (out.square().sum() + h_n.sum()).backward()
    eager = rt.GRU(3, 4, batch_first=True)
    eager.load_state_dict(ours.state_dict())
    x2 = x.detach().clone().requires_grad_(True)
    out2, h2 = eager(x2)
    (out2.square().sum() + h2.sum()).backward()
    assert_close(x.grad, x2.grad, 1e-6, "input")
    assert_close(ours.bias_hh_l0.grad, eager.bias_hh_l0.grad, 1e-6, "bias_hh_l0")


def test_gru_takes_unbatched_sequences_as_torch_does():
    reference, ours = _pair(True, False, layers=1)
    x, h0 = torch.randn(6, 5, requires_grad=True), torch.randn(2, 6)
    out, h_n = ours(x, h0)
    out_ref, h_ref = reference(x.double(), h0.double())
    assert out.shape == (6, 12) and h_n.shape == (2, 6)
    assert_close(out, out_ref, 1e-5, "out")
    assert_close(h_n, h_ref, 1e-5, "h_n")
    ours.flatten_parameters()
    assert [len(layer) for layer in ours.all_weights] == [4, 4]


def test_gru_bad_inputs_name_the_argument():
    gru = rt.GRU(4, 6)
    with pytest.raises(rudnn.InvalidArgument, match="'input'"):
        gru(torch.randn(5, 2, 3))
    with pytest.raises(rudnn.InvalidArgument, match="'hx'"):
        gru(torch.randn(5, 2, 4), torch.zeros(1, 3, 6))
    with pytest.raises(rudnn.Unsupported, match="dropout"):
        rt.GRU(4, 6, num_layers=2, dropout=0.1)
