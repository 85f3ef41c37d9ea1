#!/usr/bin/env python3
"""Checks that o.npy and lse.npy in DIR are causal attention's results on
q, k, v and key_lengths there ([B, T, H, D], [B, S, G, D], [B, S, G, E],
[B]; lse [B, H, T]; scale D^-0.5; bottom-right aligned to each entry's
length), within f32 rounding. Prints one line, or fails.

  causal_forward.py DIR
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import npy  # noqa: E402


def main(directory):
    def load(name):
        return npy.read(os.path.join(directory, name + ".npy"))
    (B, T, H, D), q = load("q")
    (_, S, G, _), k = load("k")
    (_, _, _, E), v = load("v")
    _, lengths = load("key_lengths")
    _, o = load("o")
    _, lse = load("lse")
    scale = 1 / math.sqrt(D)
    worst = 0.0
    for b in range(B):
        length = max(0, min(S, lengths[b]))
        for h in range(H):
            g = h // (H // G)
            for i in range(T):
                keys = [j for j in range(length) if j <= i + length - T]
                row = ((b * T + i) * H + h)
                scores = [scale * sum(q[row * D + d] *
                                      k[((b * S + j) * G + g) * D + d]
                                      for d in range(D)) for j in keys]
                want_lse = -math.inf
                want_o = [0.0] * E
                if scores:
                    peak = max(scores)
                    weights = [math.exp(s - peak) for s in scores]
                    total = sum(weights)
                    want_lse = peak + math.log(total)
                    for w, j in zip(weights, keys):
                        for e in range(E):
                            want_o[e] += w / total * \
                                v[((b * S + j) * G + g) * E + e]
                got_lse = lse[(b * H + h) * T + i]
                if math.isinf(want_lse):
                    assert math.isinf(got_lse) and got_lse < 0, (b, h, i)
                else:
                    worst = max(worst, abs(got_lse - want_lse))
                for e in range(E):
                    worst = max(worst, abs(o[row * E + e] - want_o[e]))
    assert worst < 1e-4, worst
    print("saved o and lse are the forward's")


if __name__ == "__main__":
    main(sys.argv[1])
