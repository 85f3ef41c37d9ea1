//===- Program.cpp - The C API's Program API ------------------------------===//

#include "lib/capi/CApi.h"

#include "rudnn/program.h"

#include <vector>

using namespace rudnn;
using namespace rudnn::capi;

struct rudnn_module {
  Module module;
  std::vector<std::string> names; // functions(), kept for the C strings
};

namespace {

Module &moduleOf(rudnn_module_t module) {
  requireNonNull(module, "module");
  return module->module;
}

const Function &functionOf(rudnn_function_t function) {
  requireNonNull(function, "function");
  return function->function;
}

/// `count` views from a C array, named "<name>[i]" in errors.
std::vector<TensorView> views(const rudnn_tensor_t *tensors, size_t count,
                              const char *name) {
  if (count)
    requireNonNull(tensors, name);
  std::vector<TensorView> result;
  for (size_t i = 0; i < count; ++i)
    result.push_back(
        view(&tensors[i], std::string(name) + "[" + std::to_string(i) + "]"));
  return result;
}

void describe(const std::vector<TensorInfo> &infos, size_t index,
              const char *what, rudnn_tensor_info_t *info) {
  requireNonNull(info, "info");
  if (index >= infos.size())
    throw InvalidArgument(std::string(what) + " " + std::to_string(index) +
                          " does not exist: the function has " +
                          std::to_string(infos.size()));
  const TensorInfo &tensor = infos[index];
  *info = {tensor.name.c_str(),
           static_cast<rudnn_dtype_t>(tensor.dtype),
           static_cast<int32_t>(tensor.shape.size()),
           tensor.shape.data(),
           tensor.role.c_str(),
           tensor.layout.c_str(),
           tensor.align};
}

template <typename Make>
rudnn_status_t makeModule(rudnn_module_t *module, Make make) {
  return guarded([&] {
    requireNonNull(module, "module");
    *module = nullptr;
    Module made = make();
    std::vector<std::string> names = made.functions();
    *module = new rudnn_module{std::move(made), std::move(names)};
  });
}

} // namespace

extern "C" {

rudnn_status_t rudnn_module_parse(rudnn_context_t context, const char *text,
                                  rudnn_module_t *module) {
  return makeModule(module, [&] {
    Context &cxx = contextOf(context);
    requireNonNull(text, "text");
    return Module::parse(cxx, text);
  });
}

rudnn_status_t rudnn_module_load(rudnn_context_t context, const char *path,
                                 rudnn_module_t *module) {
  return makeModule(module, [&] {
    Context &cxx = contextOf(context);
    requireNonNull(path, "path");
    return Module::load(cxx, path);
  });
}

rudnn_status_t rudnn_module_destroy(rudnn_module_t module) {
  return guarded([&] {
    requireNonNull(module, "module");
    delete module;
  });
}

rudnn_status_t rudnn_module_function_count(rudnn_module_t module,
                                           size_t *count) {
  return guarded([&] {
    moduleOf(module);
    requireNonNull(count, "count");
    *count = module->names.size();
  });
}

rudnn_status_t rudnn_module_function_name(rudnn_module_t module, size_t index,
                                          const char **name) {
  return guarded([&] {
    moduleOf(module);
    requireNonNull(name, "name");
    if (index >= module->names.size())
      throw InvalidArgument("function " + std::to_string(index) +
                            " does not exist: the module has " +
                            std::to_string(module->names.size()));
    *name = module->names[index].c_str();
  });
}

rudnn_status_t rudnn_module_function(rudnn_module_t module, const char *name,
                                     rudnn_function_t *function) {
  return guarded([&] {
    Module &cxx = moduleOf(module);
    requireNonNull(name, "name");
    requireNonNull(function, "function");
    *function = nullptr;
    *function = new rudnn_function{cxx.function(name)};
  });
}

rudnn_status_t rudnn_function_destroy(rudnn_function_t function) {
  return guarded([&] {
    requireNonNull(function, "function");
    delete function;
  });
}

rudnn_status_t rudnn_function_argument_count(rudnn_function_t function,
                                             size_t *count) {
  return guarded([&] {
    const Function &cxx = functionOf(function);
    requireNonNull(count, "count");
    *count = cxx.arguments().size();
  });
}

rudnn_status_t rudnn_function_result_count(rudnn_function_t function,
                                           size_t *count) {
  return guarded([&] {
    const Function &cxx = functionOf(function);
    requireNonNull(count, "count");
    *count = cxx.results().size();
  });
}

rudnn_status_t rudnn_function_argument(rudnn_function_t function, size_t index,
                                       rudnn_tensor_info_t *info) {
  return guarded([&] {
    describe(functionOf(function).arguments(), index, "argument", info);
  });
}

rudnn_status_t rudnn_function_result(rudnn_function_t function, size_t index,
                                     rudnn_tensor_info_t *info) {
  return guarded(
      [&] { describe(functionOf(function).results(), index, "result", info); });
}

rudnn_status_t rudnn_function_result_shape(rudnn_function_t function,
                                           const rudnn_tensor_t *arguments,
                                           size_t argument_count, size_t index,
                                           int64_t *shape) {
  return guarded([&] {
    const Function &cxx = functionOf(function);
    requireNonNull(shape, "shape");
    std::vector<std::vector<int64_t>> shapes =
        cxx.resultShapes(views(arguments, argument_count, "arguments"));
    if (index >= shapes.size())
      throw InvalidArgument("result " + std::to_string(index) +
                            " does not exist: the function has " +
                            std::to_string(shapes.size()));
    std::copy(shapes[index].begin(), shapes[index].end(), shape);
  });
}

rudnn_status_t rudnn_function_call(rudnn_function_t function,
                                   const rudnn_tensor_t *arguments,
                                   size_t argument_count,
                                   const rudnn_tensor_t *results,
                                   size_t result_count, rudnn_stream_t stream) {
  return guarded([&] {
    const Function &cxx = functionOf(function);
    cxx.call(views(arguments, argument_count, "arguments"),
             views(results, result_count, "results"), stream);
  });
}

} // extern "C"
