//===- Operators.cpp - The C API's operators ------------------------------===//
//
// Each entry point builds the C++ call from the C struct and makes it: the
// checks, errors and results are the C++ entry point's.
//
//===----------------------------------------------------------------------===//

#include "lib/capi/CApi.h"

#include "rudnn/attention.h"
#include "rudnn/gru.h"
#include "rudnn/kda.h"
#include "rudnn/kv_cache.h"
#include "rudnn/lstm.h"
#include "rudnn/norm.h"
#include "rudnn/operator.h"

using namespace rudnn;
using namespace rudnn::capi;

namespace {

/// The views of one C struct, named "call->field" in errors.
struct Fields {
  std::string prefix;
  TensorView operator()(const rudnn_tensor_t *tensor, const char *field) const {
    return view(tensor, prefix + field);
  }
  std::optional<TensorView> optional(const rudnn_tensor_t *tensor,
                                     const char *field) const {
    return optionalView(tensor, prefix + field);
  }
};

std::optional<float> scaleOrDefault(float scale) {
  return scale == 0 ? std::nullopt : std::optional<float>(scale);
}

std::optional<bool> tristate(rudnn_tristate_t value, const char *name) {
  switch (enumValue(value)) {
  case RUDNN_CHOSEN:
    return std::nullopt;
  case RUDNN_NO:
    return false;
  case RUDNN_YES:
    return true;
  }
  throw InvalidArgument(std::string(name) + " is " +
                        std::to_string(enumValue(value)) +
                        ", expected a rudnn_tristate_t");
}

KdaForwardInputs kdaInputs(const rudnn_kda_forward_call_t &call,
                           const Fields &f) {
  return {f(call.q, "q"),
          f(call.k, "k"),
          f(call.v, "v"),
          f(call.g, "g"),
          f(call.beta, "beta"),
          f.optional(call.initial_state, "initial_state"),
          f.optional(call.cu_seqlens, "cu_seqlens"),
          f.optional(call.a_log, "a_log"),
          f.optional(call.dt_bias, "dt_bias")};
}

KdaOptions kdaOptions(float scale, int chunk,
                      const rudnn_kda_transforms_t &transforms) {
  KdaOptions options;
  options.scale = scaleOrDefault(scale);
  if (chunk)
    options.chunk = chunk;
  options.qkL2Norm = transforms.qk_l2norm != 0;
  options.betaLogits = transforms.beta_logits != 0;
  if (transforms.gate_lower_bound != 0)
    options.gateLowerBound = transforms.gate_lower_bound;
  return options;
}

KdaOptions kdaOptions(const rudnn_kda_forward_call_t &call) {
  return kdaOptions(call.scale, call.chunk, call.transforms);
}

AttentionOptions attentionOptions(const rudnn_attention_options_t &c) {
  AttentionOptions options;
  options.scale = scaleOrDefault(c.scale);
  options.causal = c.causal != 0;
  if (c.local_window) {
    options.windowLeft = c.window_left;
    options.windowRight = c.window_right;
  }
  options.softcap = c.softcap;
  options.deterministic = c.deterministic != 0;
  return options;
}

AttentionInputs attentionInputs(const rudnn_attention_call_t &call,
                                const Fields &f) {
  return {f(call.q, "q"),
          f(call.k, "k"),
          f(call.v, "v"),
          f.optional(call.key_lengths, "key_lengths"),
          f.optional(call.key_mask, "key_mask"),
          f.optional(call.alibi_slopes, "alibi_slopes")};
}

AttentionVarlenInputs varlenInputs(const rudnn_attention_varlen_call_t &call,
                                   const Fields &f) {
  return {f(call.q, "q"),
          f(call.k, "k"),
          f(call.v, "v"),
          f(call.cu_seqlens_q, "cu_seqlens_q"),
          f(call.cu_seqlens_k, "cu_seqlens_k"),
          f.optional(call.alibi_slopes, "alibi_slopes")};
}

NormInputs normInputs(const rudnn_norm_call_t &call, const Fields &f) {
  return {f(call.x, "x"), f.optional(call.residual, "residual"),
          f.optional(call.gamma, "gamma"), f.optional(call.beta, "beta")};
}

NormBackwardInputs normBackwardInputs(const rudnn_norm_backward_call_t &call,
                                      const Fields &f) {
  return {f(call.dy, "dy"), f(call.x, "x"), f.optional(call.mean, "mean"),
          f(call.rstd, "rstd"), f.optional(call.gamma, "gamma")};
}

NormBackwardOutputs normGradients(const rudnn_norm_backward_call_t &call,
                                  const Fields &f) {
  return {f(call.dx, "dx"), f.optional(call.dgamma, "dgamma"),
          f.optional(call.dbeta, "dbeta")};
}

/// Runs `body(call, fields)` for a non-null `call`, under `guarded`.
template <typename Call, typename Body>
rudnn_status_t callWith(rudnn_context_t context, const Call *call, Body body) {
  return guarded([&] {
    Context &cxx = contextOf(context);
    requireNonNull(call, "call");
    body(cxx, *call, Fields{"call->"});
  });
}

} // namespace

