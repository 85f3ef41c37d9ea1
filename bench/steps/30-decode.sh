# The K/V cache's GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): a decoding step beside PyTorch's SDPA and the copy
# bandwidth.
binaries+=(rudnn-bench-decode)
bench_files+=(sdpa_decode.py compare_decode.py)

decode_rudnn() {
  "$bin/rudnn-bench-decode" --backend cuda --json "$logs/decode-rudnn.json"
}
decode_sdpa() {
  PYTHONUNBUFFERED=1 python3 "$scripts/bench/sdpa_decode.py" \
    --json "$logs/decode-sdpa.json"
}
decode_summary() {
  if [[ -s "$logs/decode-rudnn.json" || -s "$logs/decode-sdpa.json" ]]; then
    echo "== decoding step bf16 over a K/V cache, rudnn vs torch SDPA"
    echo "   (Hq = 32, Hk = 8, D = 128; ratio = SDPA / rudnn)"
    python3 "$scripts/bench/compare_decode.py" \
      "$logs/decode-rudnn.json" "$logs/decode-sdpa.json" 2>&1
  fi
}
step decode-rudnn 90 decode_rudnn
step decode-sdpa 90 decode_sdpa
summaries+=(decode_summary)
