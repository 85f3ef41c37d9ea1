#!/usr/bin/env python3
"""Times flash-linear-attention's chunk_kda forward, and forward + backward
(autograd, all six gradients), on the shapes rudnn-bench-kda uses, in the
same dtypes (bf16 q, k, v, beta; fp32 g), and writes JSON.

    python3 bench/fla_kda.py --json out.json [--repeats 20]
                             [--shapes "B,T,H,K;..."]

Timing: CUDA events around each call after warm-up calls (which also run
Triton's autotuning), so neither compiling nor tuning is timed; the median is
reported. The JSON is rewritten after every shape, so a run cut short keeps
what it measured.
"""
import json
import sys

from benchlib import arguments, median_ms, parse_shapes

SHAPES = "4,4096,64,128;2,16384,16,128;1,8192,96,128;8,1024,8,64"


def main():
    args = arguments(SHAPES)

    import torch
    from fla.ops.kda import chunk_kda

    results = []
    for B, T, H, K in parse_shapes(args.shapes):
        V = K
        torch.manual_seed(0)
        device = "cuda"
        q = torch.randn(B, T, H, K, device=device, dtype=torch.bfloat16)
        k = torch.nn.functional.normalize(
            torch.randn(B, T, H, K, device=device, dtype=torch.float32), dim=-1
        ).to(torch.bfloat16)
        v = torch.randn(B, T, H, V, device=device, dtype=torch.bfloat16)
        g = -torch.rand(B, T, H, K, device=device, dtype=torch.float32)
        beta = (0.05 + 0.9 * torch.rand(B, T, H, device=device)).to(torch.bfloat16)
        s0 = 0.5 * torch.randn(B, H, K, V, device=device, dtype=torch.float32)

        def call():
            return chunk_kda(q, k, v, g, beta, scale=K ** -0.5,
                             initial_state=s0, output_final_state=True)

        leaves = [q, k, v, g, beta, s0]
        d_output = torch.randn(B, T, H, V, device=device, dtype=torch.bfloat16)

        def step():
            for x in leaves:
                x.requires_grad_(True)
                x.grad = None
            o, _ = call()
            torch.autograd.backward(o, d_output)

        with torch.no_grad():
            forward_ms = median_ms(call, args.repeats)
        step_ms = median_ms(step, args.repeats)
        results.append({"B": B, "T": T, "H": H, "K": K, "V": V,
                        "ms": forward_ms, "fwd_bwd_ms": step_ms})
        print(f"fla chunk_kda {B},{T},{H},{K}: {forward_ms:.3f} ms, "
              f"fwd+bwd {step_ms:.3f} ms", file=sys.stderr)
        with open(args.json, "w") as out:
            json.dump({"op": "fla.chunk_kda", "dtype": "bf16", "results": results},
                      out, indent=1)


if __name__ == "__main__":
    main()