namespace {

/// The named tensors of a C call, by name; throws for a null or repeated
/// one.
template <typename Fields>
std::map<std::string, TensorView> namedTensors(const rudnn_named_tensor_t *list,
                                               size_t count, const char *what,
                                               Fields f) {
  std::map<std::string, TensorView> named;
  if (count)
    requireNonNull(list, std::string("call->") + what);
  for (size_t i = 0; i < count; ++i) {
    const std::string field = std::string(what) + "[" + std::to_string(i) + "]";
    requireNonNull(list[i].name, "call->" + field + ".name");
    if (!named
             .emplace(list[i].name,
                      f(&list[i].tensor, (field + ".tensor").c_str()))
             .second)
      throw InvalidArgument(
          "call->" + field + " repeats the " +
          (std::string(what) == "weights" ? "weight" : "gradient") + " '" +
          list[i].name + "'");
  }
  return named;
}

/// The forward's inputs and options, which both LSTM calls carry.
template <typename Call, typename Fields>
std::pair<LstmInputs, LstmOptions> lstmInputs(const Call &c, Fields f) {
  LstmInputs inputs{f(c.x, "x"), f.optional(c.h0, "h0"), f.optional(c.c0, "c0"),
                    namedTensors(c.weights, c.weight_count, "weights", f),
                    f.optional(c.lengths, "lengths")};
  LstmOptions options;
  options.numLayers = c.num_layers ? c.num_layers : 1;
  options.bidirectional = c.bidirectional != 0;
  options.batchFirst = c.batch_first != 0;
  options.checkLengths = c.skip_length_check == 0;
  options.units = c.units;
  options.weightsOnChip = tristate(c.weights_on_chip, "call->weights_on_chip");
  options.allowTf32 = tristate(c.allow_tf32, "call->allow_tf32");
  return {inputs, options};
}

/// hidden, cells and gates as an LstmSaved (none when all are absent).
template <typename Call, typename Fields>
std::optional<LstmSaved> lstmSaved(const Call &c, Fields f) {
  if (!c.hidden && !c.cells && !c.gates)
    return std::nullopt;
  return LstmSaved{f(c.hidden, "hidden"), f(c.cells, "cells"),
                   f.optional(c.gates, "gates")};
}

/// A GRU call through the LSTM's struct: its cell-state fields refused by
/// name, the rest as GruInputs.
template <typename Call, typename Fields>
std::pair<GruInputs, GruOptions> gruInputs(const Call &c, Fields f) {
  const std::pair<const void *, const char *> cellStates[] = {
      {c.c0, "c0"}, {c.cells, "cells"}};
  for (auto [field, name] : cellStates)
    if (field)
      throw InvalidArgument(std::string("call->") + name +
                            " must be null: a GRU has no cell state");
  auto [lstm, options] = lstmInputs(c, f);
  return {GruInputs{lstm.x, lstm.h0, lstm.weights, lstm.lengths}, options};
}

/// hidden and gates as a GruSaved (none when both are absent).
template <typename Call, typename Fields>
std::optional<GruSaved> gruSaved(const Call &c, Fields f) {
  if (!c.hidden && !c.gates)
    return std::nullopt;
  return GruSaved{f(c.hidden, "hidden"), f(c.gates, "gates")};
}

} // namespace

extern "C" {

rudnn_status_t rudnn_kda_forward(rudnn_context_t context,
                                 const rudnn_kda_forward_call_t *call,
                                 rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    kdaForward(cxx, kdaInputs(c, f),
               {f(c.output, "output"), f.optional(c.final_state, "final_state"),
                f.optional(c.boundaries, "boundaries"),
                f.optional(c.tiles, "tiles")},
               kdaOptions(c), stream);
  });
}

