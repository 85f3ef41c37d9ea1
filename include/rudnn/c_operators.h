/*===- rudnn/c_operators.h - The operators, from C ------------------------===*\
|*                                                                            *|
|* Each function mirrors the C++ entry point of the same name (rudnn/kda.h,   *|
|* attention.h, kv_cache.h, lstm.h, gru.h, norm.h): the same contract, checks
and   *|
|* errors. Tensors are rudnn_tensor_t; an optional one is a pointer, NULL     *|
|* when absent. Zero-initialise a call's struct, then fill what it needs.     *|
|* Included by rudnn/rudnn.h.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef RUDNN_C_OPERATORS_H
#define RUDNN_C_OPERATORS_H

#ifdef __cplusplus
extern "C" {
#endif

/* --- Any operator, by name (rudnn/operator.h) ----------------------------- */

typedef enum rudnn_attribute_kind {
  RUDNN_ATTRIBUTE_BOOL = 0,  /* `integer`, 0 or 1 */
  RUDNN_ATTRIBUTE_INT = 1,   /* `integer` */
  RUDNN_ATTRIBUTE_FLOAT = 2, /* `number` */
  RUDNN_ATTRIBUTE_STRING = 3 /* `string` */
} rudnn_attribute_kind_t;

/* One attribute of an operator call, e.g. {"eps", RUDNN_ATTRIBUTE_FLOAT,
 * 0, 1e-5, NULL}; converted as rudnn::callOperator converts it. */
typedef struct rudnn_attribute {
  const char *name;
  rudnn_attribute_kind_t kind;
  int64_t integer;
  double number;
  const char *string;
} rudnn_attribute_t;

/* Calls the operator `op` ("rudnn.layer_norm") with `attribute_count`
 * attributes and `tensor_count` tensors, tensors[i] named names[i] by the
 * operator's contract (an operand and a result of one name, a cache
 * updated in place, given once): rudnn::callOperator. Every operator and
 * option of the dialect is reachable here. */
rudnn_status_t rudnn_call_operator(rudnn_context_t context, const char *op,
                                   const rudnn_attribute_t *attributes,
                                   size_t attribute_count, size_t tensor_count,
                                   const char *const *names,
                                   const rudnn_tensor_t *tensors,
                                   rudnn_stream_t stream);

/* The function rudnn_call_operator would call for these tensors (results
 * given are checked, as a cache updated in place), returning the
 * `result_count` results named in `result_names`, in the contract's order:
 * rudnn::operatorFunction. For callers that allocate the results from
 * rudnn_function_result_shape first; release it with
 * rudnn_function_destroy. */
rudnn_status_t
rudnn_operator_function(rudnn_context_t context, const char *op,
                        const rudnn_attribute_t *attributes,
                        size_t attribute_count, size_t tensor_count,
                        const char *const *names, const rudnn_tensor_t *tensors,
                        size_t result_count, const char *const *result_names,
                        rudnn_function_t *function);

/* --- Kimi Delta Attention (rudnn/kda.h) ----------------------------------- */

/* The transforms of rudnn::KdaOptions: q and k L2-normalised inside, beta
 * as logits, and with a_log the gate bounded below (0: unbounded). */
typedef struct rudnn_kda_transforms {
  int qk_l2norm;
  int beta_logits;
  float gate_lower_bound;
} rudnn_kda_transforms_t;

typedef struct rudnn_kda_forward_call {
  const rudnn_tensor_t *q, *k, *v, *g, *beta;
  const rudnn_tensor_t *initial_state; /* optional */
  const rudnn_tensor_t *output;
  const rudnn_tensor_t *final_state, *boundaries, *tiles; /* optional */
  float scale;                                            /* 0: K^-0.5 */
  int chunk;                                              /* 0: chosen */
  /* Optional: packed sequences (B = 1, i32 offsets), and the gate's
   * parameters (g then holds the raw gate). */
  const rudnn_tensor_t *cu_seqlens, *a_log, *dt_bias;
  rudnn_kda_transforms_t transforms;
} rudnn_kda_forward_call_t;

