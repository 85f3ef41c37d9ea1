//===- RudnnAttrs.cpp - rudnn attributes ----------------------------------===//

#include "dialects/IR/RudnnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rudnn;

// Generated builders and parsers take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_ATTRDEF_CLASSES
#include "dialects/IR/RudnnAttrs.cpp.inc"
#pragma GCC diagnostic pop

void RudnnDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/IR/RudnnAttrs.cpp.inc"
      >();
}

/// Parses "sm_<digits>[a]" into its compute capability; nullopt otherwise.
static std::optional<int64_t> parseArch(StringRef arch) {
  if (!arch.consume_front("sm_"))
    return std::nullopt;
  arch.consume_back("a");
  int64_t capability;
  if (arch.empty() || arch.getAsInteger(10, capability))
    return std::nullopt;
  return capability;
}

/// Warp width of every NVIDIA architecture.
static constexpr int64_t kWarpLanes = 32;
/// Largest opt-in shared memory of one block on any supported architecture.
static constexpr int64_t kMaxSmemPerBlock = 227 * 1024;
/// mma.sync m16n8k16 with bf16 and cp.async need Ampere or newer.
static constexpr int64_t kMinComputeCapability = 80;

LogicalResult TargetAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 StringRef arch, int64_t lanes,
                                 int64_t smemPerBlock, int64_t smCount) {
  std::optional<int64_t> capability = parseArch(arch);
  if (!capability)
    return emitError() << "target arch must look like \"sm_90\" or "
                          "\"sm_90a\", got \""
                       << arch << "\"";
  if (*capability < kMinComputeCapability)
    return emitError() << "target arch must be sm_" << kMinComputeCapability
                       << " or newer, got \"" << arch << "\"";
  if (lanes != kWarpLanes)
    return emitError() << "target lanes must be " << kWarpLanes
                       << " (the warp width), got " << lanes;
  if (smemPerBlock < 1 || smemPerBlock > kMaxSmemPerBlock)
    return emitError() << "target smem_per_block must be in [1, "
                       << kMaxSmemPerBlock << "] bytes, got " << smemPerBlock;
  if (smCount < 1)
    return emitError() << "target sm_count must be positive, got " << smCount;
  return success();
}

int64_t TargetAttr::getComputeCapability() const {
  return parseArch(getArch()).value_or(0);
}

LogicalResult SizeAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                               int64_t constant, ArrayAttr params,
                               int64_t divisor) {
  if (constant < 0)
    return emitError() << "size constant must not be negative, got "
                       << constant;
  if (divisor < 1)
    return emitError() << "size divisor must be positive, got " << divisor;
  for (Attribute param : params)
    if (!llvm::isa<StringAttr>(param))
      return emitError() << "size params must be names, got " << param;
  return success();
}

LogicalResult ParamAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringRef name, int64_t bits) {
  if (name.empty())
    return emitError() << "param name must not be empty";
  if (bits != 32 && bits != 64)
    return emitError() << "param bits must be 32 or 64, got " << bits;
  return success();
}

LogicalResult
TensorMapAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringRef buffer, int64_t elementBytes, ArrayAttr dims,
                      ArrayAttr strides, DenseI64ArrayAttr box,
                      int64_t swizzleBytes) {
  if (buffer.empty())
    return emitError() << "tensor map buffer name must not be empty";
  if (elementBytes != 1 && elementBytes != 2 && elementBytes != 4 &&
      elementBytes != 8)
    return emitError() << "tensor map elements of " << elementBytes << " bytes";
  const size_t rank = dims.size();
  if (rank < 1 || rank > 5 || strides.size() + 1 != rank ||
      box.size() != static_cast<int64_t>(rank))
    return emitError() << "tensor map of rank " << rank << " needs " << rank - 1
                       << " strides and " << rank << " box dims";
  for (Attribute extent : llvm::concat<const Attribute>(dims, strides))
    if (!llvm::isa<IntegerAttr, ParamAttr>(extent))
      return emitError() << "tensor map dims and strides are i64 constants "
                            "or #rudnn.param";
  for (int64_t size : box.asArrayRef())
    if (size < 1 || size > 256)
      return emitError() << "tensor map box dims lie in [1, 256]";
  if (swizzleBytes != 0 && swizzleBytes != 32 && swizzleBytes != 64 &&
      swizzleBytes != 128)
    return emitError() << "tensor map swizzle of " << swizzleBytes << " bytes";
  return success();
}

LogicalResult
DimSourceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      StringRef buffer, int64_t index, int64_t divisor) {
  if (buffer.empty() || index < 0 || divisor < 1)
    return emitError() << "#rudnn.dim needs a buffer, a dim index >= 0 and "
                          "a divisor >= 1, got buffer \""
                       << buffer << "\", index " << index << ", divisor "
                       << divisor;
  return success();
}

LogicalResult
StrideSourceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         StringRef buffer, int64_t index) {
  if (buffer.empty() || index < 0)
    return emitError() << "#rudnn.stride needs a buffer and a dim index >= 0, "
                          "got buffer \""
                       << buffer << "\", index " << index;
  return success();
}

LogicalResult
SplitSourceAttr::verify(function_ref<InFlightDiagnostic()> emitError, SizeAttr,
                        int64_t target, SizeAttr) {
  if (target < 1)
    return emitError() << "#rudnn.split needs a target of at least one "
                          "block, got "
                       << target;
  return success();
}

LogicalResult
SumSourceAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayAttr terms) {
  if (terms.empty() ||
      !llvm::all_of(terms, [](Attribute t) { return llvm::isa<SizeAttr>(t); }))
    return emitError() << "#rudnn.sum needs one or more #rudnn.size terms";
  return success();
}
