//===- OperatorReferences.h - Float64 references by operator ----*- C++ -*-===//
//
// Tools compare any operator's results with its float64 reference without
// knowing the operator: tensors go in and come out by their contract names
// (dialects/IR/OperatorContract.h), attributes by name.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_OPERATORREFERENCES_H
#define RUDNN_LIB_REFERENCE_OPERATORREFERENCES_H

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace rudnn::reference {

/// A dense row-major float64 tensor.
struct Values {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// Tensors by contract name.
using NamedValues = std::map<std::string, Values>;

/// An operator's float64 reference: every result the contract names, from
/// the operands given (absent optional ones left out) and the operator's
/// specialized attributes (e.g. "scale", "chunk").
using OperatorReference =
    NamedValues (*)(const NamedValues &operands,
                    const std::map<std::string, double> &attributes);

/// The reference of operator `op` (e.g. "rudnn.kda"), or null.
OperatorReference referenceFor(std::string_view op);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_OPERATORREFERENCES_H
