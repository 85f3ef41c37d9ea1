//===- RudnnPython.cpp - The rudnn Python module's native part ------------===//
//
// Binds the Program API (Context, Module, Function) for Python: tensors come
// in through DLPack (torch, NumPy, anything with __dlpack__ or the buffer
// protocol) as views of the caller's memory, never copied. The Python
// package (lib/python/rudnn) builds everything users call on top of this.
//
//===----------------------------------------------------------------------===//

#include "rudnn/operator.h"
#include "rudnn/program.h"
#include "rudnn/version.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>

namespace nb = nanobind;
using namespace rudnn;

namespace {

/// A DLPack tensor as a view, checked to live where the context computes.
/// `name` is the function's name for it, which errors carry.
TensorView viewOf(const nb::ndarray<> &array, const std::string &name,
                  BackendKind backend) {
  const bool onHost = array.device_type() == nb::device::cpu::value;
  const bool onGpu = array.device_type() == nb::device::cuda::value;
  if (backend == BackendKind::Emulation && !onHost)
    throw InvalidArgument("'" + name +
                          "': the emulation backend takes host (CPU) tensors");
  if (backend == BackendKind::Cuda && !onGpu)
    throw InvalidArgument("'" + name +
                          "': the CUDA backend takes CUDA tensors");

  TensorView view;
  view.data = array.data();
  const nb::dlpack::dtype dtype = array.dtype();
  if (dtype.lanes != 1)
    throw InvalidArgument("'" + name +
                          "': vector element types are not tensors");
  if (dtype == nb::dtype<float>())
    view.dtype = DType::F32;
  else if (dtype == nb::dtype<int32_t>())
    view.dtype = DType::I32;
  else if (dtype == nb::dtype<bool>())
    view.dtype = DType::Bool;
  else if (dtype.code == uint8_t(nb::dlpack::dtype_code::Float) &&
           dtype.bits == 16)
    view.dtype = DType::F16;
  else if (dtype.code == uint8_t(nb::dlpack::dtype_code::Bfloat) &&
           dtype.bits == 16)
    view.dtype = DType::BF16;
  else
    throw InvalidArgument("'" + name +
                          "': element type must be float32, float16, "
                          "bfloat16, int32 or bool");
  for (size_t d = 0; d < array.ndim(); ++d) {
    view.shape.push_back(array.shape(d));
    view.strides.push_back(array.stride(d));
  }
  return view;
}

std::vector<TensorView> viewsOf(const std::vector<nb::ndarray<>> &arrays,
                                const std::vector<TensorInfo> &infos,
                                BackendKind backend, const char *what) {
  if (arrays.size() != infos.size())
    throw InvalidArgument("expected " + std::to_string(infos.size()) + " " +
                          what + ", got " + std::to_string(arrays.size()));
  std::vector<TensorView> views;
  for (size_t i = 0; i < arrays.size(); ++i)
    views.push_back(viewOf(arrays[i], infos[i].name, backend));
  return views;
}

/// A function together with the context it runs on, kept alive with it.
struct BoundFunction {
  std::shared_ptr<Context> context;
  Function function;
};

struct BoundModule {
  std::shared_ptr<Context> context;
  Module module;
};

nb::dict infoDict(const TensorInfo &info) {
  nb::dict dict;
  dict["name"] = info.name;
  dict["dtype"] = dtypeName(info.dtype);
  dict["shape"] = info.shape;
  dict["role"] = info.role;
  dict["layout"] = info.layout;
  dict["align"] = info.align;
  dict["updates"] = info.updates;
  return dict;
}

/// rudnn's exceptions as the Python classes of rudnn.errors.
void translateErrors(const std::exception_ptr &pointer, void *) {
  try {
    std::rethrow_exception(pointer);
  } catch (const Error &error) {
    nb::object errors = nb::module_::import_("rudnn.errors");
    nb::object type = errors.attr(statusName(error.status()));
    PyErr_SetString(type.ptr(), error.what());
  }
}

/// A Python attribute value (bool, int, float or str) as callOperator's.
AttributeValue attributeOf(const std::string &name, nb::handle value) {
  if (nb::isinstance<nb::bool_>(value))
    return nb::cast<bool>(value);
  if (nb::isinstance<nb::int_>(value))
    return nb::cast<int64_t>(value);
  if (nb::isinstance<nb::float_>(value))
    return nb::cast<double>(value);
  if (nb::isinstance<nb::str>(value))
    return nb::cast<std::string>(value);
  throw InvalidArgument("attribute '" + name +
                        "' must be a bool, int, float or str, got " +
                        nb::cast<std::string>(nb::str(value.type())));
}

/// A dict of keyword attributes, each converted by attributeOf.
OperatorAttributes attributesOf(const nb::dict &attributes) {
  OperatorAttributes converted;
  for (auto [key, value] : attributes) {
    const std::string name = nb::cast<std::string>(key);
    converted.emplace_back(name, attributeOf(name, value));
  }
  return converted;
}

} // namespace

