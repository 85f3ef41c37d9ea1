#!/usr/bin/env python3
"""Times PyTorch's scaled_dot_product_attention with each backend forced
(flash, cuDNN, efficient) on the shapes rudnn-bench-attention uses, bf16,
[B, H, T, D] as SDPA takes them: the forward alone, and a training step's
forward then autograd backward (the gradients of q, k and v), as
rudnn-bench-attention times its own. Writes JSON.

    python3 bench/sdpa_attention.py --json out.json [--repeats 20]
                                    [--shapes "B,T,H,D,causal;..."]

Timing: CUDA events around each call after three warm-up calls; the median
is reported, as rudnn-bench-attention reports its own. A backend that cannot
run a shape (not built, or refusing it) is recorded as such. The JSON is
rewritten after every shape, so a run cut short keeps what it measured.
"""
import json
import sys

from benchlib import arguments, median_ms, parse_shapes

# FlashAttention's benchmark shapes: 16k tokens a batch, hidden 2048, D 128.
SHAPES = ";".join(f"{16384 // T},{T},16,128,{causal}"
                  for causal in (0, 1) for T in (512, 1024, 2048, 4096, 8192,
                                                 16384))


def main():
    args = arguments(SHAPES)

    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = {"flash": SDPBackend.FLASH_ATTENTION,
                "cudnn": SDPBackend.CUDNN_ATTENTION,
                "efficient": SDPBackend.EFFICIENT_ATTENTION}
    results = []
    for B, T, H, D, causal in parse_shapes(args.shapes):
        torch.manual_seed(0)
        q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        d_output = torch.randn_like(q)
        # The backward's FLOPs are 2.5 times the forward's.
        flops = 4.0 * B * H * T * T * D / (2.0 if causal else 1.0)
        record = {"B": B, "T": T, "H": H, "D": D, "causal": bool(causal)}
        for name, backend in backends.items():
            def forward():
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(
                        q, k, v, is_causal=bool(causal))

            def step():
                o = forward()
                torch.autograd.grad(o, (q, k, v), d_output)
            try:
                with torch.no_grad():
                    ms = median_ms(forward, args.repeats)
                for t in (q, k, v):
                    t.requires_grad_(True)
                try:
                    step_ms = median_ms(step, args.repeats)
                finally:
                    for t in (q, k, v):
                        t.requires_grad_(False)
                record[name] = {
                    "ms": ms, "tflops": flops / (ms * 1e-3) / 1e12,
                    "fwd_bwd_ms": step_ms,
                    "fwd_bwd_tflops": 3.5 * flops / (step_ms * 1e-3) / 1e12}
                print(f"sdpa {name} {B},{T},{H},{D},{causal}: {ms:.3f} ms, "
                      f"fwd+bwd {step_ms:.3f} ms", file=sys.stderr)
            except RuntimeError as error:
                record[name] = {"error": str(error).splitlines()[0][:200]}
                print(f"sdpa {name} {B},{T},{H},{D},{causal}: cannot run",
                      file=sys.stderr)
        results.append(record)
        with open(args.json, "w") as out:
            json.dump({"op": "torch.sdpa", "dtype": "bf16", "results": results},
                      out, indent=1)


if __name__ == "__main__":
    main()
