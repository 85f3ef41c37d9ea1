"""Drop-in replacements for what PyTorch users call today, registered as
torch.library custom ops (``torch.ops.rudnn.*``, with fake
implementations, so torch.compile traces them without graph breaks) and
differentiable through torch.autograd where the operator has a backward:

- ``chunk_kda`` and ``fused_recurrent_kda`` as flash-linear-attention's,
  and ``kda_decode``, its decoding step over a pool of states;
- ``flash_attn_func``, ``flash_attn_varlen_func`` and their qkv- and
  kv-packed forms as flash-attn 2.8's;
- ``flash_attn_with_kvcache`` as flash-attn 2.8's (new k and v, causal),
  over ``kv_cache_attention``;
- ``layer_norm`` and ``rms_norm`` as torch.nn.functional's, with fused
  residual forms;
- ``LSTM`` and ``GRU``, torch.nn.Modules loading a torch.nn.LSTM or
  torch.nn.GRU state_dict unchanged.

CUDA tensors run on the GPU, CPU tensors on the emulation backend.

Each drop-in calls its operator through ``rudnn.call_operator``. Each
signature of a call (operator, dtypes, the dims the code is specialized
for, alignment, attribute values such as eps or softmax_scale) builds a
function kept by the context, at most 256 of them (RUDNN_PROGRAM_CACHE_SIZE
at import, or ``set_program_cache_size``), the least recently used
dropped; ``program_cache_info`` counts its hits, misses and evictions.
"""

from rudnn.program import program_cache_info, set_program_cache_size
from rudnn.torch.attention import (
    flash_attn_func,
    flash_attn_kvpacked_func,
    flash_attn_qkvpacked_func,
    flash_attn_varlen_func,
    flash_attn_varlen_kvpacked_func,
    flash_attn_varlen_qkvpacked_func,
)
from rudnn.torch.kda import chunk_kda, fused_recurrent_kda
from rudnn.torch.kda_decode import kda_decode
from rudnn.torch.kv_cache import flash_attn_with_kvcache, kv_cache_attention
from rudnn.torch.gru import GRU
from rudnn.torch.lstm import LSTM
from rudnn.torch.norm import layer_norm, rms_norm

__all__ = [
    "GRU",
    "LSTM",
    "chunk_kda",
    "fused_recurrent_kda",
    "flash_attn_func",
    "flash_attn_kvpacked_func",
    "flash_attn_qkvpacked_func",
    "flash_attn_varlen_func",
    "flash_attn_varlen_kvpacked_func",
    "flash_attn_varlen_qkvpacked_func",
    "kda_decode",
    "flash_attn_with_kvcache",
    "kv_cache_attention",
    "layer_norm",
    "program_cache_info",
    "rms_norm",
    "set_program_cache_size",
]
