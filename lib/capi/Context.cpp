//===- Context.cpp - The C API: errors, contexts, memory, kernels ---------===//

#include "lib/ContextImpl.h"
#include "lib/capi/CApi.h"

#include "rudnn/log.h"
#include "rudnn/version.h"

#include <algorithm>
#include <cstring>

using namespace rudnn;

using namespace rudnn::capi;

std::string &rudnn::capi::lastError() {
  static thread_local std::string message;
  return message;
}

void rudnn::capi::requireNonNull(const void *pointer, const std::string &name) {
  if (!pointer)
    throw InvalidArgument(name + " is NULL");
}

TensorView rudnn::capi::view(const rudnn_tensor_t *tensor,
                             const std::string &name) {
  requireNonNull(tensor, name);
  const int dtype = enumValue(tensor->dtype);
  if (dtype < RUDNN_DTYPE_F32 || dtype > RUDNN_DTYPE_BOOL)
    throw InvalidArgument(name + "->dtype is " + std::to_string(dtype) +
                          ", expected a rudnn_dtype_t");
  if (tensor->rank < 0 || tensor->rank > 16)
    throw InvalidArgument(name + "->rank is " + std::to_string(tensor->rank) +
                          ", expected 0 to 16");
  if (tensor->rank > 0)
    requireNonNull(tensor->shape, name + "->shape");
  std::vector<int64_t> shape(tensor->shape, tensor->shape + tensor->rank);
  TensorView view = TensorView::contiguous(
      tensor->data, static_cast<DType>(dtype), std::move(shape));
  if (tensor->strides)
    view.strides.assign(tensor->strides, tensor->strides + tensor->rank);
  return view;
}

std::optional<TensorView>
rudnn::capi::optionalView(const rudnn_tensor_t *tensor,
                          const std::string &name) {
  if (!tensor)
    return std::nullopt;
  return view(tensor, name);
}