/* forward: the forward's inputs, the boundaries and tiles it saved
 * (optional), its scale, chunk and transforms; its output and final_state
 * are unread. d_a_log and d_dt_bias: exactly when a_log and dt_bias are
 * given. */
typedef struct rudnn_kda_backward_call {
  rudnn_kda_forward_call_t forward;
  const rudnn_tensor_t *d_output;
  const rudnn_tensor_t *d_final_state; /* optional */
  const rudnn_tensor_t *dq, *dk, *dv, *dg, *dbeta;
  const rudnn_tensor_t *d_initial_state;     /* optional */
  const rudnn_tensor_t *d_a_log, *d_dt_bias; /* optional */
} rudnn_kda_backward_call_t;

/* One decoding step over a pool of states (rudnn::kdaDecode): each entry b
 * advances state_pool[slots[b]] in place; status (optional) says which
 * entries were refused. */
typedef struct rudnn_kda_decode_call {
  const rudnn_tensor_t *q, *k, *v, *g, *beta, *state_pool, *slots;
  const rudnn_tensor_t *a_log, *dt_bias; /* optional */
  const rudnn_tensor_t *output;
  const rudnn_tensor_t *status; /* optional */
  float scale;                  /* 0: K^-0.5 */
  rudnn_kda_transforms_t transforms;
} rudnn_kda_decode_call_t;

rudnn_status_t rudnn_kda_forward(rudnn_context_t context,
                                 const rudnn_kda_forward_call_t *call,
                                 rudnn_stream_t stream);
rudnn_status_t rudnn_kda_backward(rudnn_context_t context,
                                  const rudnn_kda_backward_call_t *call,
                                  rudnn_stream_t stream);
rudnn_status_t rudnn_kda_decode(rudnn_context_t context,
                                const rudnn_kda_decode_call_t *call,
                                rudnn_stream_t stream);

/* --- Attention (rudnn/attention.h) ---------------------------------------- */

typedef struct rudnn_attention_options {
  float scale; /* 0: D^-0.5 */
  int causal;
  /* 0: no local window; else keys within window_left before and
   * window_right after each query's diagonal (-1: unbounded on that side). */
  int local_window;
  int window_left, window_right;
  float softcap; /* 0: none */
  /* The backward's dq the same bits every call on the Hopper kernel too
   * (its additions ordered); the forward ignores it. */
  int deterministic;
} rudnn_attention_options_t;

typedef struct rudnn_attention_call {
  const rudnn_tensor_t *q, *k, *v;
  const rudnn_tensor_t *key_lengths, *key_mask; /* optional */
  const rudnn_tensor_t *alibi_slopes;           /* optional: [B, H] f32 */
  const rudnn_tensor_t *o;
  const rudnn_tensor_t *lse; /* optional */
  rudnn_attention_options_t options;
} rudnn_attention_call_t;

typedef struct rudnn_attention_varlen_call {
  const rudnn_tensor_t *q, *k, *v, *cu_seqlens_q, *cu_seqlens_k;
  const rudnn_tensor_t *alibi_slopes; /* optional: [H] f32 */
  const rudnn_tensor_t *o;
  const rudnn_tensor_t *lse; /* optional */
  rudnn_attention_options_t options;
} rudnn_attention_varlen_call_t;

/* forward: the forward's inputs and options, and its o and lse (both
 * read here), then the gradients. */
typedef struct rudnn_attention_backward_call {
  rudnn_attention_call_t forward;
  const rudnn_tensor_t *d_output;
  const rudnn_tensor_t *dq, *dk, *dv;
} rudnn_attention_backward_call_t;

typedef struct rudnn_attention_varlen_backward_call {
  rudnn_attention_varlen_call_t forward;
  const rudnn_tensor_t *d_output;
  const rudnn_tensor_t *dq, *dk, *dv;
} rudnn_attention_varlen_backward_call_t;

rudnn_status_t rudnn_attention_forward(rudnn_context_t context,
                                       const rudnn_attention_call_t *call,
                                       rudnn_stream_t stream);
