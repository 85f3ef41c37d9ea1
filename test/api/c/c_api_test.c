/*===- c_api_test.c - The C API, from C -----------------------------------===*\
|*                                                                            *|
|* Compiled as C11: the headers are C, and a C program runs KDA, LayerNorm   *|
|* and a Program-API function on the emulation backend, each against a       *|
|* float64 computation here, and meets the errors a C caller can make.       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#include "rudnn/rudnn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

#define EXPECT(condition, ...)                                                 \
  do {                                                                         \
    if (!(condition)) {                                                        \
      fprintf(stderr, "%s:%d: expected %s: ", __FILE__, __LINE__, #condition); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define OK(call)                                                               \
  do {                                                                         \
    rudnn_status_t status_ = (call);                                           \
    if (status_ != RUDNN_STATUS_OK) {                                          \
      fprintf(stderr, "%s:%d: %s gave %s: %s\n", __FILE__, __LINE__, #call,    \
              rudnn_status_string(status_), rudnn_last_error());               \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

static unsigned long long seed = 2026;

/* Uniform in [low, high): a 64-bit LCG, enough for test data. */
static float draw(float low, float high) {
  seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  return low + (high - low) * (float)((seed >> 40) / 16777216.0);
}

static float *fill(size_t count, float low, float high) {
  float *values = malloc(count * sizeof(float));
  for (size_t i = 0; i < count; ++i)
    values[i] = draw(low, high);
  return values;
}

/* A host array copied to the context's memory, with its view. */
typedef struct tensor {
  void *device;
  int64_t shape[4];
  rudnn_tensor_t view;
  size_t bytes;
} tensor_t;

static void upload(rudnn_context_t context, tensor_t *t, const float *values,
                   int rank, const int64_t *shape) {
  size_t count = 1;
  for (int i = 0; i < rank; ++i) {
    t->shape[i] = shape[i];
    count *= (size_t)shape[i];
  }
  t->bytes = count * sizeof(float);
  OK(rudnn_malloc(context, t->bytes, &t->device));
  if (values)
    OK(rudnn_memcpy_to_device(context, t->device, values, t->bytes));
  t->view.data = t->device;
  t->view.dtype = RUDNN_DTYPE_F32;
  t->view.rank = rank;
  t->view.shape = t->shape;
  t->view.strides = NULL;
}

static float *download(rudnn_context_t context, const tensor_t *t) {
  float *values = malloc(t->bytes);
  OK(rudnn_memcpy_to_host(context, values, t->device, t->bytes));
  return values;
}

static double max_error(const float *got, const double *expected,
                        size_t count) {
  double worst = 0;
  for (size_t i = 0; i < count; ++i)
    worst = fmax(worst, fabs(got[i] - expected[i]));
  return worst;
}

