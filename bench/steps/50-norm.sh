# The norms' GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): LayerNorm and RMSNorm beside PyTorch's and the
# copy bandwidth.
binaries+=(rudnn-bench-norm)
bench_files+=(torch_norm.py compare_norm.py)

norm_summary() {
  compare_tables "LayerNorm and RMSNorm, rudnn vs PyTorch (ratio = torch / rudnn;
   of copy: the copy bandwidth's share rudnn reaches)" \
    compare_norm.py norm-rudnn norm-torch
}
step norm-rudnn 60 rudnn_bench norm
step norm-torch 60 anchor_bench torch_norm.py
summaries+=(norm_summary)
