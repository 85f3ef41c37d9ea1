# Attention's GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): rudnn beside PyTorch's SDPA, each backend forced,
# and the kernel report at each shape.
binaries+=(rudnn-bench-attention)
bench_files+=(sdpa_attention.py compare_attention.py attention_bf16_d128.mlir
             attention_bf16_d64_blocks.mlir attention_backward_bf16_d128.mlir)

# (B,T,H,D,causal): FlashAttention's benchmark shapes, 16k tokens a batch
# at hidden 2048, D = 128, causal and not.
attention_shapes=""
for causal in 0 1; do
  for T in 512 1024 2048 4096 8192 16384; do
    attention_shapes+="$((16384 / T)),$T,16,128,$causal;"
  done
done
export attention_shapes
plan_notes+=("attention shapes (B,T,H,D,causal): $attention_shapes")

attention_rudnn() { rudnn_bench attention --shapes "$attention_shapes"; }
attention_sdpa() { anchor_bench sdpa_attention.py --shapes "$attention_shapes"; }
# The kernel report of the benchmarked attention at each shape, not causal
# and causal.
attention_report() {
  local shape B T H D causal entry
  for shape in ${attention_shapes//;/ }; do
    IFS=, read -r B T H D causal <<<"$shape"
    entry=main
    ((causal)) && entry=causal
    echo "=== B=$B T=$T H=$H D=$D causal=$causal"
    "$bin/rudnn-run" "$scripts/bench/attention_bf16_d128.mlir" --entry "$entry" \
      --backend cuda --random 0 --dims "B=$B,T=$T,S=$T,H=$H,G=$H" --report ||
      return 1
  done
}
# The Hopper forward's two blocks at D = 64 (three warpgroups against 64 keys,
# two against 128), not causal and causal: which one the policy should
# choose there.
attention_blocks() {
  time_entries attention_bf16_d64_blocks.mlir B=4,T=4096,S=4096,H=16,G=16 \
    three two three_causal two_causal
}
# The Hopper backward's two modes at D = 128 (dq by atomics, and in key-tile
# order), not causal and causal: the deterministic mode's cost.
attention_backward_modes() {
  time_entries attention_backward_bf16_d128.mlir B=4,T=4096,S=4096,H=16,G=16 \
    atomic deterministic atomic_causal deterministic_causal
}
attention_summary() {
  compare_tables "attention bf16, rudnn vs torch SDPA (ratio = backend / rudnn)" \
    compare_attention.py attention-rudnn attention-sdpa
  if [[ -s "$logs/attention-report.log" ]]; then
    echo "== attention kernel report (per shape, per kernel)"
    grep -hE "^// (plan|-----)|^(block|registers|shared|model|sass):" \
      "$logs/attention-report.log" | head -40
  fi
  if [[ -s "$logs/attention-blocks.log" ]]; then
    echo "== attention D = 64 blocks (B=4 T=4096 H=16): median ms"
    grep -hE "^(===|bench:)" "$logs/attention-blocks.log"
  fi
  if [[ -s "$logs/attention-backward-modes.log" ]]; then
    echo "== attention backward D = 128 modes (B=4 T=4096 H=16): median ms"
    grep -hE "^(===|bench:)" "$logs/attention-backward-modes.log"
  fi
}
step attention-rudnn 120 attention_rudnn
step attention-sdpa 120 attention_sdpa
step attention-report 45 attention_report
step attention-blocks 40 attention_blocks
step attention-backward-modes 40 attention_backward_modes
summaries+=(attention_summary)
