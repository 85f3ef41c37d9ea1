# The LSTM's GPU checks, sourced by scripts/device-check (and read by
# scripts/device-bundle): rudnn beside torch.nn.LSTM (cuDNN).
binaries+=(rudnn-bench-lstm)
bench_files+=(torch_lstm.py compare_lstm.py)

lstm_summary() {
  compare_tables "LSTM, rudnn vs torch.nn.LSTM (cuDNN; ratio = torch / rudnn)" \
    compare_lstm.py lstm-rudnn lstm-torch
}
step lstm-rudnn 90 rudnn_bench lstm
step lstm-torch 90 anchor_bench torch_lstm.py
summaries+=(lstm_summary)