/* LayerNorm over rows of 37 features, with gamma and beta, and mean/rstd. */
static void layer_norm(rudnn_context_t context) {
  enum { ROWS = 5, C = 37 };
  float *x = fill(ROWS * C, -2, 3), *gamma = fill(C, 0.5f, 1.5f),
        *beta = fill(C, -1, 1);
  tensor_t tx, tgamma, tbeta, ty, tmean, trstd;
  const int64_t rows_c[] = {ROWS, C}, c[] = {C}, rows[] = {ROWS};
  upload(context, &tx, x, 2, rows_c);
  upload(context, &tgamma, gamma, 1, c);
  upload(context, &tbeta, beta, 1, c);
  upload(context, &ty, NULL, 2, rows_c);
  upload(context, &tmean, NULL, 1, rows);
  upload(context, &trstd, NULL, 1, rows);

  rudnn_norm_call_t call = {0};
  call.x = &tx.view;
  call.gamma = &tgamma.view;
  call.beta = &tbeta.view;
  call.y = &ty.view;
  call.mean = &tmean.view;
  call.rstd = &trstd.view;
  call.eps = 1e-5f;
  OK(rudnn_layer_norm(context, &call, NULL));

  double expected[ROWS * C], expected_mean[ROWS];
  for (int r = 0; r < ROWS; ++r) {
    double sum = 0, squares = 0;
    for (int i = 0; i < C; ++i)
      sum += x[r * C + i];
    const double mean = sum / C;
    for (int i = 0; i < C; ++i)
      squares += (x[r * C + i] - mean) * (x[r * C + i] - mean);
    const double rstd = 1 / sqrt(squares / C + 1e-5);
    expected_mean[r] = mean;
    for (int i = 0; i < C; ++i)
      expected[r * C + i] = (x[r * C + i] - mean) * rstd * gamma[i] + beta[i];
  }
  float *y = download(context, &ty), *mean = download(context, &tmean);
  EXPECT(max_error(y, expected, ROWS * C) < 1e-5, "y error %g",
         max_error(y, expected, ROWS * C));
  EXPECT(max_error(mean, expected_mean, ROWS) < 1e-6, "mean error %g",
         max_error(mean, expected_mean, ROWS));

  /* The same operator through the generic entry, by name: the same y. */
  tensor_t ty2;
  upload(context, &ty2, NULL, 2, rows_c);
  const rudnn_attribute_t eps = {"eps", RUDNN_ATTRIBUTE_FLOAT, 0, 1e-5, NULL};
  const char *names[] = {"x", "gamma", "beta", "y"};
  const rudnn_tensor_t named[] = {tx.view, tgamma.view, tbeta.view, ty2.view};
  OK(rudnn_call_operator(context, "rudnn.layer_norm", &eps, 1, 4, names, named,
                         NULL));
  float *y2 = download(context, &ty2);
  for (int i = 0; i < ROWS * C; ++i)
    EXPECT(y2[i] == y[i], "generic y[%d] = %g, typed %g", i, y2[i], y[i]);
  const rudnn_attribute_t unknown = {"epsilon", RUDNN_ATTRIBUTE_FLOAT, 0, 1,
                                     NULL};
  EXPECT(rudnn_call_operator(context, "rudnn.layer_norm", &unknown, 1, 4, names,
                             named, NULL) == RUDNN_STATUS_INVALID_ARGUMENT,
         "an unknown attribute");
  EXPECT(strstr(rudnn_last_error(), "'epsilon' is not an attribute"),
         "got '%s'", rudnn_last_error());
  free(y2);
  OK(rudnn_free(context, ty2.device));

  /* A bad call names the field and writes nothing. */
  memset(y, 0, ROWS * C * sizeof(float));
  OK(rudnn_memcpy_to_device(context, ty.device, y, ty.bytes));
  call.y = NULL;
  EXPECT(rudnn_layer_norm(context, &call, NULL) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "a NULL y");
  EXPECT(strstr(rudnn_last_error(), "call->y is NULL"), "got '%s'",
         rudnn_last_error());
  call.y = &ty.view;
  ty.view.dtype = (rudnn_dtype_t)9;
  EXPECT(rudnn_layer_norm(context, &call, NULL) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "dtype 9");
  EXPECT(strstr(rudnn_last_error(), "call->y->dtype is 9"), "got '%s'",
         rudnn_last_error());
  ty.view.dtype = RUDNN_DTYPE_F32;
  tgamma.shape[0] = C + 1;
  EXPECT(rudnn_layer_norm(context, &call, NULL) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "a gamma of the wrong size");
  EXPECT(strstr(rudnn_last_error(), "gamma"), "got '%s'", rudnn_last_error());
  float *untouched = download(context, &ty);
  for (int i = 0; i < ROWS * C; ++i)
    EXPECT(untouched[i] == 0, "y[%d] written by a refused call", i);
  EXPECT(rudnn_layer_norm(context, NULL, NULL) == RUDNN_STATUS_INVALID_ARGUMENT,
         "a NULL call");
  EXPECT(strstr(rudnn_last_error(), "call is NULL"), "got '%s'",
         rudnn_last_error());

  free(x), free(gamma), free(beta), free(y), free(mean), free(untouched);
  tensor_t *all[] = {&tx, &tgamma, &tbeta, &ty, &tmean, &trstd};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i)
    OK(rudnn_free(context, all[i]->device));
}

static void run_kda(rudnn_context_t context, void *call) {
  OK(rudnn_kda_forward(context, (const rudnn_kda_forward_call_t *)call, NULL));
}

/* The caller's allocator: counted host memory (what emulation uses). */
static long live_allocations = 0, allocations = 0;

static void *counted_allocate(size_t bytes, void *data) {
  ++*(long *)data, ++allocations;
  return malloc(bytes);
}

static void counted_release(void *pointer, void *data) {
  --*(long *)data;
  free(pointer);
}

