//===- KernelBuilder.cpp - One kernel's CUDA C++ and its bindings ---------===//

#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/ElementTypes.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"

using namespace rudnn::codegen;
using mlir::rudnn::DimRef;

const char *rudnn::codegen::cudaType(DType type) {
  switch (type) {
  case DType::F16:
    return "__half";
  case DType::BF16:
    return "__nv_bfloat16";
  default:
    return "float";
  }
}

rudnn::DType rudnn::codegen::dtype(mlir::Value value) {
  return mlir::rudnn::dtypeOf(
             mlir::cast<mlir::ShapedType>(value.getType()).getElementType())
      .value_or(DType::F32);
}

int64_t rudnn::codegen::elementBytes(mlir::Value value) {
  return static_cast<int64_t>(dtypeSize(dtype(value)));
}

int64_t rudnn::codegen::lastDim(mlir::Value value) {
  return mlir::cast<mlir::ShapedType>(value.getType()).getShape().back();
}

KernelBinding *KernelBuilder::find(const std::string &name) {
  for (KernelBinding &binding : params)
    if (binding.name == name)
      return &binding;
  return nullptr;
}

/// Asked again under one name, a binding must mean the same thing; a null
/// value (a tensor this primitive does not have) defers to a real one.
std::string KernelBuilder::add(KernelBinding binding) {
  KernelBinding *known = find(binding.name);
  if (!known) {
    params.push_back(std::move(binding));
    return params.back().name;
  }
  const bool sameKind =
      known->kind == binding.kind && known->cppType == binding.cppType;
  if (!known->dim.value)
    known->dim.value = binding.dim.value;
  const bool sameValue =
      !binding.dim.value || known->dim.value == binding.dim.value;
  if (!sameKind || !sameValue)
    conflictText = "'" + binding.name + "' is bound to two different things";
  known->written |= binding.written;
  if (binding.kind == KernelBinding::Kind::Pointer && known->written &&
      known->cppType.rfind("const ", 0) == 0)
    known->cppType = known->cppType.substr(6);
  return known->name;
}

std::string KernelBuilder::pointer(mlir::Value value, const std::string &name,
                                   const std::string &element, bool written) {
  KernelBinding binding{KernelBinding::Kind::Pointer,
                        name,
                        (written ? "" : "const ") + element + " *",
                        DimRef::of(value, 0),
                        0,
                        written,
                        {},
                        {}};
  return add(std::move(binding));
}

void KernelBuilder::strides(mlir::Value value,
                            const std::vector<std::string> &names) {
  for (size_t i = 0; i < names.size(); ++i)
    add({KernelBinding::Kind::Stride,
         names[i],
         "long long",
         DimRef::of(value, static_cast<unsigned>(i)),
         0,
         false,
         {},
         {}});
}

std::string KernelBuilder::dim(const DimRef &dim, const std::string &name) {
  return add({KernelBinding::Kind::Dim, name, "int", dim, 0, false, {}, {}});
}

std::string KernelBuilder::scalar(const std::string &name, double value) {
  return add({KernelBinding::Kind::Scalar,
              name,
              "float",
              DimRef{},
              value,
              false,
              {},
              {}});
}

std::string KernelBuilder::zeroedScratch(const std::string &name,
                                         const std::string &element,
                                         mlir::rudnn::SizeRef bytes) {
  return scratch(name, element, std::move(bytes), /*zeroed=*/true);
}

std::string KernelBuilder::scratch(const std::string &name,
                                   const std::string &element,
                                   mlir::rudnn::SizeRef bytes, bool zeroed) {
  KernelBinding binding{KernelBinding::Kind::Scratch,
                        name,
                        element + " *",
                        DimRef{},
                        0,
                        true,
                        {},
                        {}};
  binding.bytes = std::move(bytes);
  binding.zeroed = zeroed;
  return add(std::move(binding));
}

std::string KernelBuilder::tensorMap(mlir::Value value, const std::string &name,
                                     std::vector<unsigned> dims,
                                     std::vector<int64_t> box) {
  KernelBinding binding{KernelBinding::Kind::TensorMap,
                        name,
                        "const __grid_constant__ rudnn::arch::TensorMap",
                        DimRef::of(value, 0),
                        0,
                        false,
                        std::move(dims),
                        std::move(box)};
  return add(std::move(binding));
}

std::string KernelBuilder::tensorMapOver(mlir::Value value,
                                         const std::string &name,
                                         int64_t elementBytes,
                                         std::vector<int64_t> extents,
                                         std::vector<int64_t> strides,
                                         std::vector<int64_t> box) {
  std::string bound = tensorMap(value, name, {}, std::move(box));
  KernelBinding &binding = params.back();
  binding.mapExtents = std::move(extents);
  binding.mapStrides = std::move(strides);
  binding.mapElementBytes = elementBytes;
  return bound;
}

std::string KernelBuilder::source() const {
  std::ostringstream out;
  out << preambleText.str() << "\nextern \"C\" __global__ void ";
  if (boundsThreads)
    out << "__launch_bounds__(" << boundsThreads << ", " << boundsBlocks
        << ") ";
  out << entryName << "(";
  for (size_t i = 0; i < params.size(); ++i) {
    const KernelBinding &binding = params[i];
    out << (i ? ",\n    " : "\n    ") << binding.cppType
        << (binding.cppType.back() == '*' ? "" : " ") << binding.name;
  }
  if (geometry.repeat)
    out << (params.empty() ? "\n    " : ",\n    ") << "int " << iterationName;
  out << ") {\n" << bodyText.str() << "}\n";
  return out.str();
}