rudnn_status_t rudnn_kda_backward(rudnn_context_t context,
                                  const rudnn_kda_backward_call_t *call,
                                  rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    const Fields forward{"call->forward."};
    kdaBackward(cxx,
                {kdaInputs(c.forward, forward), f(c.d_output, "d_output"),
                 f.optional(c.d_final_state, "d_final_state"),
                 forward.optional(c.forward.boundaries, "boundaries"),
                 forward.optional(c.forward.tiles, "tiles")},
                {f(c.dq, "dq"), f(c.dk, "dk"), f(c.dv, "dv"), f(c.dg, "dg"),
                 f(c.dbeta, "dbeta"),
                 f.optional(c.d_initial_state, "d_initial_state"),
                 f.optional(c.d_a_log, "d_a_log"),
                 f.optional(c.d_dt_bias, "d_dt_bias")},
                kdaOptions(c.forward), stream);
  });
}

rudnn_status_t rudnn_kda_decode(rudnn_context_t context,
                                const rudnn_kda_decode_call_t *call,
                                rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    kdaDecode(cxx,
              {f(c.q, "q"), f(c.k, "k"), f(c.v, "v"), f(c.g, "g"),
               f(c.beta, "beta"), f(c.state_pool, "state_pool"),
               f(c.slots, "slots"), f.optional(c.a_log, "a_log"),
               f.optional(c.dt_bias, "dt_bias")},
              {f(c.output, "output"), f.optional(c.status, "status")},
              kdaOptions(c.scale, 0, c.transforms), stream);
  });
}

rudnn_status_t rudnn_attention_forward(rudnn_context_t context,
                                       const rudnn_attention_call_t *call,
                                       rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    attentionForward(cxx, attentionInputs(c, f),
                     {f(c.o, "o"), f.optional(c.lse, "lse")},
                     attentionOptions(c.options), stream);
  });
}

rudnn_status_t
rudnn_attention_varlen_forward(rudnn_context_t context,
                               const rudnn_attention_varlen_call_t *call,
                               rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    attentionVarlenForward(cxx, varlenInputs(c, f),
                           {f(c.o, "o"), f.optional(c.lse, "lse")},
                           attentionOptions(c.options), stream);
  });
}

rudnn_status_t
rudnn_attention_backward(rudnn_context_t context,
                         const rudnn_attention_backward_call_t *call,
                         rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    const Fields forward{"call->forward."};
    attentionBackward(cxx,
                      {attentionInputs(c.forward, forward),
                       forward(c.forward.o, "o"), forward(c.forward.lse, "lse"),
                       f(c.d_output, "d_output")},
                      {f(c.dq, "dq"), f(c.dk, "dk"), f(c.dv, "dv")},
                      attentionOptions(c.forward.options), stream);
  });
}

rudnn_status_t rudnn_attention_varlen_backward(
    rudnn_context_t context, const rudnn_attention_varlen_backward_call_t *call,
    rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    const Fields forward{"call->forward."};
    attentionVarlenBackward(
        cxx,
        {varlenInputs(c.forward, forward), forward(c.forward.o, "o"),
         forward(c.forward.lse, "lse"), f(c.d_output, "d_output")},
        {f(c.dq, "dq"), f(c.dk, "dk"), f(c.dv, "dv")},
        attentionOptions(c.forward.options), stream);
  });
}

rudnn_status_t rudnn_kv_cache_attention(rudnn_context_t context,
                                        const rudnn_kv_cache_call_t *call,
                                        rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    KvCacheOptions options;
    options.scale = scaleOrDefault(c.scale);
    options.splits = c.splits;
    options.causal = c.non_causal == 0;
    if (c.local_window) {
      options.windowLeft = c.window_left;
      options.windowRight = c.window_right;
    }
    options.softcap = c.softcap;
    options.rotaryInterleaved = c.rotary_interleaved != 0;
    kvCacheAttention(
        cxx,
        {f(c.q, "q"), f.optional(c.k, "k"), f.optional(c.v, "v"),
         f(c.k_cache, "k_cache"), f(c.v_cache, "v_cache"),
         f.optional(c.block_table, "block_table"),
         f(c.cache_lengths, "cache_lengths"),
         f.optional(c.cache_leftpad, "cache_leftpad"),
         f.optional(c.alibi_slopes, "alibi_slopes"),
         f.optional(c.cache_batch_idx, "cache_batch_idx"),
         f.optional(c.rotary_cos, "rotary_cos"),
         f.optional(c.rotary_sin, "rotary_sin")},
        {f(c.o, "o"), f.optional(c.lse, "lse"), f.optional(c.status, "status")},
        options, stream);
  });
}

