# The norms' GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): LayerNorm and RMSNorm beside PyTorch's and the
# copy bandwidth.
binaries+=(rudnn-bench-norm)
bench_files+=(torch_norm.py compare_norm.py)

norm_rudnn() {
  "$bin/rudnn-bench-norm" --backend cuda --json "$logs/norm-rudnn.json"
}
norm_torch() {
  PYTHONUNBUFFERED=1 python3 "$scripts/bench/torch_norm.py" \
    --json "$logs/norm-torch.json"
}
norm_summary() {
  if [[ -s "$logs/norm-rudnn.json" || -s "$logs/norm-torch.json" ]]; then
    echo "== LayerNorm and RMSNorm, rudnn vs PyTorch (ratio = torch / rudnn;"
    echo "   of copy: the copy bandwidth's share rudnn reaches)"
    python3 "$scripts/bench/compare_norm.py" \
      "$logs/norm-rudnn.json" "$logs/norm-torch.json" 2>&1
  fi
}
step norm-rudnn 60 norm_rudnn
step norm-torch 60 norm_torch
summaries+=(norm_summary)
