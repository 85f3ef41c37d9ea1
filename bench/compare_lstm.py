#!/usr/bin/env python3
"""Prints rudnn-bench-lstm and bench/torch_lstm.py results side by side:
per shape (H, B, T, L, D, bits), rudnn's time, torch.nn.LSTM's (cuDNN) and
the ratio torch / rudnn (above 1: rudnn is faster). Either file may be
missing or partial.

    python3 bench/compare_lstm.py RUDNN.json TORCH.json
"""
import sys

from benchlib import load_results


def main():
    def shape(r):
        return r["H"], r["B"], r["T"], r["L"], r["D"], r["bits"]
    ours = load_results(sys.argv[1], shape)
    theirs = load_results(sys.argv[2], shape)
    print(f"  {'H,B,T,L,D,bits':<22} {'rudnn ms':>9} {'torch ms':>9}"
          f" {'ratio':>6}")
    for key in list(ours) + [key for key in theirs if key not in ours]:
        ms = ours.get(key, {}).get("ms")
        other = theirs.get(key, {}).get("torch", {}).get("ms")
        row = f"  {','.join(map(str, key)):<22}"
        row += f" {ms:9.4f}" if ms else f" {'-':>9}"
        row += f" {other:9.4f}" if other else f" {'-':>9}"
        row += f" {other / ms:5.2f}x" if other and ms else f" {'-':>6}"
        print(row)


if __name__ == "__main__":
    main()
