#!/usr/bin/env python3
"""Prints rudnn-bench-kda and bench/fla_kda.py results side by side: per
shape, forward and forward+backward times and the ratio fla / rudnn (above 1:
rudnn is faster), then where a rudnn training step's time goes, per kernel.
Either file may be missing or partial (a step cut short by its time limit).

    python3 bench/compare_kda.py RUDNN.json FLA.json
"""
import sys

from benchlib import paired, ratio

TITLE = "KDA bf16: flash-linear-attention / rudnn"
PASSES = (("forward", "ms"), ("training step", "fwd_bwd_ms"))


def shape(r):  # the case as given to --shapes
    return r.get("case") or f"{r['B']},{r['T']},{r['H']},{r['K']}"


def ratios(ours_path, theirs_path):
    """bench/plot.py's series: {pass: [(case, ratio)]}."""
    keys, ours, theirs = paired(ours_path, theirs_path, shape)
    return {title: [(key, ratio(theirs.get(key, {}).get(field),
                                ours.get(key, {}).get(field)))
                    for key in keys] for title, field in PASSES}


def cell(value):
    return f"{value:9.3f}" if isinstance(value, (int, float)) else f"{'-':>9}"


def main():
    keys, ours, theirs = paired(sys.argv[1], sys.argv[2], shape)
    print(f"  {'case':<40} {'fwd ms':>9} {'fla':>9} {'ratio':>6}"
          f"   {'step ms':>9} {'fla':>9} {'ratio':>6}")
    for key in keys:
        mine, fla = ours.get(key, {}), theirs.get(key, {})
        note = " (fla: q, k repeated)" if fla.get("gva") == "repeated" else ""
        row = f"  {key + note:<40}"
        for _, field in PASSES:
            a, b = mine.get(field), fla.get(field)
            faster = f"{b / a:5.2f}x" if a and b else f"{'-':>6}"
            row += f" {cell(a)} {cell(b)} {faster}  "
        print(row.rstrip())
    for key, record in ours.items():
        kernels = record.get("step_kernels_ms") or {}
        if kernels:
            print(f"  rudnn step at {key}, each launch timed alone:")
            for name, ms in kernels.items():
                print(f"    {name:<52} {ms:9.3f} ms")


if __name__ == "__main__":
    main()