rudnn_status_t rudnn_lstm_forward(rudnn_context_t context,
                                  const rudnn_lstm_call_t *call,
                                  rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    auto [inputs, options] = lstmInputs(c, f);
    options.perStep = tristate(c.per_step, "call->per_step");
    lstmForward(cxx, inputs,
                {f(c.out, "out"), f.optional(c.h_n, "h_n"),
                 f.optional(c.c_n, "c_n"), lstmSaved(c, f)},
                options, stream);
  });
}

rudnn_status_t rudnn_lstm_backward(rudnn_context_t context,
                                   const rudnn_lstm_backward_call_t *call,
                                   rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    auto [inputs, options] = lstmInputs(c, f);
    std::optional<LstmSaved> saved = lstmSaved(c, f);
    if (!saved)
      throw InvalidArgument("call->hidden and call->cells are missing: the "
                            "backward takes what the forward saved");
    lstmBackward(cxx, inputs, *saved,
                 {f(c.d_out, "d_out"), f.optional(c.d_h_n, "d_h_n"),
                  f.optional(c.d_c_n, "d_c_n")},
                 {f(c.d_x, "d_x"), f.optional(c.d_h0, "d_h0"),
                  f.optional(c.d_c0, "d_c0"),
                  namedTensors(c.d_weights, c.d_weight_count, "d_weights", f)},
                 options, stream);
  });
}

rudnn_status_t rudnn_gru_forward(rudnn_context_t context,
                                 const rudnn_gru_call_t *call,
                                 rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    if (c.c_n)
      throw InvalidArgument("call->c_n must be null: a GRU has no cell state");
    auto [inputs, options] = gruInputs(c, f);
    options.perStep = tristate(c.per_step, "call->per_step");
    gruForward(cxx, inputs,
               {f(c.out, "out"), f.optional(c.h_n, "h_n"), gruSaved(c, f)},
               options, stream);
  });
}

rudnn_status_t rudnn_gru_backward(rudnn_context_t context,
                                  const rudnn_gru_backward_call_t *call,
                                  rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    if (c.d_c_n || c.d_c0)
      throw InvalidArgument(std::string("call->") +
                            (c.d_c_n ? "d_c_n" : "d_c0") +
                            " must be null: a GRU has no cell state");
    auto [inputs, options] = gruInputs(c, f);
    std::optional<GruSaved> saved = gruSaved(c, f);
    if (!saved)
      throw InvalidArgument("call->hidden and call->gates are missing: the "
                            "backward takes what the forward saved");
    gruBackward(cxx, inputs, *saved,
                {f(c.d_out, "d_out"), f.optional(c.d_h_n, "d_h_n")},
                {f(c.d_x, "d_x"), f.optional(c.d_h0, "d_h0"),
                 namedTensors(c.d_weights, c.d_weight_count, "d_weights", f)},
                options, stream);
  });
}

rudnn_status_t rudnn_layer_norm(rudnn_context_t context,
                                const rudnn_norm_call_t *call,
                                rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    layerNorm(cxx, normInputs(c, f),
              {f(c.y, "y"), f.optional(c.mean, "mean"),
               f.optional(c.rstd, "rstd"), f.optional(c.h, "h")},
              c.eps, stream);
  });
}

rudnn_status_t rudnn_rms_norm(rudnn_context_t context,
                              const rudnn_norm_call_t *call,
                              rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    if (c.mean)
      throw InvalidArgument("call->mean is given, but RMSNorm has no mean");
    rmsNorm(cxx, normInputs(c, f),
            {f(c.y, "y"), f.optional(c.rstd, "rstd"), f.optional(c.h, "h")},
            c.eps, stream);
  });
}

rudnn_status_t rudnn_moments(rudnn_context_t context, const rudnn_tensor_t *x,
                             const rudnn_tensor_t *mean,
                             const rudnn_tensor_t *var, rudnn_stream_t stream) {
  return guarded([&] {
    Context &cxx = contextOf(context);
    moments(cxx, view(x, "x"), {view(mean, "mean"), view(var, "var")}, stream);
  });
}

rudnn_status_t rudnn_layer_norm_backward(rudnn_context_t context,
                                         const rudnn_norm_backward_call_t *call,
                                         rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    layerNormBackward(cxx, normBackwardInputs(c, f), normGradients(c, f),
                      stream);
  });
}

