"""rudnn's attention as a Hugging Face transformers attention
implementation::

    import rudnn.integrations.transformers as rudnn_transformers
    rudnn_transformers.register()
    model = AutoModelForCausalLM.from_pretrained(..., attn_implementation="rudnn")

``register()`` adds ``"rudnn"`` to transformers' attention registry (and
its mask registry, with the 2-D padding mask FlashAttention's
implementations take). The model's attention layers then call
``rudnn.torch.flash_attn_func`` (no padding) or ``flash_attn_varlen_func``
(padded rows packed by the mask, as transformers' FlashAttention path
does; packed sequences from ``cu_seq_lens_q``/``cu_seq_lens_k``): causal
masks aligned to the last key, grouped key heads as they are, sliding
windows, softcapping, the layer's scaling, and gradients through autograd.
What rudnn cannot compute is refused by name (``rudnn.Unsupported``):
dropout, attention sinks, a padding mask with holes inside a sequence.
"""

import torch

from rudnn.errors import Unsupported, invalid
from rudnn.torch.attention import flash_attn_func, flash_attn_varlen_func

NAME = "rudnn"


def register(name=NAME):
    """Registers rudnn's attention under `name` in transformers' attention
    and mask registries; returns the name to pass as attn_implementation.
    Imports transformers, which rudnn needs for this alone."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, flash_attention_mask

    AttentionInterface.register(name, attention_forward)
    AttentionMaskInterface.register(name, flash_attention_mask)
    return name


def attention_forward(
    module,
    query,
    key,
    value,
    attention_mask,
    dropout=0.0,
    scaling=None,
    sliding_window=None,
    softcap=None,
    is_causal=None,
    s_aux=None,
    **kwargs,
):
    """An attention layer's attention as transformers calls it: query
    [B, H, T, D], key [B, G, S, D] and value [B, G, S, E] (H a multiple of
    G), `attention_mask` the [B, S] padding mask (True: a token) or None.
    Returns the output [B, T, H, E] and no weights; rows of padding
    queries are 0."""
    if dropout:
        raise Unsupported(
            "dropout: rudnn's attention has no dropout (set the model's "
            "attention_dropout to 0.0, or call model.eval())"
        )
    if s_aux is not None:
        raise Unsupported("s_aux: rudnn's attention has no attention sinks")
    causal = is_causal if is_causal is not None else getattr(module, "is_causal", True)
    # transformers' FlashAttention convention: the window reaches
    # sliding_window − 1 keys back.
    window = (-1, -1) if sliding_window is None else (sliding_window - 1, sliding_window - 1)
    options = dict(
        softmax_scale=scaling,
        causal=bool(causal),
        window_size=window,
        softcap=0.0 if softcap is None else softcap,
    )
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    cu_q, cu_k = kwargs.get("cu_seq_lens_q"), kwargs.get("cu_seq_lens_k")
    if cu_q is not None and cu_k is not None:
        if q.shape[0] != 1:
            raise invalid("cu_seq_lens_q", f"packed sequences come as one row, got {q.shape[0]}")
        return flash_attn_varlen_func(q[0], k[0], v[0], cu_q, cu_k, **options).unsqueeze(0), None
    if attention_mask is None:
        return flash_attn_func(q, k, v, **options), None
    return _padded(q, k, v, attention_mask, options), None


def _offsets(counts):
    """cu_seqlens (int32) of entries of `counts` rows."""
    return torch.nn.functional.pad(counts.cumsum(0), (1, 0)).to(torch.int32)


def _padded(q, k, v, mask, options):
    """Attention over padded rows, packed by `mask` [B, S] into one entry a
    row: its tokens as keys, and as queries those of the last T positions
    (the queries' own). Each row's tokens must be one run: the causal
    mask and the window then relate a query and a key by their positions'
    difference as the packed entry's bottom-right alignment does (the
    entry's last query and last key are the row's last token)."""
    batch, queries, keys = q.shape[0], q.shape[1], k.shape[1]
    if mask.dim() != 2 or tuple(mask.shape) != (batch, keys):
        raise Unsupported(
            f"attention_mask: expected the [B, S] = [{batch}, {keys}] padding mask "
            f"register() asks transformers for, got shape {tuple(mask.shape)}"
        )
    if queries > keys:
        raise invalid("query", f"{queries} queries past the {keys} keys they attend to")
    mask = mask.to(torch.bool)
    counts = mask.sum(1)
    at = torch.arange(keys, device=mask.device)
    first = torch.where(mask, at, keys).min(1).values
    last = torch.where(mask, at, -1).max(1).values
    if bool(((last - first + 1).clamp_min(0) != counts).any()):
        raise Unsupported(
            "attention_mask: a row whose tokens are not one run (padding "
            "inside a sequence) has no equivalent in rudnn's attention"
        )
    query_mask = mask[:, keys - queries :]
    o = flash_attn_varlen_func(
        q[query_mask],
        k[mask],
        v[mask],
        _offsets(query_mask.sum(1)),
        _offsets(counts),
        **options,
    )
    padded = o.new_zeros(batch, queries, *o.shape[1:])
    return padded.index_put((query_mask,), o)