/* KDA over 9 tokens, one head, K = V = 8, from a zero state. */
static void kda(rudnn_context_t context) {
  enum { T = 9, K = 8, V = 8 };
  float *q = fill(T * K, -1, 1), *k = fill(T * K, -1, 1),
        *v = fill(T * V, -1, 1), *g = fill(T * K, -0.5f, 0),
        *beta = fill(T, 0, 1);
  for (int t = 0; t < T; ++t) { /* unit-norm keys */
    double norm = 0;
    for (int i = 0; i < K; ++i)
      norm += k[t * K + i] * k[t * K + i];
    for (int i = 0; i < K; ++i)
      k[t * K + i] /= (float)sqrt(norm);
  }
  const int64_t qk[] = {1, T, 1, K}, vo[] = {1, T, 1, V}, b[] = {1, T, 1};
  tensor_t tq, tk, tv, tg, tbeta, to;
  upload(context, &tq, q, 4, qk);
  upload(context, &tk, k, 4, qk);
  upload(context, &tv, v, 4, vo);
  upload(context, &tg, g, 4, qk);
  upload(context, &tbeta, beta, 3, b);
  upload(context, &to, NULL, 4, vo);

  rudnn_kda_forward_call_t call = {0};
  call.q = &tq.view, call.k = &tk.view, call.v = &tv.view, call.g = &tg.view;
  call.beta = &tbeta.view;
  call.output = &to.view;
  OK(rudnn_kda_forward(context, &call, NULL));

  double state[K][V] = {{0}}, expected[T * V];
  for (int t = 0; t < T; ++t)
    for (int j = 0; j < V; ++j) {
      double predicted = 0, out = 0;
      for (int i = 0; i < K; ++i) {
        state[i][j] *= exp(g[t * K + i]);
        predicted += state[i][j] * k[t * K + i];
      }
      const double update = beta[t] * (v[t * V + j] - predicted);
      for (int i = 0; i < K; ++i) {
        state[i][j] += k[t * K + i] * update;
        out += state[i][j] * q[t * K + i];
      }
      expected[t * V + j] = out / sqrt((double)K);
    }
  float *o = download(context, &to);
  EXPECT(max_error(o, expected, T * V) < 1e-5, "KDA error %g",
         max_error(o, expected, T * V));

  /* The workspace a call takes, asked without running it, then given. */
  size_t bytes = 0;
  OK(rudnn_workspace_bytes(context, run_kda, &call, &bytes));
  EXPECT(bytes > 0, "KDA takes no workspace");
  void *workspace = NULL;
  OK(rudnn_malloc(context, bytes, &workspace));
  OK(rudnn_set_workspace(context, NULL, workspace, bytes - 1));
  EXPECT(rudnn_kda_forward(context, &call, NULL) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "a workspace one byte short");
  EXPECT(strstr(rudnn_last_error(), "bytes of workspace"), "got '%s'",
         rudnn_last_error());
  OK(rudnn_set_workspace(context, NULL, workspace, bytes));
  OK(rudnn_kda_forward(context, &call, NULL));
  float *again = download(context, &to);
  EXPECT(memcmp(again, o, T * V * sizeof(float)) == 0,
         "the given workspace changed the result");
  OK(rudnn_set_workspace(context, NULL, NULL, 0));
  OK(rudnn_free(context, workspace));
  free(again);

  call.chunk = 24; /* not 16, 32 or 64 */
  EXPECT(rudnn_kda_forward(context, &call, NULL) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "chunk 24");
  EXPECT(strstr(rudnn_last_error(), "chunk"), "got '%s'", rudnn_last_error());

  free(q), free(k), free(v), free(g), free(beta), free(o);
  tensor_t *all[] = {&tq, &tk, &tv, &tg, &tbeta, &to};
  for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); ++i)
    OK(rudnn_free(context, all[i]->device));
}

