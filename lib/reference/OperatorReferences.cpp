//===- OperatorReferences.cpp - Float64 references by operator ------------===//

#include "lib/reference/OperatorReferences.h"

#include "rudnn/errors.h"

using namespace rudnn;
using namespace rudnn::reference;

const Values &rudnn::reference::operand(const NamedValues &operands,
                                        const std::string &name) {
  auto it = operands.find(name);
  if (it == operands.end())
    throw InvalidArgument("the reference needs '" + name + "'");
  return it->second;
}

double
rudnn::reference::attribute(const std::map<std::string, double> &attributes,
                            const std::string &name) {
  auto it = attributes.find(name);
  if (it == attributes.end())
    throw InvalidArgument("the reference needs attribute '" + name + "'");
  return it->second;
}

double
rudnn::reference::attributeOr(const std::map<std::string, double> &attributes,
                              const std::string &name, double fallback) {
  auto it = attributes.find(name);
  return it == attributes.end() ? fallback : it->second;
}

void ReferenceRegistry::add(std::string op, OperatorReference reference) {
  if (!references.emplace(op, reference).second)
    throw Error(Status::Internal, "two references are registered for " + op);
}

OperatorReference ReferenceRegistry::find(std::string_view op) const {
  auto it = references.find(op);
  return it == references.end() ? nullptr : it->second;
}

OperatorReference rudnn::reference::referenceFor(std::string_view op) {
  static const ReferenceRegistry registry = [] {
    ReferenceRegistry families;
    // One line per operator family.
    registerAttentionReferences(families);
    registerGruReferences(families);
    registerKdaReferences(families);
    registerKvCacheReferences(families);
    registerLstmReferences(families);
    registerNormReferences(families);
    return families;
  }();
  return registry.find(op);
}
