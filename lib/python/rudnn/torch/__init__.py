"""Drop-in replacements for what PyTorch users call today, registered as
torch.library custom ops (``torch.ops.rudnn.*``, with fake
implementations, so torch.compile traces them without graph breaks) and
differentiable through torch.autograd where the operator has a backward:

- ``chunk_kda`` as flash-linear-attention's, and ``kda_decode``, its
  decoding step over a pool of states;
- ``flash_attn_func`` and ``flash_attn_varlen_func`` as FlashAttention's;
- ``kv_cache_attention``, FlashAttention's flash_attn_with_kvcache step;
- ``layer_norm`` and ``rms_norm`` as torch.nn.functional's, with fused
  residual forms;
- ``LSTM``, a torch.nn.Module loading a torch.nn.LSTM state_dict unchanged.

CUDA tensors run on the GPU, CPU tensors on the emulation backend.
"""

from rudnn.torch.attention import flash_attn_func, flash_attn_varlen_func
from rudnn.torch.kda import chunk_kda
from rudnn.torch.kda_decode import kda_decode
from rudnn.torch.kv_cache import kv_cache_attention
from rudnn.torch.lstm import LSTM
from rudnn.torch.norm import layer_norm, rms_norm

__all__ = [
    "LSTM",
    "chunk_kda",
    "kda_decode",
    "flash_attn_func",
    "flash_attn_varlen_func",
    "kv_cache_attention",
    "layer_norm",
    "rms_norm",
]