rudnn_status_t
rudnn_attention_varlen_forward(rudnn_context_t context,
                               const rudnn_attention_varlen_call_t *call,
                               rudnn_stream_t stream);
rudnn_status_t
rudnn_attention_backward(rudnn_context_t context,
                         const rudnn_attention_backward_call_t *call,
                         rudnn_stream_t stream);
rudnn_status_t rudnn_attention_varlen_backward(
    rudnn_context_t context, const rudnn_attention_varlen_backward_call_t *call,
    rudnn_stream_t stream);

/* --- Decoding over a K/V cache (rudnn/kv_cache.h) ------------------------- */

typedef struct rudnn_kv_cache_call {
  const rudnn_tensor_t *q;
  const rudnn_tensor_t *k, *v; /* both null: attend only */
  const rudnn_tensor_t *k_cache, *v_cache;
  const rudnn_tensor_t *block_table; /* optional: paged */
  const rudnn_tensor_t *cache_lengths;
  const rudnn_tensor_t *o;
  const rudnn_tensor_t *lse, *status; /* optional */
  float scale;                        /* 0: D^-0.5 */
  int splits;                         /* 0: chosen */
  /* optional: each entry's left padding [B] i32; ALiBi slopes [B, H] f32 */
  const rudnn_tensor_t *cache_leftpad, *alibi_slopes;
  int non_causal; /* nonzero: every query sees every key to the last */
  /* 0: no local window; else keys within window_left before and
   * window_right after each query's diagonal (-1: unbounded on that side). */
  int local_window;
  int window_left, window_right;
  float softcap; /* 0: none */
  /* optional: contiguous caches' row of each entry [B] i32; the rotary
   * embedding's tables [R, Q] in q's dtype (with k and v) */
  const rudnn_tensor_t *cache_batch_idx, *rotary_cos, *rotary_sin;
  int rotary_interleaved; /* nonzero: pairs (2p, 2p + 1), else (p, p + Q) */
} rudnn_kv_cache_call_t;

rudnn_status_t rudnn_kv_cache_attention(rudnn_context_t context,
                                        const rudnn_kv_cache_call_t *call,
                                        rudnn_stream_t stream);

/* --- LSTM (rudnn/lstm.h) ---------------------------------------------------
 */

typedef struct rudnn_named_tensor {
  const char *name; /* a torch.nn.LSTM state_dict key, e.g. "weight_ih_l0" */
  rudnn_tensor_t tensor;
} rudnn_named_tensor_t;

typedef enum rudnn_tristate {
  RUDNN_CHOSEN = 0, /* rudnn decides */
  RUDNN_NO = 1,
  RUDNN_YES = 2
} rudnn_tristate_t;

typedef struct rudnn_lstm_call {
  const rudnn_tensor_t *x;
  const rudnn_tensor_t *h0, *c0; /* optional */
  const rudnn_named_tensor_t *weights;
  size_t weight_count;
  const rudnn_tensor_t *lengths; /* optional: packed */
  const rudnn_tensor_t *out;
  const rudnn_tensor_t *h_n, *c_n; /* optional */
  int64_t num_layers;              /* 0: 1 */
  int bidirectional, batch_first;
  int skip_length_check; /* lengths are trusted in [0, T] */
  int64_t units;         /* 0: chosen */
  rudnn_tristate_t weights_on_chip, per_step;
  /* optional: what rudnn_lstm_backward takes (LstmSaved): hidden and cells
     together, gates with them */
  const rudnn_tensor_t *hidden, *cells, *gates;
  rudnn_tristate_t allow_tf32; /* f32 products in TF32; chosen: yes */
} rudnn_lstm_call_t;

rudnn_status_t rudnn_lstm_forward(rudnn_context_t context,
                                  const rudnn_lstm_call_t *call,
                                  rudnn_stream_t stream);

