"""bench/package_peers.py, the harness device-check times the drop-ins
with, runs here on tiny CPU shapes: every case yields times and the
drop-in agrees with the function it replaces."""

import json
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(__file__), "..", "..", "bench")


def test_package_peers_smoke(tmp_path):
    out = tmp_path / "peers.json"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run(
        [
            sys.executable,
            os.path.join(BENCH, "package_peers.py"),
            "--smoke",
            "--only",
            "norm,decode,lstm",
            "--json",
            str(out),
        ],
        check=True,
        env=environment,
        capture_output=True,
    )
    results = json.loads(out.read_text())["results"]
    cases = {(r["case"].split()[0], r["pass"]) for r in results}
    assert cases == {
        ("layer_norm", "forward"),
        ("layer_norm", "training"),
        ("rms_norm", "forward"),
        ("rms_norm", "training"),
        ("decode", "forward"),
        ("lstm", "forward"),
    }
    for record in results:
        assert record["rudnn_ms"] > 0 and record["anchor_ms"] > 0 and record["ratio"] > 0
        assert record["max_abs_difference"] < 1e-4, record
