/*===- rudnn/rudnn.h - The rudnn C API ------------------------------------===*\
|*                                                                            *|
|* For C and other languages. Every function returns a status; on failure    *|
|* the message of the error is kept per thread for rudnn_last_error(), and   *|
|* nothing was written. The operators are in c_operators.h, the Program API  *|
|* in c_program.h (both included here).                                      *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef RUDNN_RUDNN_H
#define RUDNN_RUDNN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rudnn_status {
  RUDNN_STATUS_OK = 0,
  RUDNN_STATUS_INVALID_ARGUMENT = 1,
  RUDNN_STATUS_UNSUPPORTED = 2,
  RUDNN_STATUS_COMPILE_ERROR = 3,
  RUDNN_STATUS_DEVICE_ERROR = 4,
  RUDNN_STATUS_DEVICE_UNAVAILABLE = 5,
  RUDNN_STATUS_INTERNAL = 6
} rudnn_status_t;

typedef enum rudnn_backend {
  RUDNN_BACKEND_AUTO = 0,
  RUDNN_BACKEND_CUDA = 1,
  RUDNN_BACKEND_EMULATION = 2
} rudnn_backend_t;

/* The caller's device memory allocator (host memory for emulation). */
typedef void *(*rudnn_allocate_t)(size_t bytes, void *user_data);
typedef void (*rudnn_release_t)(void *pointer, void *user_data);

typedef struct rudnn_context_options {
  rudnn_backend_t backend;
  int device_ordinal;
  /* NULL: the default cache directory; "": memory only. */
  const char *cache_dir;
  /* Both or neither (NULL: the backend's): every byte the context takes
   * (rudnn_malloc, plans' workspaces) comes from `allocate`. */
  rudnn_allocate_t allocate;
  rudnn_release_t release;
  void *allocator_data;
} rudnn_context_options_t;

typedef struct rudnn_counters {
  uint64_t kernels_compiled;
  uint64_t kernel_cache_memory_hits;
  uint64_t kernel_cache_disk_hits;
  uint64_t plan_cache_hits;
  uint64_t plan_cache_misses;
} rudnn_counters_t;

typedef struct rudnn_context *rudnn_context_t;

/* A stream of the context's backend (a CUstream on CUDA); NULL: the
 * default stream. */
typedef void *rudnn_stream_t;

typedef enum rudnn_dtype {
  RUDNN_DTYPE_F32 = 0,
  RUDNN_DTYPE_F16 = 1,
  RUDNN_DTYPE_BF16 = 2,
  RUDNN_DTYPE_I32 = 3,
  RUDNN_DTYPE_BOOL = 4
} rudnn_dtype_t;

/* A view of device memory (host memory on the emulation backend), as
 * DLPack describes one: `rank` sizes, and strides in elements (NULL:
 * contiguous, row-major). The arrays are read during the call only. */
typedef struct rudnn_tensor {
  void *data;
  rudnn_dtype_t dtype;
  int32_t rank;
  const int64_t *shape;
  const int64_t *strides;
} rudnn_tensor_t;

/* The message of the last failed call on this thread ("" if none). */
const char *rudnn_last_error(void);
/* "RUDNN_STATUS_OK", ... */
const char *rudnn_status_string(rudnn_status_t status);
const char *rudnn_version(void);

typedef enum rudnn_log_level {
  RUDNN_LOG_WARNING = 0,
  RUDNN_LOG_PROGRESS = 1, /* the default: slow cold compiles, a line a kernel */
  RUDNN_LOG_INFO = 2,
  RUDNN_LOG_DEBUG = 3
} rudnn_log_level_t;

/* Receives rudnn's messages (see rudnn/log.h), one call at a time; it must
 * not call rudnn. */
typedef void (*rudnn_log_callback_t)(rudnn_log_level_t level,
                                     const char *message, void *user_data);

/* Process-wide; NULL restores stderr. */
rudnn_status_t rudnn_set_log_callback(rudnn_log_callback_t callback,
                                      void *user_data);
/* The most detailed level delivered (default: RUDNN_LOG, else progress). */
rudnn_status_t rudnn_set_log_level(rudnn_log_level_t level);

/* Options may be NULL (defaults). */
rudnn_status_t rudnn_context_create(const rudnn_context_options_t *options,
                                    rudnn_context_t *context);
rudnn_status_t rudnn_context_destroy(rudnn_context_t context);
rudnn_status_t rudnn_get_counters(rudnn_context_t context,
                                  rudnn_counters_t *counters);

rudnn_status_t rudnn_malloc(rudnn_context_t context, size_t bytes,
                            void **pointer);
/* Only a pointer rudnn_malloc returned on this context and not yet freed
 * (or NULL); any other gives RUDNN_STATUS_INVALID_ARGUMENT. */
rudnn_status_t rudnn_free(rudnn_context_t context, void *pointer);
/* A device pointer inside memory rudnn_malloc returned must leave the copy
 * inside that allocation, else RUDNN_STATUS_INVALID_ARGUMENT and nothing is
 * copied; other device memory is the caller's to size. */
rudnn_status_t rudnn_memcpy_to_device(rudnn_context_t context, void *dst,
                                      const void *src, size_t bytes);
rudnn_status_t rudnn_memcpy_to_host(rudnn_context_t context, void *dst,
                                    const void *src, size_t bytes);
/* Waits for the context's work. RUDNN_STATUS_INVALID_ARGUMENT if a call
 * since the last synchronize read device-held offsets (cu_seqlens) that do
 * not start at 0, never decrease and end at the packed rows (rows outside
 * every entry were left unwritten); see rudnn::Context::synchronize. */
rudnn_status_t rudnn_synchronize(rudnn_context_t context);

/* Runs `calls(context, user_data)`, in which operator calls are checked and
 * planned but launch nothing, and gives the most workspace one of them
 * would take. */
rudnn_status_t rudnn_workspace_bytes(rudnn_context_t context,
                                     void (*calls)(rudnn_context_t context,
                                                   void *user_data),
                                     void *user_data, size_t *bytes);
/* Calls on `stream` carve their workspace from [pointer, pointer + bytes)
 * from now on (a call needing more fails before it launches anything);
 * NULL: the context's own again. */
rudnn_status_t rudnn_set_workspace(rudnn_context_t context,
                                   rudnn_stream_t stream, void *pointer,
                                   size_t bytes);

/* Compiles one CUDA C++ kernel for `arch` ("sm_90") through the context's
 * kernel cache, without needing a device. `entry` must be a C identifier
 * (ASCII letters, digits, '_', not starting with a digit, at most 255
 * characters): it also names dump files. */
rudnn_status_t rudnn_compile_kernel(rudnn_context_t context, const char *entry,
                                    const char *source, const char *arch);

#ifdef __cplusplus
}
#endif

#include "rudnn/c_program.h"
#include "rudnn/c_operators.h"

#endif /* RUDNN_RUDNN_H */
