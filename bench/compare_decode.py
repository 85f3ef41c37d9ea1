#!/usr/bin/env python3
"""Prints rudnn-bench-decode and bench/sdpa_decode.py results side by side:
per shape, rudnn's time, the bandwidth it reached (bytes of K and V read
over the time) and that as a share of the measured copy bandwidth, then
PyTorch SDPA's time on the same cache and the ratio SDPA / rudnn (above 1:
rudnn is faster). Either file may be missing or partial.

    python3 bench/compare_decode.py RUDNN.json SDPA.json
"""
import json
import sys

from benchlib import paired, ratio

TITLE = "decoding step bf16 over a K/V cache: torch SDPA / rudnn"


def shape(r):
    return r["B"], r["L"], r["page"]


def ratios(ours_path, theirs_path):
    """bench/plot.py's series: {"sdpa": [(shape, ratio)]}."""
    keys, ours, theirs = paired(ours_path, theirs_path, shape)
    return {"sdpa": [(",".join(map(str, key)),
                      ratio(theirs.get(key, {}).get("sdpa", {}).get("ms"),
                            ours.get(key, {}).get("ms"))) for key in keys]}


def main():
    keys, ours, theirs = paired(sys.argv[1], sys.argv[2], shape)
    try:
        with open(sys.argv[2]) as source:
            copy = json.load(source).get("copy_gbs")
    except (OSError, ValueError):
        copy = None
    print(f"  copy bandwidth: {copy:.1f} GB/s" if copy else
          "  copy bandwidth: not measured")
    print(f"  {'B,L,page':<16} {'rudnn ms':>9} {'GB/s':>8} {'of copy':>8}"
          f" {'sdpa ms':>9} {'ratio':>6}")
    for key in keys:
        mine = ours.get(key, {})
        row = f"  {','.join(map(str, key)):<16}"
        ms, gbs = mine.get("ms"), mine.get("gbs")
        row += f" {ms:9.4f} {gbs:8.1f}" if ms else f" {'-':>9} {'-':>8}"
        row += f" {100 * gbs / copy:7.1f}%" if ms and copy else f" {'-':>8}"
        other = theirs.get(key, {}).get("sdpa", {}).get("ms")
        row += f" {other:9.4f}" if other else f" {'-':>9}"
        row += f" {other / ms:5.2f}x" if other and ms else f" {'-':>6}"
        print(row)


if __name__ == "__main__":
    main()
