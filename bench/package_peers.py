#!/usr/bin/env python3
"""rudnn's Python package beside the functions PyTorch users call today,
timed by one harness on the same inputs: chunk_kda against
flash-linear-attention's, flash_attn_func against scaled_dot_product_attention,
kv_cache_attention against SDPA over the cache, LayerNorm and RMSNorm against
torch.nn.functional's, LSTM against torch.nn.LSTM (cuDNN). Forward alone and,
where both sides have a backward, forward then autograd backward. Writes JSON
and prints each case's ratio (anchor time / rudnn time: above 1, rudnn is
faster).

    python3 bench/package_peers.py --json out.json [--repeats 20]
                                   [--only kda,attention,...] [--smoke]

Timing: benchlib.median_ms (CUDA events after three warm-up calls, the
median). --smoke runs tiny shapes on the CPU (rudnn on its emulation
backend): it checks the harness and the outputs agree, and its times mean
nothing. An anchor that is not installed (fla) is recorded as missing. The
JSON is rewritten after every case, so a run cut short keeps what it
measured.
"""

import argparse
import json
import time

from benchlib import median_ms


def host_median_ms(function, repeats):
    function()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[len(times) // 2]


def kda_cases(torch, rt, device, smoke):
    try:
        from fla.ops.kda import chunk_kda as anchor
    except ImportError:
        anchor = None
    shapes = [(1, 64, 2, 32)] if smoke else [(1, 32768, 16, 128), (8, 4096, 16, 128)]
    for B, T, H, K in shapes:
        dtype = torch.float32 if smoke else torch.bfloat16
        q, k, v = (torch.randn(B, T, H, K, device=device, dtype=dtype) for _ in range(3))
        k = torch.nn.functional.normalize(k.float(), dim=-1).to(dtype)
        g = -torch.rand(B, T, H, K, device=device) * 0.1
        beta = torch.rand(B, T, H, device=device, dtype=dtype)
        inputs = [q, k, v, g, beta]
        yield (
            f"kda B={B} T={T} H={H} K={K}",
            inputs,
            lambda *x: rt.chunk_kda(*x)[0],
            None if anchor is None else (lambda *x: anchor(*x)[0]),
            "fla chunk_kda",
        )


def attention_cases(torch, rt, device, smoke):
    F = torch.nn.functional
    shapes = [(1, 32, 2, 16, 1)] if smoke else [(4, 4096, 16, 128, 0), (4, 4096, 16, 128, 1)]
    for B, T, H, D, causal in shapes:
        dtype = torch.float32 if smoke else torch.bfloat16
        inputs = [torch.randn(B, T, H, D, device=device, dtype=dtype) for _ in range(3)]

        def anchor(q, k, v, causal=causal):  # SDPA's own layout, [B, H, T, D]
            return F.scaled_dot_product_attention(
                *(t.transpose(1, 2) for t in (q, k, v)), is_causal=bool(causal)
            ).transpose(1, 2)

        yield (
            f"attention B={B} T={T} H={H} D={D} causal={causal}",
            inputs,
            lambda q, k, v, causal=causal: rt.flash_attn_func(q, k, v, causal=bool(causal)),
            anchor,
            "torch SDPA",
        )


def decode_cases(torch, rt, device, smoke):
    F = torch.nn.functional
    shapes = [(2, 64, 4, 2, 16)] if smoke else [(64, 4096, 32, 8, 128)]
    for B, S, H, G, D in shapes:
        dtype = torch.float32 if smoke else torch.bfloat16
        q = torch.randn(B, 1, H, D, device=device, dtype=dtype)
        k_cache, v_cache = (torch.randn(B, S, G, D, device=device, dtype=dtype) for _ in range(2))
        new = [torch.randn(B, 1, G, D, device=device, dtype=dtype) for _ in range(2)]
        lengths = torch.full((B,), S - 1, device=device, dtype=torch.int32)

        def ours(q):
            return rt.kv_cache_attention(q, k_cache, v_cache, *new, lengths)

        def anchor(q):  # the cache as it is after the append
            keys, values = (c.transpose(1, 2) for c in (k_cache, v_cache))
            return F.scaled_dot_product_attention(
                q.transpose(1, 2), keys, values, enable_gqa=True
            ).transpose(1, 2)

        yield f"decode B={B} S={S} H={H} G={G} D={D}", [q], ours, anchor, "torch SDPA"


def norm_cases(torch, rt, device, smoke):
    F = torch.nn.functional
    shapes = [(16, 40)] if smoke else [(16384, 4096), (4096, 8192)]
    for N, C in shapes:
        dtype = torch.float32 if smoke else torch.bfloat16
        x, weight, bias = (
            torch.randn(*shape, device=device, dtype=dtype) for shape in ((N, C), (C,), (C,))
        )
        yield (
            f"layer_norm N={N} C={C}",
            [x, weight, bias],
            lambda x, w, b: rt.layer_norm(x, (C,), w, b),
            lambda x, w, b: F.layer_norm(x, (C,), w, b),
            "torch layer_norm",
        )
        yield (
            f"rms_norm N={N} C={C}",
            [x, weight],
            lambda x, w: rt.rms_norm(x, (C,), w, eps=1e-6),
            lambda x, w: F.rms_norm(x, (C,), w, eps=1e-6),
            "torch rms_norm",
        )


def lstm_cases(torch, rt, device, smoke):
    shapes = [(2, 8, 4, 6, 1)] if smoke else [(64, 512, 512, 512, 2)]
    for B, T, I, H, layers in shapes:
        anchor = torch.nn.LSTM(I, H, layers, batch_first=True).to(device)
        ours = rt.LSTM(I, H, layers, batch_first=True).to(device)
        ours.load_state_dict(anchor.state_dict())
        x = torch.randn(B, T, I, device=device)
        yield (
            f"lstm B={B} T={T} I={I} H={H} layers={layers}",
            [x],
            lambda x: ours(x)[0],
            lambda x: anchor(x)[0],
            "torch nn.LSTM",
        )


FAMILIES = {
    "kda": kda_cases,
    "attention": attention_cases,
    "decode": decode_cases,
    "norm": norm_cases,
    "lstm": lstm_cases,
}


def training_step(function, inputs):
    leaves = [x.detach().requires_grad_(x.is_floating_point()) for x in inputs]

    def step():
        function(*leaves).float().sum().backward()

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--only", default=",".join(FAMILIES))
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()

    import torch

    import rudnn.torch as rt

    device = "cpu" if args.smoke else "cuda"
    timer = host_median_ms if args.smoke else median_ms
    repeats = 3 if args.smoke else args.repeats
    results = []
    print(f"{'case':48} {'pass':8} {'rudnn ms':>10} {'anchor ms':>10} {'ratio':>7}  anchor")
    for family in args.only.split(","):
        for name, inputs, ours, anchor, anchor_name in FAMILIES[family](
            torch, rt, device, args.smoke
        ):
            torch.manual_seed(0)
            passes = [("forward", lambda f: lambda: f(*inputs))]
            if family in ("kda", "attention", "norm"):
                passes.append(("training", lambda f: training_step(f, inputs)))
            for pass_name, make in passes:
                record = {"case": name, "pass": pass_name, "anchor": anchor_name}
                with torch.no_grad() if pass_name == "forward" else torch.enable_grad():
                    record["rudnn_ms"] = timer(make(ours), repeats)
                    if anchor is None:
                        record["anchor_ms"] = None
                        record["note"] = f"{anchor_name} is not installed"
                    else:
                        record["anchor_ms"] = timer(make(anchor), repeats)
                        error = (ours(*inputs).float() - anchor(*inputs).float()).abs().max()
                        record["max_abs_difference"] = error.item()
                ratio = (record["anchor_ms"] / record["rudnn_ms"]) if record["anchor_ms"] else None
                record["ratio"] = ratio
                results.append(record)
                print(
                    f"{name:48} {pass_name:8} {record['rudnn_ms']:10.3f} "
                    f"{record['anchor_ms'] or float('nan'):10.3f} "
                    f"{ratio or float('nan'):7.2f}  {anchor_name}",
                    flush=True,
                )
                with open(args.json, "w") as out:
                    json.dump({"device": device, "results": results}, out, indent=1)


if __name__ == "__main__":
    main()
