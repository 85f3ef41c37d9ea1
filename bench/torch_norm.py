#!/usr/bin/env python3
"""Times torch.nn.functional.layer_norm and rms_norm, forward and backward,
on what rudnn-bench-norm times (rows × C, bf16 or f32, with gamma, and beta
for LayerNorm), and a copy of the same bytes (torch.Tensor.copy_): the
bandwidth the memory gives. Writes JSON.

    python3 bench/torch_norm.py --json out.json [--repeats 20]
                                [--shapes "rows,C,bits,op,pass;..."]

Timing as rudnn-bench-norm's: CUDA events around each call after three
warm-up calls, the median reported. The backward is timed as
torch.autograd.grad of the output at a fixed dy, the forward's graph built
once. The JSON is rewritten after every shape.
"""
import json
import sys

from benchlib import arguments, median_ms

SHAPES = ";".join(f"{rows},{C},{bits},{op},{p}" for p in ("fwd", "bwd")
                  for op in ("layer", "rms") for bits in (16, 32)
                  for rows in (4096, 16384, 65536)
                  for C in (1024, 4096, 8192, 16384))


def parse(text):
    shapes = []
    for item in filter(None, text.split(";")):
        rows, C, bits, op, p = item.split(",")
        shapes.append((int(rows), int(C), int(bits), op, p))
    return shapes


def main():
    args = arguments(SHAPES)

    import torch
    import torch.nn.functional as F

    def write(results):
        with open(args.json, "w") as out:
            json.dump({"op": "torch.norm", "results": results}, out, indent=1)

    results = []
    for rows, C, bits, op, p in parse(args.shapes):
        torch.manual_seed(0)
        dtype = torch.bfloat16 if bits == 16 else torch.float32
        record = {"rows": rows, "C": C, "bits": bits, "op": op, "pass": p}
        label = f"{rows},{C},{bits},{op},{p}"
        try:
            backward = p == "bwd"
            x = torch.randn(rows, C, device="cuda", dtype=dtype,
                            requires_grad=backward)
            gamma = torch.randn(C, device="cuda", dtype=dtype,
                                requires_grad=backward)
            beta = torch.randn(C, device="cuda", dtype=dtype,
                               requires_grad=backward)
            if op == "layer":
                forward = lambda: F.layer_norm(x, (C,), gamma, beta, 1e-5)
            else:
                forward = lambda: F.rms_norm(x, (C,), gamma, 1e-6)
            if backward:
                y = forward()
                dy = torch.randn_like(y)
                wrt = (x, gamma, beta) if op == "layer" else (x, gamma)
                call = lambda: torch.autograd.grad(y, wrt, dy,
                                                   retain_graph=True)
            else:
                call = lambda: forward()
            with torch.set_grad_enabled(backward):
                ms = median_ms(call, args.repeats)
            # The bytes a pass must move, copied: x to y forward; dy and x
            # read, dx written backward (a copy of 1.5 times as much).
            source = torch.empty(rows * C * (3 if backward else 2) // 2,
                                 device="cuda", dtype=dtype)
            target = torch.empty_like(source)
            copy_ms = median_ms(lambda: target.copy_(source), args.repeats)
            record["torch"] = {"ms": ms, "copy_ms": copy_ms}
            print(f"torch {label}: {ms:.4f} ms, copy {copy_ms:.4f} ms",
                  file=sys.stderr)
        except (RuntimeError, AttributeError) as error:
            record["torch"] = {"error": str(error).splitlines()[0][:200]}
            print(f"torch {label}: cannot run", file=sys.stderr)
        results.append(record)
        write(results)
    write(results)


if __name__ == "__main__":
    main()
