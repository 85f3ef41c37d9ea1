#!/usr/bin/env python3
"""The kernel report's model of stacked LSTMs and GRUs, as docs/lstm.md's tables.

For two bidirectional layers, I = H, T = 512 on an H200 (sm_90), prints a
Markdown table per cell of the plan rooflines in ms: the forward alone /
a training step (the forward saving what the backward takes, plus the
backward of every input and parameter), at H = 256, 512, 1024 and B = 1, 8,
64, bf16 and f32.

    bench/rnn_model.py [--build build] [--cell lstm|gru] [--steps 512]
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

LAYERS, DIRECTIONS = 2, 2


def tensor(shape, dtype):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


def weights(cell, hidden, dtype):
    """The state_dict's types, layer by layer and direction by direction."""
    gates = (3 if cell == "gru" else 4) * hidden
    types = []
    for layer in range(LAYERS):
        width = hidden if layer == 0 else DIRECTIONS * hidden
        for _ in range(DIRECTIONS):
            types += [tensor([gates, width], dtype), tensor([gates, hidden], dtype),
                      tensor([gates], dtype), tensor([gates], dtype)]
    return types


def function(name, operands, results, body):
    args = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operands))
    names = [f"%r{i}" for i in range(len(results))]
    return (f"func.func @{name}({args}) -> ({', '.join(results)}) {{\n"
            f"  {', '.join(names)} = {body} : ({', '.join(operands)}) -> "
            f"({', '.join(results)})\n"
            f"  return {', '.join(names)} : {', '.join(results)}\n}}\n")


def forward(cell, hidden, dtype):
    """The forward saving what the backward takes (states and gates)."""
    states = LAYERS * DIRECTIONS
    x = tensor(["?", "?", hidden], dtype)
    out = tensor(["?", "?", DIRECTIONS * hidden], dtype)
    h_n = tensor([states, "?", hidden], dtype)
    w = weights(cell, hidden, dtype)
    ws = ", ".join(f"%a{i + 1}" for i in range(len(w)))
    saved_hidden = tensor([LAYERS, "?", "?", DIRECTIONS * hidden], dtype)
    gates = tensor([states, "?", "?", 4 * hidden], "f32")
    if cell == "gru":
        results = [out, h_n, saved_hidden, gates]
        op = (f"rudnn.gru %a0 weights({ws}) layers {LAYERS} bidirectional "
              "save_states")
    else:
        cells = tensor([states, "?", "?", hidden], "f32")
        results = [out, h_n, h_n, saved_hidden, cells, gates]
        op = (f"rudnn.lstm %a0 weights({ws}) layers {LAYERS} bidirectional "
              "save_states save_gates")
    return function("forward", [x] + w, results, op)


def backward(cell, hidden, dtype):
    """The backward of every input and parameter, reading the saved gates."""
    states = LAYERS * DIRECTIONS
    x = tensor(["?", "?", hidden], dtype)
    out = tensor(["?", "?", DIRECTIONS * hidden], dtype)
    h = tensor([states, "?", hidden], dtype)
    saved_hidden = tensor([LAYERS, "?", "?", DIRECTIONS * hidden], dtype)
    gates = tensor([states, "?", "?", 4 * hidden], "f32")
    w = weights(cell, hidden, dtype)
    if cell == "gru":
        saved = [saved_hidden, gates]
        results = [x, h] + w
    else:
        saved = [saved_hidden, tensor([states, "?", "?", hidden], "f32"), gates]
        results = [x, h, h] + w
    first = 1 + len(saved) + 1
    ws = ", ".join(f"%a{first + i}" for i in range(len(w)))
    names = ", ".join(f"%a{1 + i}" for i in range(len(saved)))
    op = (f"rudnn.{cell}_backward %a0 saved({names}) d_out %a{first - 1} "
          f"weights({ws}) layers {LAYERS} bidirectional")
    return function("backward", [x] + saved + [out] + w, results, op)


def roofline_ms(build, source, dims):
    plan = subprocess.run(
        [f"{build}/bin/rudnn-opt", "-rudnn-specialize=arch=sm_90",
         "-rudnn-decompose", "-rudnn-plan"],
        input=source, capture_output=True, text=True, check=True).stdout
    report = subprocess.run(
        [f"{build}/bin/rudnn-translate", "--rudnn-kernel-report",
         f"--rudnn-report-dims={dims}"],
        input=plan, capture_output=True, text=True, check=True).stdout
    found = re.search(r"roofline: ([0-9.]+) us", report)
    if not found:
        sys.exit("no roofline in the report:\n" + report)
    return float(found.group(1)) / 1000


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=str(Path(__file__).parent.parent / "build"))
    parser.add_argument("--cell", choices=["lstm", "gru"], default="lstm")
    parser.add_argument("--steps", type=int, default=512)
    args = parser.parse_args()
    batches = [1, 8, 64]
    print("| H | " + " | ".join(f"{t}, B = {b}" if b == 1 else f"B = {b}"
                                for t in ("bf16", "f32") for b in batches) + " |")
    print("|---" * 7 + "|")
    for hidden in (256, 512, 1024):
        cells = []
        for dtype in ("bf16", "f32"):
            plans = [forward(args.cell, hidden, dtype), backward(args.cell, hidden, dtype)]
            for batch in batches:
                dims = f"T={args.steps},B={batch}"
                ms = [roofline_ms(args.build, plan, dims) for plan in plans]
                cells.append(f"{ms[0]:.2f} / {ms[0] + ms[1]:.2f}")
        print(f"| {hidden} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
