#!/usr/bin/env python3
"""Times torch.nn.LSTM (cuDNN) on what rudnn-bench-lstm times (with
`--cell gru`, torch.nn.GRU on what rudnn-bench-gru times): hidden size
H (input size H), L layers of D directions with biases and an initial
state, T steps of B entries, bf16 (bits 16) or f32 (bits 32), with the
same weights' distribution, forward (`ms`) and a training step (`train_ms`:
the forward with gradients, then the backward of every input and
parameter). Writes JSON. f32 is timed twice: as PyTorch
runs it by default (`torch`: cuDNN may use TF32, under
torch.backends.cudnn.allow_tf32, which the record names), and in strict
f32 with TF32 off (`torch_strict_f32`), the arithmetic rudnn's f32 does.

    python3 bench/torch_lstm.py --json out.json [--repeats 20]
                                [--shapes "H,B,T,L,D,bits;..."] [--cell gru]

Timing as rudnn-bench-lstm's: CUDA events around each call after three
warm-up calls, the median reported. The JSON is rewritten after every
shape, so a run cut short keeps what it measured.
"""
import json
import sys

from benchlib import arguments, median_ms, parse_shapes

# The LSTM's grid: one and two layers and directions; the GRU's: two of
# each (rudnn-bench-gru's).
GRU = "--cell" in sys.argv and sys.argv[sys.argv.index("--cell") + 1 :][:1] == ["gru"]
SHAPES = ";".join(f"{H},{B},512,{L},{D},{bits}" for bits in (16, 32)
                  for D in (1, 2) for L in (1, 2) for H in (256, 512, 1024)
                  for B in (1, 8, 64) if not GRU or (D == 2 and L == 2))


def train(rnn, x, states):
    """One training step's work: the forward with gradients, then the
    backward of every input and parameter."""
    x = x.detach().requires_grad_(True)
    states = tuple(t.detach().requires_grad_(True) for t in states)
    out, _ = rnn(x, states if len(states) > 1 else states[0])
    out.backward(out.detach())


def main():
    if "--cell" in sys.argv:  # argparse below knows benchlib's options only
        at = sys.argv.index("--cell")
        del sys.argv[at : at + 2]
    args = arguments(SHAPES)

    import torch

    def write(results):
        with open(args.json, "w") as out:
            json.dump({"op": "torch.gru" if GRU else "torch.lstm", "results": results},
                      out, indent=1)

    torch.backends.cudnn.benchmark = True
    results = []
    for H, B, T, L, D, bits in parse_shapes(args.shapes):
        torch.manual_seed(0)
        dtype = torch.bfloat16 if bits == 16 else torch.float32
        record = {"H": H, "B": B, "T": T, "L": L, "D": D, "bits": bits}
        try:
            module = torch.nn.GRU if GRU else torch.nn.LSTM
            rnn = module(H, H, num_layers=L, bidirectional=D == 2, device="cuda",
                         dtype=dtype)
            x = torch.randn(T, B, H, device="cuda", dtype=dtype)
            h0 = torch.randn(L * D, B, H, device="cuda", dtype=dtype)
            states = (h0,) if GRU else (h0, torch.randn_like(h0))
            given = states[0] if GRU else states
            default_tf32 = torch.backends.cudnn.allow_tf32
            modes = [("torch", default_tf32)]
            if bits == 32:
                modes.append(("torch_strict_f32", False))
            for name, tf32 in modes:
                torch.backends.cudnn.allow_tf32 = tf32
                try:
                    with torch.no_grad():
                        ms = median_ms(lambda: rnn(x, given), args.repeats)
                    train_ms = median_ms(lambda: train(rnn, x, states), args.repeats)
                finally:
                    torch.backends.cudnn.allow_tf32 = default_tf32
                record[name] = {"ms": ms, "train_ms": train_ms, "tf32": tf32 and bits == 32}
                print(f"{name} {H},{B},{T},{L},{D},{bits}: {ms:.4f} ms, "
                      f"training {train_ms:.4f} ms", file=sys.stderr)
        except RuntimeError as error:
            record["torch"] = {"error": str(error).splitlines()[0][:200]}
            print(f"torch {H},{B},{T},{L},{D},{bits}: cannot run",
                  file=sys.stderr)
        results.append(record)
        write(results)
    write(results)


if __name__ == "__main__":
    main()