/* RMSNorm written in rudnn IR, through the Program API. */
static void program(rudnn_context_t context) {
  const char *text =
      "func.func @main(%x: tensor<?x40xf32> {rudnn.name = \"x\"},\n"
      "                %gamma: tensor<40xf32> {rudnn.name = \"gamma\"})\n"
      "    -> (tensor<?x40xf32> {rudnn.name = \"y\"}) {\n"
      "  %y, %rstd, %h = rudnn.rms_norm %x gamma %gamma eps 1.0e-06\n"
      "      : (tensor<?x40xf32>, tensor<40xf32>)\n"
      "      -> (tensor<?x40xf32>, tensor<?xf32>, tensor<?x40xf32>)\n"
      "  return %y : tensor<?x40xf32>\n"
      "}\n";
  rudnn_module_t module = NULL;
  OK(rudnn_module_parse(context, text, &module));
  size_t count = 0;
  const char *name = NULL;
  OK(rudnn_module_function_count(module, &count));
  OK(rudnn_module_function_name(module, 0, &name));
  EXPECT(count == 1 && strcmp(name, "main") == 0, "%zu functions", count);
  rudnn_function_t main_function = NULL;
  OK(rudnn_module_function(module, "main", &main_function));
  OK(rudnn_module_destroy(module)); /* the function stays valid */

  size_t arguments = 0, results = 0;
  OK(rudnn_function_argument_count(main_function, &arguments));
  OK(rudnn_function_result_count(main_function, &results));
  EXPECT(arguments == 2 && results == 1, "%zu -> %zu", arguments, results);
  rudnn_tensor_info_t info;
  OK(rudnn_function_argument(main_function, 0, &info));
  EXPECT(strcmp(info.name, "x") == 0 && info.rank == 2 && info.shape[0] == -1 &&
             info.shape[1] == 40 && info.dtype == RUDNN_DTYPE_F32,
         "argument 0 is %s", info.name);
  EXPECT(rudnn_function_result(main_function, 1, &info) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "result 1");

  enum { ROWS = 7, C = 40 };
  float *x = fill(ROWS * C, -3, 3), *gamma = fill(C, 0.5f, 1.5f);
  const int64_t rows_c[] = {ROWS, C}, c[] = {C};
  tensor_t tx, tgamma, ty;
  upload(context, &tx, x, 2, rows_c);
  upload(context, &tgamma, gamma, 1, c);
  upload(context, &ty, NULL, 2, rows_c);
  rudnn_tensor_t in[2] = {tx.view, tgamma.view};
  int64_t shape[2] = {0, 0};
  OK(rudnn_function_result_shape(main_function, in, 2, 0, shape));
  EXPECT(shape[0] == ROWS && shape[1] == C, "y is [%lld, %lld]",
         (long long)shape[0], (long long)shape[1]);
  OK(rudnn_function_call(main_function, in, 2, &ty.view, 1, NULL));

  double expected[ROWS * C];
  for (int r = 0; r < ROWS; ++r) {
    double squares = 0;
    for (int i = 0; i < C; ++i)
      squares += (double)x[r * C + i] * x[r * C + i];
    const double rstd = 1 / sqrt(squares / C + 1e-6);
    for (int i = 0; i < C; ++i)
      expected[r * C + i] = x[r * C + i] * rstd * gamma[i];
  }
  float *y = download(context, &ty);
  EXPECT(max_error(y, expected, ROWS * C) < 1e-5, "RMSNorm error %g",
         max_error(y, expected, ROWS * C));

  EXPECT(rudnn_function_call(main_function, in, 1, &ty.view, 1, NULL) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "one argument of two");
  OK(rudnn_function_destroy(main_function));
  free(x), free(gamma), free(y);
  OK(rudnn_free(context, tx.device));
  OK(rudnn_free(context, tgamma.device));
  OK(rudnn_free(context, ty.device));
}

int main(void) {
  rudnn_context_options_t options = {0};
  options.backend = RUDNN_BACKEND_EMULATION;
  options.cache_dir = "";
  options.allocate = counted_allocate;
  options.release = counted_release;
  options.allocator_data = &live_allocations;
  rudnn_context_t context = NULL;
  OK(rudnn_context_create(&options, &context));
  layer_norm(context);
  kda(context);
  program(context);
  OK(rudnn_context_destroy(context));
  EXPECT(allocations > 0 && live_allocations == 0,
         "%ld allocations, %ld still live", allocations, live_allocations);
  options.release = NULL;
  EXPECT(rudnn_context_create(&options, &context) ==
             RUDNN_STATUS_INVALID_ARGUMENT,
         "an allocator without release");
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  else
    printf("C API test passed (rudnn %s)\n", rudnn_version());
  return failures ? 1 : 0;
}
