//===- c_api.cpp - The rudnn C API ----------------------------------------===//

#include "lib/ContextImpl.h"

#include "rudnn/rudnn.h"
#include "rudnn/version.h"

#include <algorithm>
#include <cstring>
#include <new>

using namespace rudnn;

struct rudnn_context {
  Context context;
};

static thread_local std::string lastError;

/// Runs `body`, turning every exception into a status and a last-error text.
template <typename Body> static rudnn_status_t guarded(Body body) {
  try {
    body();
    lastError.clear();
    return RUDNN_STATUS_OK;
  } catch (const Error &error) {
    lastError = error.what();
    return static_cast<rudnn_status_t>(error.status());
  } catch (const std::bad_alloc &) {
    lastError = "out of host memory";
    return RUDNN_STATUS_INTERNAL;
  } catch (const std::exception &error) {
    lastError = error.what();
    return RUDNN_STATUS_INTERNAL;
  }
}

static void requireContext(rudnn_context_t context) {
  if (!context)
    throw InvalidArgument("context is NULL");
}

template <typename T> static void requireOutput(T *pointer, const char *name) {
  if (!pointer)
    throw InvalidArgument(std::string(name) + " is NULL");
}

/// The kernel entry names a dump file and the symbol to look up: a C
/// identifier keeps it from naming a path.
static void requireIdentifier(const char *text, const char *name) {
  // ASCII ranges, not <cctype>, whose answer depends on the locale.
  auto letter = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
  };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  const size_t length = strnlen(text, 256);
  bool valid = length >= 1 && length <= 255 && letter(text[0]);
  for (size_t i = 1; valid && i < length; ++i)
    valid = letter(text[i]) || digit(text[i]);
  if (!valid)
    throw InvalidArgument(
        std::string(name) +
        " must be a C identifier (ASCII letters, digits and '_', not "
        "starting with a digit, 1 to 255 characters), got '" +
        std::string(text, std::min<size_t>(length, 64)) +
        (length > 64 ? "...'" : "'"));
}

extern "C" {

const char *rudnn_last_error(void) { return lastError.c_str(); }

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

rudnn_status_t rudnn_context_create(const rudnn_context_options_t *options,
                                    rudnn_context_t *context) {
  return guarded([&] {
    requireOutput(context, "context");
    *context = nullptr;
    ContextOptions cxxOptions;
    if (options) {
      // Read as an integer: a C caller may pass any value, and loading an
      // out-of-range enum is undefined behaviour in C++.
      int backend;
      std::memcpy(&backend, &options->backend, sizeof(backend));
      if (backend < RUDNN_BACKEND_AUTO || backend > RUDNN_BACKEND_EMULATION)
        throw InvalidArgument("options->backend is " + std::to_string(backend) +
                              ", expected a rudnn_backend_t");
      cxxOptions.backend = static_cast<BackendKind>(backend);
      cxxOptions.deviceOrdinal = options->device_ordinal;
      if (options->cache_dir)
        cxxOptions.cacheDirectory = std::string(options->cache_dir);
    }
    *context = new rudnn_context{Context(std::move(cxxOptions))};
  });
}

rudnn_status_t rudnn_context_destroy(rudnn_context_t context) {
  return guarded([&] {
    requireContext(context);
    delete context;
  });
}

rudnn_status_t rudnn_get_counters(rudnn_context_t context,
                                  rudnn_counters_t *counters) {
  return guarded([&] {
    requireContext(context);
    requireOutput(counters, "counters");
    Counters values = context->context.counters();
    *counters = {values.kernelsCompiled, values.kernelCacheMemoryHits,
                 values.kernelCacheDiskHits, values.planCacheHits,
                 values.planCacheMisses};
  });
}

rudnn_status_t rudnn_malloc(rudnn_context_t context, size_t bytes,
                            void **pointer) {
  return guarded([&] {
    requireContext(context);
    requireOutput(pointer, "pointer");
    *pointer = nullptr;
    *pointer = context->context.allocate(bytes);
  });
}

rudnn_status_t rudnn_free(rudnn_context_t context, void *pointer) {
  return guarded([&] {
    requireContext(context);
    context->context.release(pointer);
  });
}

rudnn_status_t rudnn_memcpy_to_device(rudnn_context_t context, void *dst,
                                      const void *src, size_t bytes) {
  return guarded([&] {
    requireContext(context);
    context->context.copyToDevice(dst, src, bytes);
  });
}

rudnn_status_t rudnn_memcpy_to_host(rudnn_context_t context, void *dst,
                                    const void *src, size_t bytes) {
  return guarded([&] {
    requireContext(context);
    context->context.copyToHost(dst, src, bytes);
  });
}

rudnn_status_t rudnn_synchronize(rudnn_context_t context) {
  return guarded([&] {
    requireContext(context);
    context->context.synchronize();
  });
}

rudnn_status_t rudnn_compile_kernel(rudnn_context_t context, const char *entry,
                                    const char *source, const char *arch) {
  return guarded([&] {
    requireContext(context);
    requireOutput(entry, "entry");
    requireOutput(source, "source");
    requireOutput(arch, "arch");
    requireIdentifier(entry, "entry");
    context->context.impl().compileForArch({entry, source}, arch);
  });
}

} // extern "C"
