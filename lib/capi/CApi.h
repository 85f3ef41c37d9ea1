//===- CApi.h - What the C API's files share --------------------*- C++ -*-===//
//
// Every C entry point runs its body through `guarded`, which turns an
// exception into a status and the thread's last-error text; tensors arrive
// as rudnn_tensor_t and become TensorViews here, checked first.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_CAPI_CAPI_H
#define RUDNN_LIB_CAPI_CAPI_H

#include "rudnn/context.h"
#include "rudnn/program.h"
#include "rudnn/rudnn.h"

#include <new>
#include <optional>
#include <string>

struct rudnn_context {
  rudnn::Context context;
};

struct rudnn_function {
  rudnn::Function function;
};

namespace rudnn::capi {

/// The message of the last failed call on this thread.
std::string &lastError();

/// Runs `body`, turning every exception into a status and a last-error text.
template <typename Body> rudnn_status_t guarded(Body body) {
  try {
    body();
    lastError().clear();
    return RUDNN_STATUS_OK;
  } catch (const Error &error) {
    lastError() = error.what();
    return static_cast<rudnn_status_t>(error.status());
  } catch (const std::bad_alloc &) {
    lastError() = "out of host memory";
    return RUDNN_STATUS_INTERNAL;
  } catch (const std::exception &error) {
    lastError() = error.what();
    return RUDNN_STATUS_INTERNAL;
  }
}

/// Throws InvalidArgument "<name> is NULL" for a null pointer.
void requireNonNull(const void *pointer, const std::string &name);

inline Context &contextOf(rudnn_context_t context) {
  requireNonNull(context, "context");
  return context->context;
}

/// The view `tensor` describes; `name` (e.g. "call->q") names it in errors.
TensorView view(const rudnn_tensor_t *tensor, const std::string &name);
/// Likewise, none for NULL.
std::optional<TensorView> optionalView(const rudnn_tensor_t *tensor,
                                       const std::string &name);

/// A C enum read as the int a C caller may have stored there: loading an
/// out-of-range value into a C++ enum is undefined behaviour.
template <typename Enum> int enumValue(const Enum &value) {
  static_assert(sizeof(Enum) == sizeof(int));
  int result;
  __builtin_memcpy(&result, &value, sizeof(result));
  return result;
}

} // namespace rudnn::capi

#endif // RUDNN_LIB_CAPI_CAPI_H
