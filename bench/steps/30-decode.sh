# The K/V cache's GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): a decoding step beside PyTorch's SDPA and the copy
# bandwidth.
binaries+=(rudnn-bench-decode)
bench_files+=(sdpa_decode.py compare_decode.py)

decode_summary() {
  compare_tables "decoding step bf16 over a K/V cache, rudnn vs torch SDPA
   (Hq = 32, Hk = 8, D = 128; ratio = SDPA / rudnn)" \
    compare_decode.py decode-rudnn decode-sdpa
}
step decode-rudnn 90 rudnn_bench decode
step decode-sdpa 90 anchor_bench sdpa_decode.py
summaries+=(decode_summary)
