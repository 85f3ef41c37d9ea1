/*===- rudnn/c_program.h - rudnn IR functions, from C ---------------------===*\
|*                                                                            *|
|* The Program API of rudnn/program.h: load a module of rudnn IR, look up a   *|
|* function, read its arguments and results, call it on tensors. A function  *|
|* compiles at its first call, once. Included by rudnn/rudnn.h.              *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef RUDNN_C_PROGRAM_H
#define RUDNN_C_PROGRAM_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct rudnn_module *rudnn_module_t;
typedef struct rudnn_function *rudnn_function_t;

/* An argument or result as the function declares it. The strings and the
 * shape belong to the function and live as long as it. */
typedef struct rudnn_tensor_info {
  const char *name;
  rudnn_dtype_t dtype;
  int32_t rank;
  const int64_t *shape; /* -1: dynamic */
  const char *role;     /* the operand it is, e.g. "q"; "" if none */
  const char *layout;   /* e.g. "BTHK"; "" if none */
  int64_t align;        /* promised byte alignment of rows; 0: none */
} rudnn_tensor_info_t;

/* A module from rudnn IR text, or from a file. The module keeps the
 * context: destroy it (and its functions) before the context. */
rudnn_status_t rudnn_module_parse(rudnn_context_t context, const char *text,
                                  rudnn_module_t *module);
rudnn_status_t rudnn_module_load(rudnn_context_t context, const char *path,
                                 rudnn_module_t *module);
rudnn_status_t rudnn_module_destroy(rudnn_module_t module);

rudnn_status_t rudnn_module_function_count(rudnn_module_t module,
                                           size_t *count);
/* The name of function `index`, valid while the module lives. */
rudnn_status_t rudnn_module_function_name(rudnn_module_t module, size_t index,
                                          const char **name);
/* A handle on function `name`; it stays valid after the module is
 * destroyed. */
rudnn_status_t rudnn_module_function(rudnn_module_t module, const char *name,
                                     rudnn_function_t *function);
rudnn_status_t rudnn_function_destroy(rudnn_function_t function);

rudnn_status_t rudnn_function_argument_count(rudnn_function_t function,
                                             size_t *count);
rudnn_status_t rudnn_function_result_count(rudnn_function_t function,
                                           size_t *count);
rudnn_status_t rudnn_function_argument(rudnn_function_t function, size_t index,
                                       rudnn_tensor_info_t *info);
rudnn_status_t rudnn_function_result(rudnn_function_t function, size_t index,
                                     rudnn_tensor_info_t *info);

/* The shape result `index` takes for these arguments: `shape` receives the
 * result's rank entries. */
rudnn_status_t rudnn_function_result_shape(rudnn_function_t function,
                                           const rudnn_tensor_t *arguments,
                                           size_t argument_count, size_t index,
                                           int64_t *shape);

/* Runs the function: every argument and result, in declaration order. */
rudnn_status_t rudnn_function_call(rudnn_function_t function,
                                   const rudnn_tensor_t *arguments,
                                   size_t argument_count,
                                   const rudnn_tensor_t *results,
                                   size_t result_count, rudnn_stream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* RUDNN_C_PROGRAM_H */
