# The LSTM's GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): rudnn beside torch.nn.LSTM (cuDNN).
binaries+=(rudnn-bench-lstm)
bench_files+=(torch_lstm.py compare_lstm.py)

lstm_rudnn() {
  "$bin/rudnn-bench-lstm" --backend cuda --json "$logs/lstm-rudnn.json"
}
lstm_torch() {
  PYTHONUNBUFFERED=1 python3 "$scripts/bench/torch_lstm.py" \
    --json "$logs/lstm-torch.json"
}
lstm_summary() {
  if [[ -s "$logs/lstm-rudnn.json" || -s "$logs/lstm-torch.json" ]]; then
    echo "== LSTM, rudnn vs torch.nn.LSTM (cuDNN; ratio = torch / rudnn)"
    python3 "$scripts/bench/compare_lstm.py" \
      "$logs/lstm-rudnn.json" "$logs/lstm-torch.json" 2>&1
  fi
}
step lstm-rudnn 90 lstm_rudnn
step lstm-torch 90 lstm_torch
summaries+=(lstm_summary)