rudnn_status_t rudnn_rms_norm_backward(rudnn_context_t context,
                                       const rudnn_norm_backward_call_t *call,
                                       rudnn_stream_t stream) {
  return callWith(context, call, [&](Context &cxx, const auto &c, auto f) {
    rmsNormBackward(cxx, normBackwardInputs(c, f), normGradients(c, f), stream);
  });
}

} // extern "C"

namespace {

/// A generic call's operator, attributes and tensors from C: NULLs and bad
/// kinds refused by name.
struct GenericCall {
  std::string op;
  OperatorAttributes converted;
  NamedTensors named;
};

GenericCall genericCall(const char *op, const rudnn_attribute_t *attributes,
                        size_t attribute_count, size_t tensor_count,
                        const char *const *names,
                        const rudnn_tensor_t *tensors) {
  GenericCall call;
  if (!op)
    throw InvalidArgument("op is NULL");
  if ((attribute_count && !attributes) ||
      (tensor_count && (!names || !tensors)))
    throw InvalidArgument("attributes, names or tensors is NULL with a "
                          "nonzero count");
  for (size_t i = 0; i < attribute_count; ++i) {
    const rudnn_attribute_t &a = attributes[i];
    const std::string where = "attributes[" + std::to_string(i) + "]";
    if (!a.name)
      throw InvalidArgument(where + ".name is NULL");
    switch (enumValue(a.kind)) {
    case RUDNN_ATTRIBUTE_BOOL:
      if (a.integer != 0 && a.integer != 1)
        throw InvalidArgument(where + " ('" + a.name + "') is a bool of " +
                              std::to_string(a.integer) + ", expected 0 or 1");
      call.converted.emplace_back(a.name, a.integer != 0);
      break;
    case RUDNN_ATTRIBUTE_INT:
      call.converted.emplace_back(a.name, a.integer);
      break;
    case RUDNN_ATTRIBUTE_FLOAT:
      call.converted.emplace_back(a.name, a.number);
      break;
    case RUDNN_ATTRIBUTE_STRING:
      if (!a.string)
        throw InvalidArgument(where + " ('" + a.name +
                              "') is a string of NULL");
      call.converted.emplace_back(a.name, std::string(a.string));
      break;
    default:
      throw InvalidArgument(where + ".kind is " +
                            std::to_string(enumValue(a.kind)) +
                            ", expected a rudnn_attribute_kind_t");
    }
  }
  for (size_t i = 0; i < tensor_count; ++i) {
    if (!names[i])
      throw InvalidArgument("names[" + std::to_string(i) + "] is NULL");
    call.named.emplace_back(names[i], view(&tensors[i], names[i]));
  }
  call.op = op;
  return call;
}

} // namespace

rudnn_status_t rudnn_call_operator(rudnn_context_t context, const char *op,
                                   const rudnn_attribute_t *attributes,
                                   size_t attribute_count, size_t tensor_count,
                                   const char *const *names,
                                   const rudnn_tensor_t *tensors,
                                   rudnn_stream_t stream) {
  return guarded([&] {
    Context &cxx = contextOf(context);
    const GenericCall call = genericCall(op, attributes, attribute_count,
                                         tensor_count, names, tensors);
    callOperator(cxx, call.op, call.converted, call.named, stream);
  });
}

rudnn_status_t
rudnn_operator_function(rudnn_context_t context, const char *op,
                        const rudnn_attribute_t *attributes,
                        size_t attribute_count, size_t tensor_count,
                        const char *const *names, const rudnn_tensor_t *tensors,
                        size_t result_count, const char *const *result_names,
                        rudnn_function_t *function) {
  return guarded([&] {
    Context &cxx = contextOf(context);
    requireNonNull(function, "function");
    *function = nullptr;
    const GenericCall call = genericCall(op, attributes, attribute_count,
                                         tensor_count, names, tensors);
    if (result_count && !result_names)
      throw InvalidArgument("result_names is NULL with a nonzero count");
    std::vector<std::string> results;
    for (size_t i = 0; i < result_count; ++i) {
      if (!result_names[i])
        throw InvalidArgument("result_names[" + std::to_string(i) +
                              "] is NULL");
      results.push_back(result_names[i]);
    }
    *function = new rudnn_function{
        operatorFunction(cxx, call.op, call.converted, call.named, results)};
  });
}
