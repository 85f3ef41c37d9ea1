#!/usr/bin/env python3
"""Writes a torch.nn.LSTM's (with --cell gru, a torch.nn.GRU's) state_dict
and inputs as .npy files named as examples/lstm.mlir (examples/gru.mlir)
names its arguments (x, h0, c0, weight_ih_l0, ..., bias_hh_l1_reverse), so
`rudnn-run --inputs DIR` runs that model, and torch's own outputs (out,
h_n, c_n) under DIR/torch/ to compare with.

    python3 bench/lstm_state_dict.py DIR [--model MODEL.pt] [--steps T]
                                        [--batch B] [--seed S] [--cell gru]

Without --model, a freshly initialised torch.nn.LSTM(32, 48, num_layers=2,
bidirectional=True) or torch.nn.GRU of that shape (the examples'); with
it, a saved module or state_dict of that shape.

    python3 bench/lstm_state_dict.py /tmp/lstm
    rudnn-run examples/lstm.mlir --inputs /tmp/lstm --outputs /tmp/out
"""
import argparse
import os


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("--model")
    parser.add_argument("--steps", type=int, default=9)
    parser.add_argument("--batch", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cell", choices=("lstm", "gru"), default="lstm")
    args = parser.parse_args()

    import numpy as np
    import torch

    torch.manual_seed(args.seed)
    gru = args.cell == "gru"
    lstm = (torch.nn.GRU if gru else torch.nn.LSTM)(32, 48, num_layers=2,
                                                   bidirectional=True)
    if args.model:
        saved = torch.load(args.model, map_location="cpu")
        lstm.load_state_dict(saved.state_dict()
                             if isinstance(saved, torch.nn.Module) else saved)
    lstm = lstm.float().eval()
    x = torch.randn(args.steps, args.batch, 32)
    h0 = 0.5 * torch.randn(4, args.batch, 48)
    c0 = torch.randn(4, args.batch, 48)
    with torch.no_grad():
        if gru:
            out, h_n = lstm(x, h0)
        else:
            out, (h_n, c_n) = lstm(x, (h0, c0))
    os.makedirs(os.path.join(args.directory, "torch"), exist_ok=True)
    states = {"h0": h0} if gru else {"h0": h0, "c0": c0}
    tensors = {"x": x, **states, **lstm.state_dict()}
    for name, tensor in tensors.items():
        np.save(os.path.join(args.directory, name + ".npy"),
                tensor.detach().float().numpy())
    results = {"out": out, "h_n": h_n} if gru else {"out": out, "h_n": h_n, "c_n": c_n}
    for name, tensor in results.items():
        np.save(os.path.join(args.directory, "torch", name + ".npy"),
                tensor.float().numpy())
    print(f"wrote {len(tensors)} inputs to {args.directory} and torch's "
          f"outputs to {os.path.join(args.directory, 'torch')}")


if __name__ == "__main__":
    main()