typedef struct rudnn_lstm_backward_call {
  /* the forward's inputs and options, as rudnn_lstm_call_t's */
  const rudnn_tensor_t *x;
  const rudnn_tensor_t *h0, *c0; /* optional */
  const rudnn_named_tensor_t *weights;
  size_t weight_count;
  const rudnn_tensor_t *lengths; /* optional: packed */
  int64_t num_layers;            /* 0: 1 */
  int bidirectional, batch_first;
  int skip_length_check;
  int64_t units; /* 0: chosen */
  rudnn_tristate_t weights_on_chip;
  /* what the forward saved: hidden, cells and (optional) gates */
  const rudnn_tensor_t *hidden, *cells, *gates;
  /* the results' gradients: d_out; d_h_n, d_c_n optional (zero) */
  const rudnn_tensor_t *d_out, *d_h_n, *d_c_n;
  /* the gradients written: d_x; d_h0, d_c0 optional; the weights' by "d_"
     and their keys ("d_weight_ih_l0"), any subset */
  const rudnn_tensor_t *d_x, *d_h0, *d_c0;
  const rudnn_named_tensor_t *d_weights;
  size_t d_weight_count;
  rudnn_tristate_t allow_tf32; /* the GEMMs' f32 products; chosen: yes */
} rudnn_lstm_backward_call_t;

rudnn_status_t rudnn_lstm_backward(rudnn_context_t context,
                                   const rudnn_lstm_backward_call_t *call,
                                   rudnn_stream_t stream);

/* --- GRU (rudnn/gru.h) -----------------------------------------------------
 * The LSTM's call structs: the cell-state fields (c0, c_n, cells, d_c_n,
 * d_c0) must be null, weights are torch.nn.GRU's state_dict (3H rows), and
 * what the forward saves and the backward takes is hidden and gates
 * (r, z, n and W_hn h + b_hn, [L·D, T, B, 4H] f32) together.
 */

typedef rudnn_lstm_call_t rudnn_gru_call_t;
typedef rudnn_lstm_backward_call_t rudnn_gru_backward_call_t;

rudnn_status_t rudnn_gru_forward(rudnn_context_t context,
                                 const rudnn_gru_call_t *call,
                                 rudnn_stream_t stream);

rudnn_status_t rudnn_gru_backward(rudnn_context_t context,
                                  const rudnn_gru_backward_call_t *call,
                                  rudnn_stream_t stream);

/* --- Moments, LayerNorm and RMSNorm (rudnn/norm.h) -------------------------
 */

typedef struct rudnn_norm_call {
  const rudnn_tensor_t *x;
  const rudnn_tensor_t *residual, *gamma, *beta; /* optional */
  const rudnn_tensor_t *y;
  const rudnn_tensor_t *mean, *rstd, *h; /* optional (mean: LayerNorm) */
  float eps; /* as given (torch's defaults: 1e-5 LayerNorm, 1e-6 RMSNorm) */
} rudnn_norm_call_t;

typedef struct rudnn_norm_backward_call {
  const rudnn_tensor_t *dy, *x;
  const rudnn_tensor_t *mean; /* LayerNorm only */
  const rudnn_tensor_t *rstd;
  const rudnn_tensor_t *gamma; /* optional */
  const rudnn_tensor_t *dx;
  const rudnn_tensor_t *dgamma, *dbeta; /* optional (dbeta: LayerNorm) */
} rudnn_norm_backward_call_t;

rudnn_status_t rudnn_layer_norm(rudnn_context_t context,
                                const rudnn_norm_call_t *call,
                                rudnn_stream_t stream);
rudnn_status_t rudnn_rms_norm(rudnn_context_t context,
                              const rudnn_norm_call_t *call,
                              rudnn_stream_t stream);
rudnn_status_t rudnn_moments(rudnn_context_t context, const rudnn_tensor_t *x,
                             const rudnn_tensor_t *mean,
                             const rudnn_tensor_t *var, rudnn_stream_t stream);
rudnn_status_t rudnn_layer_norm_backward(rudnn_context_t context,
                                         const rudnn_norm_backward_call_t *call,
                                         rudnn_stream_t stream);
rudnn_status_t rudnn_rms_norm_backward(rudnn_context_t context,
                                       const rudnn_norm_backward_call_t *call,
                                       rudnn_stream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* RUDNN_C_OPERATORS_H */
