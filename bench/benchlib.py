"""What the Python benchmark anchors and comparisons share: CUDA-event
medians timed as the rudnn benchmarks time theirs, and results files read
by shape."""
import argparse
import json


def median_ms(function, repeats):
    """Median of CUDA-event timings of `function` after three warm-up calls."""
    import torch

    for _ in range(3):
        function()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        function()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def load_results(path, key):
    """{key(record): record} from one results file; {} when unreadable."""
    try:
        with open(path) as source:
            results = json.load(source)["results"]
    except (OSError, ValueError, KeyError) as error:
        print(f"  ({path}: {error})")
        return {}
    return {key(r): r for r in results}


def paired(ours_path, theirs_path, key):
    """Both files' records by key(record), and every key in order (rudnn's
    first, then the anchor's others)."""
    ours = load_results(ours_path, key)
    theirs = load_results(theirs_path, key)
    return list(ours) + [k for k in theirs if k not in ours], ours, theirs


def ratio(anchor_ms, rudnn_ms):
    """anchor / rudnn (above 1: rudnn is faster), or None without both."""
    return anchor_ms / rudnn_ms if anchor_ms and rudnn_ms else None


def parse_shapes(text):
    """"a,b,...;..." -> [(a, b, ...), ...], as the rudnn benchmarks take them."""
    return [tuple(int(x) for x in item.split(",")) for item in text.split(";")
            if item]


def parse_kda_cases(text):
    """rudnn-bench-kda's --shapes: "B,T,H,K", "varlen:L1+L2+...,H,K" or
    "gva:B,T,Q,H,K" -> dicts with case, B, T, Q, H, K and, packed, lengths."""
    cases = []
    for item in (x for x in text.split(";") if x):
        if item.startswith("varlen:"):
            lengths, H, K = item[len("varlen:"):].split(",")
            lengths = [int(x) for x in lengths.split("+")]
            H, K = int(H), int(K)
            cases.append({"case": item, "B": 1, "T": sum(lengths), "Q": H,
                          "H": H, "K": K, "lengths": lengths})
        elif item.startswith("gva:"):
            B, T, Q, H, K = (int(x) for x in item[len("gva:"):].split(","))
            cases.append({"case": item, "B": B, "T": T, "Q": Q, "H": H,
                          "K": K})
        else:
            B, T, H, K = (int(x) for x in item.split(","))
            cases.append({"case": item, "B": B, "T": T, "Q": H, "H": H,
                          "K": K})
    return cases


def arguments(default_shapes):
    """--json FILE (required), --repeats N, --shapes TEXT."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--json", required=True)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--shapes", default=default_shapes)
    return parser.parse_args()
