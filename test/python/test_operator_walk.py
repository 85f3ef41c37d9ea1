"""Every operator of the dialect from Python: its function built through
the generic entry with every operand its contract declares (optional ones
included), every result asked for and every attribute a caller sets, as
test/api/OperatorWalkTest.cpp does from C++ and C."""

import numpy as np
import pytest

import rudnn
from rudnn import _rudnn

# A value for each attribute a caller sets; an operator gaining one adds it
# here or to CHOSEN_BY_SPECIALIZE.
CALLER_ATTRIBUTES = {
    "batch_first": True,
    "beta_logits": True,
    "bidirectional": True,
    "causal": True,
    "deterministic": True,
    "eps": 1e-5,
    "gate_lower_bound": -5.0,
    "grouped_heads": False,
    "non_causal": True,
    "num_layers": 2,
    "qk_l2norm": True,
    "rotary_interleaved": True,
    "save_boundaries": True,
    "save_gates": True,
    "save_states": True,
    "save_tiles": True,
    "scale": 0.25,
    "softcap": 30.0,
    "window_left": 3,
    "window_right": 0,
}
# Attributes a caller sets on operators whose name starts so: KDA's saved
# boundaries and tiles need the chunk they were saved at.
FAMILY_ATTRIBUTES = {"rudnn.kda": {"chunk": 16}}
# Tile and launch shapes rudnn-specialize chooses (a call may override them).
CHOSEN_BY_SPECIALIZE = {
    "allow_tf32",
    "block_k",
    "block_q",
    "block_rows",
    "blocks",
    "chunk",
    "decode_blocks",
    "decode_queries",
    "per_step",
    "rows_per_block",
    "splits",
    "threads",
    "units",
    "warps",
    "weights_on_chip",
    "wgmma",
    "wgmma_projection",
}
DTYPES = {"i32": np.int32, "bool": np.bool_}
# Tensors whose presence widens a contract (an LSTM's biases).
RANKS = {"bias_ih_l0": 1}


def sizes_for(signature, attributes):
    """5 for a dynamic dim, 16 for a static one (within its bounds), twice
    the divisor for a multiple, the stated relation for a derived one
    (pieces by the attribute `attributes` give it)."""
    sizes = {}
    for dim in signature["dims"]:
        if not dim["times_of"] and not dim["pieces_of"]:
            sizes[dim["letter"]] = min(max(16 if dim["static"] else 5, dim["min"]), dim["max"])
    for dim in signature["dims"]:
        if dim["multiple_of"] in sizes:
            sizes[dim["letter"]] = 2 * sizes[dim["multiple_of"]]
    for _ in range(3):
        for dim in signature["dims"]:
            if dim["times_of"] in sizes:
                sizes[dim["letter"]] = dim["times"] * sizes[dim["times_of"]] + dim["plus"]
    for dim in signature["dims"]:
        if dim["pieces_of"] and dim["per_attribute"] in attributes:
            per = attributes[dim["per_attribute"]]
            sizes[dim["letter"]] = -(-sizes[dim["pieces_of"]] // per) + (
                sizes[dim["plus_of"]] if dim["plus_of"] else 0
            )
    return sizes


def walked(op):
    """The attributes a caller sets on `op`, the signature they give, the
    sizes of its dims and zeroed operands, and the results it names."""
    attributes = {}
    family = next((v for k, v in FAMILY_ATTRIBUTES.items() if op.startswith(k)), {})
    for name in rudnn.operator_signature(op)["attributes"]:
        if name in family:
            attributes[name] = family[name]
        elif name in CALLER_ATTRIBUTES:
            attributes[name] = CALLER_ATTRIBUTES[name]
        else:
            assert name in CHOSEN_BY_SPECIALIZE, f"{op}'s attribute {name!r} is not walked"
    signature = rudnn.operator_signature(op, ranks=RANKS, **attributes)
    sizes = sizes_for(signature, attributes)
    saved = saved_by_forward(op)
    tensors = {
        operand["name"]: np.zeros(
            saved.get(operand["name"]) or [sizes[letter] for letter in operand["layout"]],
            DTYPES.get(operand["element"], np.float32),
        )
        for operand in signature["operands"]
    }
    results = [result["name"] for result in signature["results"]]
    return attributes, signature, sizes, tensors, results


def saved_by_forward(op):
    """For "<op>_backward": the shapes its forward declares for what it
    saves (sizes it fixes itself, as KDA's tile words), the walk's sizes for
    its dynamic dims."""
    if not op.endswith("_backward"):
        return {}
    attributes, _, sizes, tensors, results = walked(op[: -len("_backward")])
    function = _rudnn.operator_function(
        rudnn.default_context(), op[: -len("_backward")], attributes, tensors, results
    )
    return {
        r["name"]: [d if d >= 0 else sizes[letter] for d, letter in zip(r["shape"], r["layout"])]
        for r in function.results
    }


@pytest.mark.parametrize("op", rudnn.operator_names())
def test_every_operand_and_attribute_is_accepted(op):
    attributes, signature, _, tensors, results = walked(op)
    function = _rudnn.operator_function(rudnn.default_context(), op, attributes, tensors, results)
    assert [a["name"] for a in function.arguments] == [o["name"] for o in signature["operands"]]
    assert {r["name"] for r in function.results} >= set(results)


def test_signature_states_the_contract():
    signature = rudnn.operator_signature("rudnn.lstm", num_layers=2, bidirectional=True)
    names = [o["name"] for o in signature["operands"]]
    assert names[:4] == ["x", "h0", "c0", "lengths"]
    assert "weight_ih_l1_reverse" in names and "bias_hh_l0" not in names
    biased = rudnn.operator_signature(
        "rudnn.lstm", ranks={"bias_ih_l0": 1}, num_layers=2, bidirectional=True
    )
    assert "bias_hh_l1_reverse" in [o["name"] for o in biased["operands"]]
    x = signature["operands"][0]
    assert x["layout"] == "TBI" and x["element"] == "float" and not x["optional"]
    states = next(d for d in signature["dims"] if d["letter"] == "N")
    assert states["static"] and states["min"] == states["max"] == 4
    cache = rudnn.operator_signature("rudnn.kv_cache_attention")
    k_cache = next(r for r in cache["results"] if r["name"] == "k_cache")
    assert k_cache["updates"] == "k_cache"
    with pytest.raises(rudnn.Unsupported, match="no operator"):
        rudnn.operator_signature("rudnn.nothing")
