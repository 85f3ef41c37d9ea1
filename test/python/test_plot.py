"""bench/plot.py on sample device-check results (unpacked and as the
archive device-check writes) and on a kernel report: the charts hold a bar
for each measured (shape, series) with its ratio, and nothing else."""

import json
import os
import subprocess
import sys
import tarfile
import xml.etree.ElementTree as ElementTree

import pytest

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")
SVG = "{http://www.w3.org/2000/svg}"


def write(path, records):
    path.write_text(json.dumps({"results": records}))


def sample_logs(folder):
    """Attention over two shapes (SDPA's cuDNN backend missing at one),
    norms over one, and a family whose anchor did not run."""
    folder.mkdir()
    write(folder / "attention-rudnn.json", [
        {"B": 1, "T": 128, "H": 2, "D": 64, "causal": True, "ms": 2.0, "fwd_bwd_ms": 5.0},
        {"B": 2, "T": 256, "H": 2, "D": 64, "causal": False, "ms": 4.0, "fwd_bwd_ms": 10.0},
    ])
    write(folder / "attention-sdpa.json", [
        {"B": 1, "T": 128, "H": 2, "D": 64, "causal": True,
         "flash": {"ms": 3.0, "fwd_bwd_ms": 5.0}, "cudnn": {"ms": 1.0, "fwd_bwd_ms": 4.0}},
        {"B": 2, "T": 256, "H": 2, "D": 64, "causal": False,
         "flash": {"ms": 8.0, "fwd_bwd_ms": 12.0}},
    ])
    write(folder / "norm-rudnn.json", [
        {"rows": 4096, "C": 1024, "bits": 16, "op": "rms", "pass": "fwd", "ms": 0.5}])
    write(folder / "norm-torch.json", [
        {"rows": 4096, "C": 1024, "bits": 16, "op": "rms", "pass": "fwd",
         "torch": {"ms": 1.5, "copy_ms": 0.4}}])
    write(folder / "lstm-rudnn.json", [{"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 16, "ms": 1.0}])
    return folder


def plot(*arguments):
    done = subprocess.run([sys.executable, os.path.join(BENCH, "plot.py"), *arguments],
                          check=True, capture_output=True, text=True)
    return done.stdout.split()


def bars(path):
    """(fill, the value text beside the bar) of each bar in the chart."""
    root = ElementTree.parse(path).getroot()
    elements = list(root)
    found = []
    for i, element in enumerate(elements):
        if element.tag == SVG + "rect" and element.get("class") == "bar":
            found.append((element.get("fill"), elements[i + 1].text))
    return found


@pytest.mark.parametrize("archived", [False, True], ids=["unpacked", "archive"])
def test_results_become_one_chart_a_family(tmp_path, archived):
    logs = sample_logs(tmp_path / "logs")
    results = logs
    if archived:
        results = tmp_path / "2026-12-05-H200"
        results.mkdir()
        with tarfile.open(results / "device-check.tar.gz", "w:gz") as tar:
            tar.add(logs, arcname="logs")
    out = tmp_path / "charts"
    written = plot(str(results), "--out", str(out))
    assert sorted(os.path.basename(p) for p in written) == ["attention.svg", "norm.svg"]
    # Attention: forward flash 1.5 and 2.0, cudnn 0.5 (second shape has
    # none), efficient none; forward + backward flash 1.0 and 1.2, cudnn 0.8.
    values = sorted(text for _, text in bars(out / "attention.svg"))
    assert values == sorted(["1.50×", "2.00×", "0.50×", "1.00×", "1.20×", "0.80×"])
    assert [text for _, text in bars(out / "norm.svg")] == ["3.00×"]
    assert "1×" in (out / "norm.svg").read_text()


def test_a_kernel_report_becomes_a_model_chart(tmp_path):
    report = tmp_path / "attention.txt"
    report.write_text(
        "// plan @main at B=8,T=2048,S=2048,H=16,G=16: workspace 0 bytes\n"
        "// ----- kernel attention_fwd\n"
        "// plan @main roofline: 412.5 us over the launches\n"
    )
    written = plot("--model", str(report), "--out", str(tmp_path))
    assert [os.path.basename(p) for p in written] == ["model.svg"]
    text = (tmp_path / "model.svg").read_text()
    assert "not a measurement" in text and "main at B=8,T=2048,S=2048,H=16,G=16" in text
    assert [value for _, value in bars(tmp_path / "model.svg")] == ["412.50 µs"]


def test_results_without_any_pair_say_so(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "lstm-rudnn.json", [])
    done = subprocess.run([sys.executable, os.path.join(BENCH, "plot.py"), str(logs)],
                          capture_output=True, text=True)
    assert done.returncode != 0 and "no family has both" in done.stderr


def test_lstm_comparison_keeps_tf32_apart_from_strict_f32(tmp_path):
    # cuDNN's f32 LSTM under PyTorch's default may use TF32, as rudnn's
    # default does: the comparison pairs the defaults, then gives a second
    # series of both in strict f32, for f32 shapes only.
    write(tmp_path / "ours.json", [
        {"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 32, "ms": 2.0, "tf32": True,
         "strict_f32": {"ms": 2.5}},
        {"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 16, "ms": 1.0}])
    write(tmp_path / "theirs.json", [
        {"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 32,
         "torch": {"ms": 1.0, "tf32": True}, "torch_strict_f32": {"ms": 3.0, "tf32": False}},
        {"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 16, "torch": {"ms": 1.5, "tf32": False}}])
    sys.path.insert(0, BENCH)
    try:
        import compare_lstm
    finally:
        sys.path.remove(BENCH)
    series = compare_lstm.ratios(tmp_path / "ours.json", tmp_path / "theirs.json")
    assert series == {
        "torch": [("8,1,4,1,1,32", 0.5), ("8,1,4,1,1,16", 1.5)],
        "torch strict f32": [("8,1,4,1,1,32", 1.2)],
    }


def test_lstm_comparison_adds_the_training_step_where_both_timed_it(tmp_path):
    write(tmp_path / "ours.json", [
        {"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 16, "ms": 1.0, "train_ms": 4.0}])
    write(tmp_path / "theirs.json", [
        {"H": 8, "B": 1, "T": 4, "L": 1, "D": 1, "bits": 16,
         "torch": {"ms": 1.5, "train_ms": 6.0, "tf32": False}}])
    sys.path.insert(0, BENCH)
    try:
        import compare_lstm
    finally:
        sys.path.remove(BENCH)
    series = compare_lstm.ratios(tmp_path / "ours.json", tmp_path / "theirs.json")
    assert series == {
        "torch": [("8,1,4,1,1,16", 1.5)],
        "torch training": [("8,1,4,1,1,16", 1.5)],
    }