extern "C" {

const char *rudnn_last_error(void) { return lastError().c_str(); }

const char *rudnn_status_string(rudnn_status_t status) {
  switch (status) {
  case RUDNN_STATUS_OK:
    return "RUDNN_STATUS_OK";
  case RUDNN_STATUS_INVALID_ARGUMENT:
    return "RUDNN_STATUS_INVALID_ARGUMENT";
  case RUDNN_STATUS_UNSUPPORTED:
    return "RUDNN_STATUS_UNSUPPORTED";
  case RUDNN_STATUS_COMPILE_ERROR:
    return "RUDNN_STATUS_COMPILE_ERROR";
  case RUDNN_STATUS_DEVICE_ERROR:
    return "RUDNN_STATUS_DEVICE_ERROR";
  case RUDNN_STATUS_DEVICE_UNAVAILABLE:
    return "RUDNN_STATUS_DEVICE_UNAVAILABLE";
  case RUDNN_STATUS_INTERNAL:
    return "RUDNN_STATUS_INTERNAL";
  }
  return "RUDNN_STATUS_UNKNOWN";
}

const char *rudnn_version(void) { return rudnn::version(); }

rudnn_status_t rudnn_set_log_callback(rudnn_log_callback_t callback,
                                      void *user_data) {
  return guarded([&] {
    if (!callback) {
      setLogHandler({});
      return;
    }
    setLogHandler(
        [callback, user_data](LogLevel level, const std::string &message) {
          callback(static_cast<rudnn_log_level_t>(level), message.c_str(),
                   user_data);
        });
  });
}

rudnn_status_t rudnn_set_log_level(rudnn_log_level_t level) {
  return guarded([&] {
    const int value = enumValue(level);
    if (value < RUDNN_LOG_WARNING || value > RUDNN_LOG_DEBUG)
      throw InvalidArgument("level is " + std::to_string(value) +
                            ", expected a rudnn_log_level_t");
    setLogLevel(static_cast<LogLevel>(value));
  });
}

rudnn_status_t rudnn_context_create(const rudnn_context_options_t *options,
                                    rudnn_context_t *context) {
  return guarded([&] {
    requireNonNull(context, "context");
    *context = nullptr;
    ContextOptions cxxOptions;
    if (options) {
      const int backend = enumValue(options->backend);
      if (backend < RUDNN_BACKEND_AUTO || backend > RUDNN_BACKEND_EMULATION)
        throw InvalidArgument("options->backend is " + std::to_string(backend) +
                              ", expected a rudnn_backend_t");
      cxxOptions.backend = static_cast<BackendKind>(backend);
      cxxOptions.deviceOrdinal = options->device_ordinal;
      if (options->cache_dir)
        cxxOptions.cacheDirectory = std::string(options->cache_dir);
      if (bool(options->allocate) != bool(options->release))
        throw InvalidArgument("options->allocate and options->release: set "
                              "both, or neither");
      if (options->allocate) {
        rudnn_allocate_t allocate = options->allocate;
        rudnn_release_t release = options->release;
        void *data = options->allocator_data;
        cxxOptions.allocator = {
            [allocate, data](size_t bytes) { return allocate(bytes, data); },
            [release, data](void *pointer) { release(pointer, data); }};
      }
    }
    *context = new rudnn_context{Context(std::move(cxxOptions))};
  });
}

rudnn_status_t rudnn_context_destroy(rudnn_context_t context) {
  return guarded([&] {
    requireNonNull(context, "context");
    delete context;
  });
}

rudnn_status_t rudnn_get_counters(rudnn_context_t context,
                                  rudnn_counters_t *counters) {
  return guarded([&] {
    requireNonNull(counters, "counters");
    Counters values = contextOf(context).counters();
    *counters = {values.kernelsCompiled, values.kernelCacheMemoryHits,
                 values.kernelCacheDiskHits, values.planCacheHits,
                 values.planCacheMisses};
  });
}

rudnn_status_t rudnn_malloc(rudnn_context_t context, size_t bytes,
                            void **pointer) {
  return guarded([&] {
    requireNonNull(pointer, "pointer");
    *pointer = nullptr;
    *pointer = contextOf(context).allocate(bytes);
  });
}

rudnn_status_t rudnn_free(rudnn_context_t context, void *pointer) {
  return guarded([&] { contextOf(context).release(pointer); });
}

rudnn_status_t rudnn_memcpy_to_device(rudnn_context_t context, void *dst,
                                      const void *src, size_t bytes) {
  return guarded([&] { contextOf(context).copyToDevice(dst, src, bytes); });
}

rudnn_status_t rudnn_memcpy_to_host(rudnn_context_t context, void *dst,
                                    const void *src, size_t bytes) {
  return guarded([&] { contextOf(context).copyToHost(dst, src, bytes); });
}

rudnn_status_t rudnn_synchronize(rudnn_context_t context) {
  return guarded([&] { contextOf(context).synchronize(); });
}

rudnn_status_t rudnn_workspace_bytes(rudnn_context_t context,
                                     void (*calls)(rudnn_context_t context,
                                                   void *user_data),
                                     void *user_data, size_t *bytes) {
  return guarded([&] {
    Context &cxx = contextOf(context);
    requireNonNull(reinterpret_cast<const void *>(calls), "calls");
    requireNonNull(bytes, "bytes");
    *bytes = cxx.workspaceBytes([&] { calls(context, user_data); });
  });
}

rudnn_status_t rudnn_set_workspace(rudnn_context_t context,
                                   rudnn_stream_t stream, void *pointer,
                                   size_t bytes) {
  return guarded(
      [&] { contextOf(context).setWorkspace(stream, pointer, bytes); });
}

rudnn_status_t rudnn_compile_kernel(rudnn_context_t context, const char *entry,
                                    const char *source, const char *arch) {
  return guarded([&] {
    requireNonNull(entry, "entry");
    requireNonNull(source, "source");
    requireNonNull(arch, "arch");
    // At most 256 characters are read: a longer entry is refused anyway.
    contextOf(context).compileKernel(std::string(entry, strnlen(entry, 256)),
                                     source, arch);
  });
}

} // extern "C"
