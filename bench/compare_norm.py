#!/usr/bin/env python3
"""Prints rudnn-bench-norm and bench/torch_norm.py results side by side:
per shape (rows, C, bits, op, pass), rudnn's time, PyTorch's, the ratio
torch / rudnn (above 1: rudnn is faster) and the share of the measured
copy bandwidth rudnn reaches (a copy of the bytes the pass must move).
Either file may be missing or partial.

    python3 bench/compare_norm.py RUDNN.json TORCH.json
"""
import sys

from benchlib import paired, ratio

TITLE = "LayerNorm and RMSNorm: PyTorch / rudnn"


def shape(r):
    return r["rows"], r["C"], r["bits"], r["op"], r["pass"]


def ratios(ours_path, theirs_path):
    """bench/plot.py's series: {"torch": [(shape, ratio)]}."""
    keys, ours, theirs = paired(ours_path, theirs_path, shape)
    return {"torch": [(",".join(map(str, key)),
                       ratio(theirs.get(key, {}).get("torch", {}).get("ms"),
                             ours.get(key, {}).get("ms"))) for key in keys]}


def main():
    keys, ours, theirs = paired(sys.argv[1], sys.argv[2], shape)
    print(f"  {'rows,C,bits,op,pass':<28} {'rudnn ms':>9} {'torch ms':>9}"
          f" {'ratio':>6} {'of copy':>8}")
    for key in keys:
        ms = ours.get(key, {}).get("ms")
        torch = theirs.get(key, {}).get("torch", {})
        other, copy = torch.get("ms"), torch.get("copy_ms")
        row = f"  {','.join(map(str, key)):<28}"
        row += f" {ms:9.4f}" if ms else f" {'-':>9}"
        row += f" {other:9.4f}" if other else f" {'-':>9}"
        row += f" {other / ms:5.2f}x" if other and ms else f" {'-':>6}"
        row += f" {100 * copy / ms:7.1f}%" if copy and ms else f" {'-':>8}"
        print(row)


if __name__ == "__main__":
    main()
