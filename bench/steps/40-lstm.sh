# The LSTM's and the GRU's GPU checks, sourced by scripts/device-check (and
# read by scripts/device-bundle): rudnn beside torch.nn.LSTM and
# torch.nn.GRU (cuDNN).
binaries+=(rudnn-bench-lstm rudnn-bench-gru)
bench_files+=(torch_lstm.py compare_lstm.py)

lstm_summary() {
  compare_tables "LSTM, rudnn vs torch.nn.LSTM (cuDNN; ratio = torch / rudnn)" \
    compare_lstm.py lstm-rudnn lstm-torch
  compare_tables "GRU, rudnn vs torch.nn.GRU (cuDNN; ratio = torch / rudnn)" \
    compare_lstm.py gru-rudnn gru-torch
}
step lstm-rudnn 90 rudnn_bench lstm
step lstm-torch 90 anchor_bench torch_lstm.py
step gru-rudnn 60 rudnn_bench gru
step gru-torch 60 anchor_bench torch_lstm.py --cell gru
summaries+=(lstm_summary)