NB_MODULE(_rudnn, m) {
  m.doc() = "rudnn's native module: the Program API over DLPack tensors";
  m.attr("__version__") = RUDNN_VERSION_STRING;
  nb::register_exception_translator(translateErrors);
  // The package keeps its default contexts and compiled functions for the
  // process's lifetime, on purpose: not leaks worth a report at exit.
  nb::set_leak_warnings(false);

  nb::class_<Context>(m, "Context")
      .def(
          "__init__",
          [](Context *self, const std::string &backend,
             std::optional<std::string> cacheDirectory, int device,
             std::optional<bool> sanitize, size_t planCacheCapacity) {
            ContextOptions options;
            options.planCacheCapacity = planCacheCapacity;
            options.backend = parseBackend(backend);
            options.cacheDirectory = cacheDirectory;
            options.deviceOrdinal = device;
            options.emulationSanitize = sanitize;
            new (self) Context(std::move(options));
          },
          nb::arg("backend") = "auto", nb::arg("cache_dir") = nb::none(),
          nb::arg("device") = 0, nb::arg("sanitize") = nb::none(),
          nb::arg("plan_cache_capacity") = 0)
      .def_prop_ro("backend",
                   [](Context &self) {
                     return std::string(backendName(self.backend()));
                   })
      .def_prop_ro("device",
                   [](Context &self) { return self.options().deviceOrdinal; })
      .def("device_description",
           [](Context &self) { return self.deviceDescription(); })
      .def("counters",
           [](Context &self) {
             const Counters counters = self.counters();
             nb::dict dict;
             dict["kernels_compiled"] = counters.kernelsCompiled;
             dict["kernel_cache_memory_hits"] = counters.kernelCacheMemoryHits;
             dict["kernel_cache_disk_hits"] = counters.kernelCacheDiskHits;
             dict["plan_cache_hits"] = counters.planCacheHits;
             dict["plan_cache_misses"] = counters.planCacheMisses;
             dict["plan_cache_evictions"] = counters.planCacheEvictions;
             dict["function_cache_hits"] = counters.functionCacheHits;
             dict["function_cache_misses"] = counters.functionCacheMisses;
             dict["function_cache_evictions"] = counters.functionCacheEvictions;
             dict["functions_cached"] = counters.functionsCached;
             return dict;
           })
      .def("set_function_cache_capacity",
           [](Context &self, size_t capacity) {
             return self.setFunctionCacheCapacity(capacity);
           })
      .def(
          "synchronize",
          [](Context &self, uintptr_t stream) {
            nb::gil_scoped_release release;
            self.synchronize(reinterpret_cast<Stream>(stream));
          },
          nb::arg("stream") = 0);

  nb::class_<BoundModule>(m, "Module")
      .def_static(
          "parse",
          [](std::shared_ptr<Context> context, const std::string &text) {
            Module module = Module::parse(*context, text);
            return BoundModule{std::move(context), std::move(module)};
          },
          nb::arg("context"), nb::arg("text"))
      .def("functions",
           [](const BoundModule &self) { return self.module.functions(); })
      .def("function", [](const BoundModule &self, const std::string &name) {
        return BoundFunction{self.context, self.module.function(name)};
      });

  m.def(
      "operator_function",
      [](std::shared_ptr<Context> context, const std::string &op,
         const nb::dict &attributes, const nb::dict &operands,
         const std::vector<std::string> &results) {
        const OperatorAttributes converted = attributesOf(attributes);
        NamedTensors named;
        for (auto [key, value] : operands) {
          const std::string name = nb::cast<std::string>(key);
          named.emplace_back(name, viewOf(nb::cast<nb::ndarray<>>(value), name,
                                          context->backend()));
        }
        nb::gil_scoped_release release;
        return BoundFunction{
            context, operatorFunction(*context, op, converted, named, results)};
      },
      nb::arg("context"), nb::arg("op"), nb::arg("attributes"),
      nb::arg("operands"), nb::arg("results"));
  m.def("operator_names", &operatorNames);
  m.def("setup_report", &rudnn::setupReport);
  m.def(
      "operator_signature",
      [](const std::string &op, const nb::dict &attributes,
         const nb::dict &ranks) {
        const OperatorAttributes converted = attributesOf(attributes);
        std::vector<std::pair<std::string, size_t>> given;
        for (auto [key, value] : ranks)
          given.emplace_back(nb::cast<std::string>(key),
                             nb::cast<size_t>(value));
        const OperatorSignature signature =
            operatorSignature(op, converted, given);
        auto tensors = [](const std::vector<SignatureTensor> &list) {
          nb::list out;
          for (const SignatureTensor &t : list) {
            nb::dict entry;
            entry["name"] = t.name;
            entry["layout"] = t.layout;
            entry["element"] = t.element;
            entry["optional"] = t.optional;
            entry["updates"] = t.updates;
            out.append(entry);
          }
          return out;
        };
        nb::list dims;
        for (const SignatureDim &d : signature.dims) {
          nb::dict entry;
          entry["letter"] = std::string(1, d.letter);
          entry["kind"] = d.kind;
          entry["doc"] = d.doc;
          entry["static"] = d.isStatic;
          entry["min"] = d.min;
          entry["max"] = d.max;
          entry["multiple_of"] =
              d.multipleOf ? std::string(1, d.multipleOf) : std::string();
          entry["times_of"] =
              d.timesOf ? std::string(1, d.timesOf) : std::string();
          entry["times"] = d.times;
          entry["plus"] = d.plus;
          entry["pieces_of"] =
              d.piecesOf ? std::string(1, d.piecesOf) : std::string();
          entry["per_attribute"] = d.perAttribute;
          entry["plus_of"] =
              d.plusOf ? std::string(1, d.plusOf) : std::string();
          dims.append(entry);
        }
        nb::dict out;
        out["op"] = signature.op;
        out["summary"] = signature.summary;
        out["operands"] = tensors(signature.operands);
        out["results"] = tensors(signature.results);
        out["dims"] = dims;
        out["attributes"] = signature.attributes;
        return out;
      },
      nb::arg("op"), nb::arg("attributes"), nb::arg("ranks"));

  nb::class_<BoundFunction>(m, "Function")
      .def_prop_ro(
          "name",
          [](const BoundFunction &self) { return self.function.name(); })
      .def_prop_ro("arguments",
                   [](const BoundFunction &self) {
                     nb::list list;
                     for (const TensorInfo &info : self.function.arguments())
                       list.append(infoDict(info));
                     return list;
                   })
      .def_prop_ro("results",
                   [](const BoundFunction &self) {
                     nb::list list;
                     for (const TensorInfo &info : self.function.results())
                       list.append(infoDict(info));
                     return list;
                   })
      .def(
          "result_shapes",
          [](const BoundFunction &self,
             const std::vector<nb::ndarray<>> &arguments) {
            const std::vector<TensorView> views =
                viewsOf(arguments, self.function.arguments(),
                        self.context->backend(), "arguments");
            nb::gil_scoped_release release;
            return self.function.resultShapes(views);
          },
          nb::arg("arguments"))
      .def(
          "call",
          [](const BoundFunction &self,
             const std::vector<nb::ndarray<>> &arguments,
             const std::vector<nb::ndarray<>> &results, uintptr_t stream) {
            const BackendKind backend = self.context->backend();
            const std::vector<TensorView> in = viewsOf(
                arguments, self.function.arguments(), backend, "arguments");
            const std::vector<TensorView> out =
                viewsOf(results, self.function.results(), backend, "results");
            nb::gil_scoped_release release;
            self.function.call(in, out, reinterpret_cast<Stream>(stream));
          },
          nb::arg("arguments"), nb::arg("results"), nb::arg("stream") = 0);
}
