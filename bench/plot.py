#!/usr/bin/env python3
"""Draws results as SVG charts, one a family, with no plotting library.

    python3 bench/plot.py RESULTS [--out DIR]
    python3 bench/plot.py --model REPORT... [--out DIR]

RESULTS is a scripts/device-check results folder (its device-check.tar.gz,
or logs already unpacked there): for each family whose rudnn benchmark
(FAMILY-rudnn.json) and anchor (the other FAMILY-*.json) ran,
bench/compare_FAMILY.py's ratios() gives the series, drawn as bars of
anchor time / rudnn time per shape on a logarithmic axis (right of the
1× line: rudnn is faster) into DIR/FAMILY.svg (default: RESULTS/charts).

--model draws kernel reports (`rudnn-translate --rudnn-kernel-report`
output) until results exist: each plan's roofline at the report's dims,
in microseconds, labelled as a model estimate, into DIR/model.svg.
"""
import argparse
import glob
import importlib
import math
import os
import re
import sys
import tarfile
import tempfile
from xml.sax.saxutils import escape

HERE = os.path.dirname(os.path.abspath(__file__))
COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1")
ROW, PLOT, MARGIN = 14, 420, 12


def logs_of(results):
    """The folder holding the step JSON files of a results folder."""
    if glob.glob(os.path.join(results, "**", "*-rudnn.json"), recursive=True):
        return results
    archive = os.path.join(results, "device-check.tar.gz")
    if not os.path.exists(archive):
        sys.exit(f"plot.py: {results} has neither *-rudnn.json nor "
                 "device-check.tar.gz")
    unpacked = tempfile.mkdtemp(prefix="rudnn-plot-")
    with tarfile.open(archive) as tar:
        if hasattr(tarfile, "data_filter"):  # no links or paths out of it
            tar.extractall(unpacked, filter="data")
        else:
            tar.extractall(unpacked)
    return unpacked


def families(logs):
    """(family, rudnn JSON, anchor JSON) for each family that has both."""
    found = []
    for ours in sorted(glob.glob(os.path.join(logs, "**", "*-rudnn.json"),
                                 recursive=True)):
        family = os.path.basename(ours)[:-len("-rudnn.json")]
        anchors = sorted(p for p in glob.glob(os.path.join(
            os.path.dirname(ours), family + "-*.json")) if p != ours)
        if anchors:
            found.append((family, ours, anchors[0]))
    return found


def chart(title, note, series, unit, logarithmic):
    """An SVG of horizontal bars: `series` {name: [(label, value or None)]},
    a group of bars a label, one a series that has a value there; `unit`
    after each value."""
    labels = list(dict.fromkeys(l for rows in series.values() for l, _ in rows))
    values = [v for rows in series.values() for _, v in rows if v]
    low, high = (min(values + [1.0]), max(values + [1.0])) if values else (1, 1)
    if logarithmic:
        low, high = math.log2(low) - 0.25, math.log2(high) + 0.25
        place = lambda v: (math.log2(v) - low) / (high - low)
    else:
        low, high = 0.0, high * 1.1
        place = lambda v: v / high
    groups = [(label, [(i, dict(rows).get(label))
                       for i, rows in enumerate(series.values())
                       if dict(rows).get(label)]) for label in labels]
    x0 = MARGIN + 7 * max([len(label) for label in labels] + [10]) + MARGIN
    top = 3 * ROW + MARGIN + ROW * len(series)
    height = top + sum(ROW * (len(bars) or 1) + ROW // 2 for _, bars in groups)
    width = x0 + PLOT + 80
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
           f'height="{height + 2 * ROW}" font-family="sans-serif" '
           'font-size="11">',
           f'<text x="{MARGIN}" y="{ROW + 2}" font-size="14" '
           f'font-weight="bold">{escape(title)}</text>',
           f'<text x="{MARGIN}" y="{2 * ROW + 4}">{escape(note)}</text>']
    for i, name in enumerate(series):
        y = 3 * ROW + i * ROW
        out.append(f'<rect x="{MARGIN}" y="{y}" width="10" height="10" '
                   f'fill="{COLOURS[i % len(COLOURS)]}"/>'
                   f'<text x="{MARGIN + 14}" y="{y + 9}">{escape(name)}</text>')
    y = top
    for label, bars in groups:
        rows = len(bars) or 1
        out.append(f'<text x="{x0 - 6}" y="{y + ROW * rows / 2 + 3:.1f}" '
                   f'text-anchor="end">{escape(label)}</text>')
        for i, value in bars:
            w = max(1.0, PLOT * place(value))
            out.append(f'<rect class="bar" x="{x0}" y="{y}" width="{w:.1f}" '
                       f'height="{ROW - 3}" fill="{COLOURS[i % len(COLOURS)]}"/>'
                       f'<text x="{x0 + w + 4:.1f}" y="{y + ROW - 5}">'
                       f'{value:.2f}{unit}</text>')
            y += ROW
        y += ROW * (rows - len(bars)) + ROW // 2
    if logarithmic:  # the 1x line: rudnn as fast as the anchor
        x = x0 + PLOT * place(1.0)
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" '
                   f'y2="{height}" stroke="black" stroke-dasharray="4,3"/>'
                   f'<text x="{x:.1f}" y="{height + ROW}" '
                   f'text-anchor="middle">1×</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def plot_results(results, out):
    logs = logs_of(results)
    sys.path.insert(0, HERE)
    written = []
    for family, ours, theirs in families(logs):
        compare = importlib.import_module(f"compare_{family}")
        note = (f"{os.path.basename(os.path.normpath(results))}: anchor time "
                "/ rudnn time, right of 1× rudnn is faster")
        path = os.path.join(out, f"{family}.svg")
        with open(path, "w") as svg:
            svg.write(chart(compare.TITLE, note,
                            compare.ratios(ours, theirs), "×", True))
        written.append(path)
    return written


def plot_model(reports, out):
    """Each report's `// plan @NAME at DIMS` and `// plan @NAME roofline:
    N us` lines, as one series a report file."""
    series = {}
    for report in reports:
        rows, dims = [], {}
        with open(report) as text:
            for line in text:
                if m := re.match(r"// plan @(\S+) at ([^:]+):", line):
                    dims[m[1]] = m[2]
                elif m := re.match(r"// plan @(\S+) roofline: ([0-9.]+) us", line):
                    rows.append((f"{m[1]} at {dims.get(m[1], '?')}",
                                 float(m[2])))
        series[os.path.splitext(os.path.basename(report))[0].replace("_", " ")] = rows
    path = os.path.join(out, "model.svg")
    with open(path, "w") as svg:
        svg.write(chart("rudnn's kernel-report model (not a measurement)",
                        "each plan's roofline at the report's dims, in µs",
                        series, " µs", False))
    return [path]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("inputs", nargs="+", help="RESULTS, or REPORT... with --model")
    parser.add_argument("--model", action="store_true")
    parser.add_argument("--out")
    args = parser.parse_args()
    out = args.out or (os.path.join(args.inputs[0], "charts") if not args.model
                       else ".")
    os.makedirs(out, exist_ok=True)
    written = (plot_model(args.inputs, out) if args.model
               else plot_results(args.inputs[0], out))
    for path in written:
        print(path)
    if not written:
        sys.exit("plot.py: no family has both rudnn's and an anchor's results")


if __name__ == "__main__":
    main()
