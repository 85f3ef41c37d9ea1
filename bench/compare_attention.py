#!/usr/bin/env python3
"""Prints rudnn-bench-attention and bench/sdpa_attention.py results side by
side, the forward and then the forward and backward: per shape, rudnn's
time and TFLOP/s and each SDPA backend's, with the ratio backend / rudnn
(above 1: rudnn is faster). Either file may be missing or partial.

    python3 bench/compare_attention.py RUDNN.json SDPA.json
"""
import sys

from benchlib import paired, ratio

BACKENDS = ("flash", "cudnn", "efficient")
PASSES = (("forward", "ms", "tflops"),
          ("forward + backward", "fwd_bwd_ms", "fwd_bwd_tflops"))
# What bench/plot.py titles the chart with.
TITLE = "attention bf16: torch SDPA's backends / rudnn"


def shape(r):
    return r["B"], r["T"], r["H"], r["D"], int(r["causal"])


def ratios(ours_path, theirs_path):
    """bench/plot.py's series: {pass and backend: [(shape, ratio)]}."""
    keys, ours, theirs = paired(ours_path, theirs_path, shape)
    return {f"{title}, {name}": [
        (",".join(map(str, key)),
         ratio(theirs.get(key, {}).get(name, {}).get(time),
               ours.get(key, {}).get(time))) for key in keys]
        for title, time, _ in PASSES for name in BACKENDS}


def main():
    keys, ours, theirs = paired(sys.argv[1], sys.argv[2], shape)
    for title, time, rate in PASSES:
        print(f"  {title}")
        print(f"  {'B,T,H,D,causal':<20} {'rudnn ms':>9} {'TFLOP/s':>8}" +
              "".join(f" {name + ' ms':>12} {'ratio':>6}"
                      for name in BACKENDS))
        for key in keys:
            mine = ours.get(key, {})
            row = f"  {','.join(map(str, key)):<20}"
            ms = mine.get(time)
            row += f" {ms:9.3f} {mine.get(rate, 0):8.1f}" if ms else \
                f" {'-':>9} {'-':>8}"
            for name in BACKENDS:
                other = theirs.get(key, {}).get(name, {}).get(time)
                row += f" {other:12.3f}" if other else f" {'-':>12}"
                row += f" {other / ms:5.2f}x" if other and ms else f" {'-':>6}"
            print(row)


if __name__ == "__main__":
    main()
