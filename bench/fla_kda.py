#!/usr/bin/env python3
"""Times flash-linear-attention's chunk_kda forward, and forward + backward
(autograd, all six gradients), on the cases rudnn-bench-kda uses, in the
same dtypes (bf16 q, k, v, beta; fp32 g), and writes JSON.

    python3 bench/fla_kda.py --json out.json [--repeats 20]
                             [--shapes "B,T,H,K;varlen:L1+L2,H,K;gva:B,T,Q,H,K"]

Packed sequences go through chunk_kda's cu_seqlens. Grouped value heads (q
and k with Q heads shared by H / Q value heads) are passed as they are; a
chunk_kda that refuses them is timed with q and k repeated per value head
(what its users do then), and the record says so ("gva": "repeated").

Timing: CUDA events around each call after warm-up calls (which also run
Triton's autotuning), so neither compiling nor tuning is timed; the median is
reported. The JSON is rewritten after every case, so a run cut short keeps
what it measured.
"""
import json
import sys

from benchlib import arguments, median_ms, parse_kda_cases

SHAPES = ("4,4096,64,128;2,16384,16,128;1,8192,96,128;8,1024,8,64;"
          "varlen:1000+7191+513+9216+2047+4096+3073+5632,32,128;"
          "gva:2,8192,16,32,128")


def main():
    args = arguments(SHAPES)

    import torch
    from fla.ops.kda import chunk_kda

    results = []
    for case in parse_kda_cases(args.shapes):
        B, T, Q, H, K = (case[x] for x in ("B", "T", "Q", "H", "K"))
        V = K
        lengths = case.get("lengths")
        states = len(lengths) if lengths else B
        torch.manual_seed(0)
        device = "cuda"
        q = torch.randn(B, T, Q, K, device=device, dtype=torch.bfloat16)
        k = torch.nn.functional.normalize(
            torch.randn(B, T, Q, K, device=device, dtype=torch.float32), dim=-1
        ).to(torch.bfloat16)
        v = torch.randn(B, T, H, V, device=device, dtype=torch.bfloat16)
        g = -torch.rand(B, T, H, K, device=device, dtype=torch.float32)
        beta = (0.05 + 0.9 * torch.rand(B, T, H, device=device)).to(torch.bfloat16)
        s0 = 0.5 * torch.randn(states, H, K, V, device=device, dtype=torch.float32)
        cu_seqlens = None
        if lengths:
            offsets = [0]
            for length in lengths:
                offsets.append(offsets[-1] + length)
            cu_seqlens = torch.tensor(offsets, device=device, dtype=torch.int32)
        record = dict(case)

        def call(q=q, k=k):
            return chunk_kda(q, k, v, g, beta, scale=K ** -0.5,
                             initial_state=s0, output_final_state=True,
                             cu_seqlens=cu_seqlens)

        if Q != H:
            try:
                with torch.no_grad():
                    call()
                record["gva"] = "native"
            except Exception as error:  # q and k per value head instead
                print(f"fla chunk_kda {case['case']}: {error}; q and k "
                      "repeated per value head", file=sys.stderr)
                record["gva"] = "repeated"
                base = call

                def call():
                    return base(q.repeat_interleave(H // Q, dim=2),
                                k.repeat_interleave(H // Q, dim=2))

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
        record.update({"V": V, "ms": forward_ms, "fwd_bwd_ms": step_ms})
        results.append(record)
        print(f"fla chunk_kda {case['case']}: {forward_ms:.3f} ms, "
              f"fwd+bwd {step_ms:.3f} ms", file=sys.stderr)
        with open(args.json, "w") as out:
            json.dump({"op": "fla.chunk_kda", "dtype": "bf16", "results": results},
                      out, indent=1)


if __name__ == "__main__":
    main()
