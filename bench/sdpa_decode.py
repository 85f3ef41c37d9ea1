#!/usr/bin/env python3
"""Times PyTorch on what rudnn-bench-decode times: one decoding step (one
new token) of B entries with L tokens cached, 32 query heads over 8 key
heads, D = 128, bf16, through scaled_dot_product_attention (enable_gqa) on a
contiguous cache [B, 8, L + 1, 128] (PyTorch has no paged form: a paged
shape is timed on the contiguous cache of the same size). Also measures
the device-to-device copy bandwidth the step is held to: a 1 GiB copy,
its bytes read plus written over the time. Writes JSON.

    python3 bench/sdpa_decode.py --json out.json [--repeats 20]
                                 [--shapes "B,L,page;..."]

Timing as rudnn-bench-decode's: CUDA events around each call after three
warm-up calls, the median reported, the calls rotating over copies of the
cache filling at least 256 MiB (none found in L2). The JSON is rewritten
after every shape, so a run cut short keeps what it measured.
"""
import json
import sys

from benchlib import arguments, median_ms, parse_shapes

SHAPES = ";".join(f"{B},{L},{page}" for page in (0, 16) for B in (1, 8, 64)
                  for L in (1024, 4096, 16384, 65536))
HEADS, KV_HEADS, HEAD_DIM = 32, 8, 128
ROTATION_BYTES = 256 << 20


def main():
    args = arguments(SHAPES)

    import torch
    import torch.nn.functional as F

    def write(results, copy):
        with open(args.json, "w") as out:
            json.dump({"op": "torch.sdpa_decode", "dtype": "bf16",
                       "copy_gbs": copy, "results": results}, out, indent=1)

    source = torch.empty(1 << 29, device="cuda", dtype=torch.bfloat16)
    target = torch.empty_like(source)
    copy_ms = median_ms(lambda: target.copy_(source), args.repeats)
    copy_gbs = 2 * source.numel() * 2 / (copy_ms * 1e-3) / 1e9
    del source, target
    print(f"copy: {copy_gbs:.1f} GB/s", file=sys.stderr)
    results = []
    for B, L, page in parse_shapes(args.shapes):
        torch.manual_seed(0)
        tokens = L + 1
        cache_bytes = 2 * B * KV_HEADS * tokens * HEAD_DIM * 2
        copies = max(1, -(-ROTATION_BYTES // cache_bytes))
        q = torch.randn(B, HEADS, 1, HEAD_DIM, device="cuda",
                        dtype=torch.bfloat16)
        caches = [tuple(torch.randn(B, KV_HEADS, tokens, HEAD_DIM,
                                    device="cuda", dtype=torch.bfloat16)
                        for _ in range(2)) for _ in range(copies)]
        turn = [0]

        def step():
            k, v = caches[turn[0] % copies]
            turn[0] += 1
            return F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
        record = {"B": B, "L": L, "page": page}
        try:
            with torch.no_grad():
                ms = median_ms(step, args.repeats)
            record["sdpa"] = {"ms": ms,
                              "gbs": cache_bytes / (ms * 1e-3) / 1e9}
            print(f"sdpa {B},{L},{page}: {ms:.4f} ms", file=sys.stderr)
        except RuntimeError as error:
            record["sdpa"] = {"error": str(error).splitlines()[0][:200]}
            print(f"sdpa {B},{L},{page}: cannot run", file=sys.stderr)
        del caches
        torch.cuda.empty_cache()
        results.append(record)
        write(results, copy_gbs)
    write(results, copy_gbs)


if __name__ == "__main__":
    main()
