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

/// The references by operator name, which each family's
/// `register<Family>References` (in its `<Family>Operators.cpp`) fills.
class ReferenceRegistry {
public:
  /// Makes `reference` the one of `op`; an operator registered twice is a
  /// mistake (Internal).
  void add(std::string op, OperatorReference reference);
  OperatorReference find(std::string_view op) const;

private:
  std::map<std::string, OperatorReference, std::less<>> references;
};

void registerAttentionReferences(ReferenceRegistry &registry);
void registerGruReferences(ReferenceRegistry &registry);
void registerKdaReferences(ReferenceRegistry &registry);
void registerKvCacheReferences(ReferenceRegistry &registry);
void registerLstmReferences(ReferenceRegistry &registry);
void registerNormReferences(ReferenceRegistry &registry);

/// For the adapters: the operand or attribute `name`, InvalidArgument
/// naming it when the call has none.
const Values &operand(const NamedValues &operands, const std::string &name);
double attribute(const std::map<std::string, double> &attributes,
                 const std::string &name);
/// An attribute that may be absent (a flag not set, an open bound).
double attributeOr(const std::map<std::string, double> &attributes,
                   const std::string &name, double fallback);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_OPERATORREFERENCES_H
