# KDA's GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): rudnn's forward and training step beside
# flash-linear-attention's chunk_kda, and the kernel report at each shape.
binaries+=(rudnn-bench-kda)
bench_files+=(fla_kda.py compare_kda.py kda_bf16_k128.mlir
              kda_training_bf16_k128.mlir)

# Shapes (B,T,H,K=V) in order of interest: one long sequence at B = 1 (the
# serial walk's worst case), a large training batch, then full GPUs at
# K = 128.
shapes="1,32768,16,128;8,8192,32,128;4,4096,64,128;2,16384,16,128;"
shapes+="1,8192,96,128;8,1024,8,64;"
# Packed sequences (8 of mixed lengths, 32k tokens) and grouped value heads.
shapes+="varlen:1000+7191+513+9216+2047+4096+3073+5632,32,128;"
shapes+="gva:2,8192,16,32,128"
export shapes
plan_notes+=("shapes (B,T,H,K): $shapes")

kda_rudnn() { rudnn_bench kda --shapes "$shapes"; }
# Flash-linear-attention beside rudnn: its wheel installed outside $OUT
# (the package-peers step uses it too).
kda_fla() {
  if ls "$wheels"/*.whl > /dev/null 2>&1; then
    python3 -m pip install -q --no-deps --no-index --no-compile \
      --target "$logs/pylib" "$wheels"/*.whl || return 1
  fi
  PYTHONPATH="$logs/pylib:${PYTHONPATH:-}" anchor_bench fla_kda.py \
    --shapes "$shapes"
}
# The kernel report of the benchmarked forward and training step at each
# K = 128 shape: the plans rudnn-run ran there, their cost models and
# rooflines beside the times.
kda_report() {
  local shape B T H K
  for shape in ${shapes//;/ }; do
    [[ "$shape" == *:* ]] && continue # batches only
    IFS=, read -r B T H K <<<"$shape"
    [[ "$K" == 128 ]] || continue
    echo "=== B=$B T=$T H=$H K=$K"
    "$bin/rudnn-run" "$scripts/bench/kda_bf16_k128.mlir" --backend cuda \
      --random 0 --dims "B=$B,T=$T,H=$H" --report || return 1
    "$bin/rudnn-run" "$scripts/bench/kda_training_bf16_k128.mlir" \
      --backend cuda --random 0 --dims "B=$B,T=$T,H=$H" --report || return 1
  done
}
kda_summary() {
  compare_tables "KDA bf16, rudnn vs flash-linear-attention (ratio = fla / rudnn)" \
    compare_kda.py kda-rudnn kda-fla
  if [[ -s "$logs/kda-report.log" ]]; then
    echo "== KDA kernel report (the roofline bound of each shape's forward"
    echo "   and backward; the whole reports, per kernel, in kda-report.log)"
    grep -hE "^// (plan|-----)|^(block|registers|shared|model|sass):" \
      "$logs/kda-report.log" | head -90
  fi
}
step kda-rudnn 150 kda_rudnn
step kda-fla 150 kda_fla
step kda-report 60 kda_report
summaries+=(kda_summary)
