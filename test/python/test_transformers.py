"""rudnn as transformers' attention: small randomly initialised
Llama-family models built from configs (nothing downloaded), their
logits, greedy generation with the cache and a training step's gradients
against the same model on transformers' "sdpa"."""

import copy

import pytest
import torch
import transformers
from conftest import assert_close

import rudnn
import rudnn.integrations.transformers as rudnn_transformers

IMPLEMENTATION = rudnn_transformers.register()


def calls():
    """The rudnn calls run so far (each looks its function up once)."""
    counters = rudnn.default_context().counters()
    return counters["function_cache_hits"] + counters["function_cache_misses"]


def twins(config_class, **overrides):
    """The same randomly initialised causal LM on "sdpa" and on rudnn."""
    config = config_class(
        vocab_size=97,
        hidden_size=64,
        intermediate_size=96,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=64,
        attention_dropout=0.0,
        **overrides,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    reference = transformers.AutoModelForCausalLM.from_config(config).eval()
    ours = copy.deepcopy(reference)
    ours.set_attn_implementation(IMPLEMENTATION)
    return reference, ours


def left_padded(batch=2, length=11, pad=4):
    """Token ids and the mask of a batch whose last row is left-padded."""
    ids = torch.randint(1, 97, (batch, length))
    mask = torch.ones(batch, length, dtype=torch.long)
    mask[-1, :pad] = 0
    ids[-1, :pad] = 0
    return ids, mask


@pytest.mark.parametrize(
    "config_class, overrides",
    [
        (transformers.LlamaConfig, {}),
        # Every layer a sliding window of 5 tokens.
        (transformers.MistralConfig, {"sliding_window": 5}),
    ],
    ids=["llama_gqa", "mistral_sliding_window"],
)
def test_logits_match_sdpa_with_and_without_padding(config_class, overrides):
    reference, ours = twins(config_class, **overrides)
    ids, mask = left_padded()
    with torch.no_grad():
        for attention_mask in (None, mask):
            want = reference(ids, attention_mask=attention_mask).logits
            before = calls()
            got = ours(ids, attention_mask=attention_mask).logits
            assert calls() - before == 2  # an attention call a layer
            kept = torch.ones_like(ids, dtype=torch.bool) if attention_mask is None else mask.bool()
            assert_close(got[kept], want[kept], 1e-4, "logits")


def test_greedy_generation_with_the_cache_matches_sdpa():
    reference, ours = twins(transformers.LlamaConfig)
    ids, mask = left_padded()
    settings = dict(attention_mask=mask, max_new_tokens=16, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = reference.generate(ids, **settings)
        before = calls()
        got = ours.generate(ids, **settings)
    # The prompt and 15 steps with the cache (the 16th token needs none),
    # two layers each.
    assert calls() - before == 2 * 16
    assert got.shape == (2, 11 + 16)
    assert torch.equal(got, want)


def test_a_training_step_has_sdpa_gradients():
    reference, ours = twins(transformers.LlamaConfig)
    ids, mask = left_padded()
    labels = ids.masked_fill(mask == 0, -100)
    for model in (reference, ours):
        model.train()
        model(ids, attention_mask=mask, labels=labels).loss.backward()
    pairs = list(zip(reference.named_parameters(), ours.named_parameters()))
    assert len(pairs) > 10
    for (name, want), (_, got) in pairs:
        assert got.grad is not None, name
        assert_close(got.grad, want.grad, 1e-3, name)


def test_what_rudnn_cannot_compute_is_refused_by_name():
    _, ours = twins(transformers.LlamaConfig)
    ids, mask = left_padded()
    holed = mask.clone()
    holed[0, 5] = 0  # padding inside a sequence
    with torch.no_grad(), pytest.raises(rudnn.Unsupported, match="attention_mask"):
        ours(ids, attention_mask=holed)
    ours.config.attention_dropout = 0.1
    for layer in ours.model.layers:
        layer.self_attn.attention_dropout = 0.1
    ours.train()
    with pytest.raises(rudnn.Unsupported, match="dropout"):
        ours(ids)
