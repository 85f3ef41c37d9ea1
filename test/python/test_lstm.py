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
