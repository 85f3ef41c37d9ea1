#!/usr/bin/env python3
"""Prints rudnn-bench-lstm and bench/torch_lstm.py results side by side
(or rudnn-bench-gru and torch_lstm.py --cell gru, torch.nn.GRU's):
per shape (H, B, T, L, D, bits), rudnn's time, torch.nn.LSTM's (cuDNN, as
PyTorch runs it by default: TF32 where allowed, marked "tf32"; rudnn's f32
then in TF32 too) and the ratio torch / rudnn (above 1: rudnn is faster),
then for f32 both in strict f32 (TF32 off) and their ratio; then the same
for a training step (the forward saving what the backward takes, and the
backward). Either file may be missing or partial.

    python3 bench/compare_lstm.py RUDNN.json TORCH.json
"""
import sys

from benchlib import paired, ratio

TITLE = "LSTM: torch.nn.LSTM (cuDNN) / rudnn"


def shape(r):
    return r["H"], r["B"], r["T"], r["L"], r["D"], r["bits"]


def ratios(ours_path, theirs_path):
    """bench/plot.py's series: {"torch": [(shape, ratio)]}, for f32 shapes
    "torch strict f32" (TF32 off), and where both timed a training step,
    "torch training" (TF32 as PyTorch's default)."""
    keys, ours, theirs = paired(ours_path, theirs_path, shape)
    series = {}
    for name, label in (("torch", "torch"), ("torch_strict_f32", "torch strict f32")):
        points = [(",".join(map(str, key)),
                   ratio(theirs.get(key, {}).get(name, {}).get("ms"),
                         mode(ours.get(key, {}), name).get("ms"))) for key in keys
                  if name == "torch" or key[-1] == 32]
        if points:
            series[label] = points
    training = [(",".join(map(str, key)),
                 ratio(theirs.get(key, {}).get("torch", {}).get("train_ms"),
                       ours.get(key, {}).get("train_ms"))) for key in keys]
    if any(point for _, point in training):
        series["torch training"] = training
    return series


def mode(record, name):
    """rudnn's timings in the mode of torch's record `name`: strict f32's
    beside torch_strict_f32, else the default's."""
    return record.get("strict_f32", {}) if name == "torch_strict_f32" else record


def main():
    keys, ours, theirs = paired(sys.argv[1], sys.argv[2], shape)
    for title, field in (("forward", "ms"), ("training step", "train_ms")):
        table(title, field, keys, ours, theirs)


def table(title, field, keys, ours, theirs):
    print(f"  {title}")
    print(f"  {'H,B,T,L,D,bits':<22} {'rudnn ms':>9} {'torch ms':>9}"
          f" {'ratio':>6} {'strict f32 ms':>13} {'ratio':>6}")
    for key in keys:
        ms = ours.get(key, {}).get(field)
        default = theirs.get(key, {}).get("torch", {})
        strict = theirs.get(key, {}).get("torch_strict_f32", {}).get(field)
        ours_strict = ours.get(key, {}).get("strict_f32", {}).get(field)
        other = default.get(field)
        row = f"  {','.join(map(str, key)):<22}"
        row += f" {ms:9.4f}" if ms else f" {'-':>9}"
        row += f" {other:9.4f}" if other else f" {'-':>9}"
        row += f" {other / ms:5.2f}x" if other and ms else f" {'-':>6}"
        row += " tf32" if default.get("tf32") else ""
        if strict:
            row += f" {strict:13.4f}" + (
                f" {strict / ours_strict:5.2f}x" if ours_strict else "")
        print(row)


if __name__ == "__main__":
    main()
