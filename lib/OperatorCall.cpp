//===- OperatorCall.cpp - Any operator, by name ---------------------------===//
//
// callOperator builds an operator's one-op function from its contract: the
// call's tensors chosen by name, its attributes converted to the kinds the
// op's ODS declares (asked of the op itself, through verifyInherentAttrs),
// the op built by its buildFromContract. The function is cached per
// context and signature like the typed entry points' functions.
//
//===----------------------------------------------------------------------===//

#include "lib/OperatorFunctions.h"
#include "runtime/checks/ContractChecks.h"
#include "runtime/checks/ViewChecks.h"

#include "codegen/InitRudnn.h"
#include "dialects/IR/RudnnInterfaces.h"

#include "rudnn/errors.h"
#include "rudnn/operator.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <sstream>

using namespace rudnn;
using OperatorModel = mlir::rudnn::OperatorOpInterface::Concept;

namespace {

/// An operator of the dialect: its interface and its attributes' names.
struct OperatorEntry {
  const OperatorModel *model = nullptr;
  std::vector<std::string> attributes;
};

/// The dialect's operators, read once from a context kept for the process
/// (the interfaces live in it).
const std::map<std::string, OperatorEntry> &operators() {
  static const std::map<std::string, OperatorEntry> *table = [] {
    mlir::DialectRegistry registry;
    mlir::rudnn::registerRudnnDialects(registry);
    auto *context = new mlir::MLIRContext(registry);
    context->loadAllAvailableDialects();
    auto *entries = new std::map<std::string, OperatorEntry>;
    for (mlir::RegisteredOperationName name :
         context->getRegisteredOperations())
      if (auto *model = name.getInterface<mlir::rudnn::OperatorOpInterface>()) {
        OperatorEntry &entry = (*entries)[name.getStringRef().str()];
        entry.model = model;
        for (mlir::StringAttr attribute : name.getAttributeNames())
          if (attribute.getValue() != "operandSegmentSizes")
            entry.attributes.push_back(attribute.getValue().str());
      }
    return entries;
  }();
  return *table;
}

const OperatorEntry &operatorNamed(const std::string &op) {
  auto it = operators().find(op);
  if (it != operators().end())
    return it->second;
  std::string known;
  for (const auto &[name, entry] : operators())
    known += (known.empty() ? "" : ", ") + name;
  throw Unsupported("rudnn has no operator '" + op + "' (it has " + known +
                    ")");
}

/// Each contract tensor's view in the call (null when not named).
struct CallTensors {
  std::vector<const TensorView *> operands, results;
  /// Per operand: a floating-point one whose rows are 16-byte aligned, which
  /// the function promises (rudnn.align), so its kernels need no
  /// element-wise path for it.
  std::vector<bool> aligned;
  /// Per result: whether the function returns it (a view given, or asked
  /// for by name), and whether it is a returned floating-point one whose
  /// rows are 16-byte aligned, which the function promises, so its kernels
  /// store it without an element-wise path.
  std::vector<bool> requested, resultAligned;
};

CallTensors tensorsByContract(const std::string &op,
                              const OperatorContract &contract,
                              const NamedTensors &tensors) {
  CallTensors call;
  call.operands.assign(contract.operands.size(), nullptr);
  call.results.assign(contract.results.size(), nullptr);
  for (const auto &[name, view] : tensors) {
    const int operand = contract.operandIndex(name),
              result = contract.resultIndex(name);
    if (operand < 0 && result < 0) {
      std::vector<std::string_view> names;
      for (const auto *list : {&contract.operands, &contract.results})
        for (const TensorContract &t : *list)
          if (std::find(names.begin(), names.end(), t.name) == names.end())
            names.push_back(t.name);
      std::string known;
      for (std::string_view knownName : names)
        known += (known.empty() ? "'" : ", '") + std::string(knownName) + "'";
      throw InvalidArgument("'" + name + "' is not a tensor of " + op +
                            " (its tensors are " + known + ")");
    }
    if ((operand >= 0 && call.operands[operand]) ||
        (result >= 0 && call.results[result]))
      throw InvalidArgument("'" + name + "' is given twice");
    if (operand >= 0)
      call.operands[operand] = &view;
    if (result >= 0)
      call.results[result] = &view;
  }
  // A result updating an operand in place is that operand's memory, and
  // always returned: otherwise the plan would update a copy.
  for (size_t i = 0; i < contract.results.size(); ++i) {
    const std::string_view updates = contract.results[i].updates;
    const int operand = updates.empty() ? -1 : contract.operandIndex(updates);
    if (operand >= 0 && call.operands[operand] && !call.results[i])
      call.results[i] = call.operands[operand];
  }
  for (const TensorView *view : call.results)
    call.requested.push_back(view != nullptr);
  auto alignedFloats = [](const TensorContract &tensor,
                          const TensorView *view) {
    const bool floats = tensor.element == ElementRule::Float ||
                        tensor.element == ElementRule::SameAs;
    return view && floats && view->shape.size() >= 2 &&
           hasAlignedRows(*view, 16);
  };
  for (size_t i = 0; i < contract.operands.size(); ++i)
    call.aligned.push_back(
        alignedFloats(contract.operands[i], call.operands[i]));
  for (size_t i = 0; i < contract.results.size(); ++i)
    call.resultAligned.push_back(
        alignedFloats(contract.results[i], call.results[i]));
  return call;
}

/// What a value of each kind may become, in order of preference.
std::vector<mlir::Attribute> candidates(mlir::Builder &b,
                                        const AttributeValue &value) {
  if (const bool *flag = std::get_if<bool>(&value))
    return {b.getUnitAttr(), b.getBoolAttr(*flag)};
  if (const int64_t *integer = std::get_if<int64_t>(&value))
    return {b.getI64IntegerAttr(*integer),
            b.getF32FloatAttr(static_cast<float>(*integer))};
  if (const double *number = std::get_if<double>(&value)) {
    std::vector<mlir::Attribute> kinds = {
        b.getF32FloatAttr(static_cast<float>(*number))};
    if (*number == static_cast<double>(static_cast<int64_t>(*number)))
      kinds.push_back(b.getI64IntegerAttr(static_cast<int64_t>(*number)));
    return kinds;
  }
  return {b.getStringAttr(std::get<std::string>(value))};
}

std::string describe(const AttributeValue &value) {
  std::ostringstream text;
  std::visit(
      [&](const auto &v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, bool>)
          text << "bool " << (v ? "true" : "false");
        else if constexpr (std::is_same_v<V, int64_t>)
          text << "integer " << v;
        else if constexpr (std::is_same_v<V, double>)
          text << "number " << std::hexfloat << v;
        else
          text << "string '" << v << "'";
      },
      value);
  return text.str();
}

/// `value` as the attribute the op declares for `name`: the first candidate
/// its inherent-attribute check accepts. A flag that is a unit attribute
/// and false is no attribute (null).
mlir::Attribute convertAttribute(mlir::OperationName op, mlir::Builder &b,
                                 const std::string &name,
                                 const AttributeValue &value) {
  mlir::ScopedDiagnosticHandler quiet(
      b.getContext(), [](mlir::Diagnostic &) { return mlir::success(); });
  for (mlir::Attribute attribute : candidates(b, value)) {
    mlir::NamedAttrList list;
    list.append(name, attribute);
    if (mlir::succeeded(op.verifyInherentAttrs(list, [&] {
          return mlir::emitError(mlir::UnknownLoc::get(b.getContext()));
        }))) {
      const bool *flag = std::get_if<bool>(&value);
      return flag && !*flag && mlir::isa<mlir::UnitAttr>(attribute)
                 ? mlir::Attribute()
                 : attribute;
    }
  }
  throw InvalidArgument("attribute '" + name + "' of " +
                        op.getStringRef().str() + " cannot be the " +
                        describe(value));
}

/// The tensor type of a contract tensor in this call: its view's element
/// type (or the one its rule names), static dims their sizes and the
/// others dynamic.
mlir::RankedTensorType typeOf(mlir::Builder &b, const std::string &op,
                              const OperatorContract &c,
                              const TensorContract &tensor,
                              const TensorView *view, const DimSizes &dims,
                              const CallTensors &call) {
  llvm::SmallVector<int64_t> shape;
  for (char letter : tensor.layout) {
    const DimContract *dim = c.dim(letter);
    if (!dim || !dim->isStatic) {
      shape.push_back(mlir::ShapedType::kDynamic);
      continue;
    }
    if (!dims.has(letter) && !view && c.resultIndex(tensor.name) >= 0) {
      // A result's size the operator fixes itself (KDA's saved tiles).
      shape.push_back(mlir::ShapedType::kDynamic);
      continue;
    }
    if (!dims.has(letter))
      throw InvalidArgument(op + "'s static dim " + std::string(1, letter) +
                            " (" + std::string(dim->kind) +
                            ") is not given by any tensor of the call");
    shape.push_back(dims[letter]);
  }
  auto dtypeOf = [&](std::string_view name) -> const TensorView * {
    int index = c.operandIndex(name);
    if (index >= 0 && call.operands[index])
      return call.operands[index];
    index = c.resultIndex(name);
    return index >= 0 ? call.results[index] : nullptr;
  };
  mlir::Type element;
  if (view) {
    element = mlirElementType(b, view->dtype);
  } else if (tensor.element == ElementRule::F32) {
    element = b.getF32Type();
  } else if (tensor.element == ElementRule::I32) {
    element = b.getI32Type();
  } else if (tensor.element == ElementRule::Bool) {
    element = b.getI1Type();
  } else {
    const TensorView *like = tensor.element == ElementRule::SameAs
                                 ? dtypeOf(tensor.sameAs)
                                 : call.operands.front();
    if (!like)
      throw InvalidArgument("the element type of " + op + "'s '" +
                            std::string(tensor.name) +
                            "' is not known from the call's tensors");
    element = mlirElementType(b, like->dtype);
  }
  return mlir::RankedTensorType::get(shape, element);
}

/// The function's cache key: the operator, the attributes, and each
/// contract tensor's presence, element type, rank and static dims.
std::string signatureOf(const std::string &op, const OperatorContract &c,
                        const OperatorAttributes &attributes,
                        const CallTensors &call, const DimSizes &dims) {
  std::ostringstream key;
  key << "operator:" << op;
  std::vector<std::pair<std::string, std::string>> sorted;
  for (const auto &[name, value] : attributes)
    sorted.emplace_back(name, describe(value));
  std::sort(sorted.begin(), sorted.end());
  for (const auto &[name, value] : sorted)
    key << ":" << name << "=" << value;
  auto tensors = [&](const char *kind,
                     const std::vector<const TensorView *> &views) {
    key << ":" << kind;
    for (const TensorView *view : views)
      key << (view ? dtypeName(view->dtype) : std::string("-")) << "/"
          << (view ? view->shape.size() : 0) << ",";
  };
  tensors("in", call.operands);
  key << ":a16=";
  for (bool aligned : call.aligned)
    key << aligned;
  tensors("out", call.results);
  key << ":returns=";
  for (bool requested : call.requested)
    key << requested;
  key << ":a16=";
  for (bool aligned : call.resultAligned)
    key << aligned;
  key << ":static";
  for (const DimContract &dim : c.dims)
    if (dim.isStatic && dims.has(dim.letter))
      key << dim.letter << dims[dim.letter];
  return key.str();
}

/// @<op>(present operands) -> (given results), the one op built from its
/// contract.
mlir::OwningOpRef<mlir::ModuleOp>
buildFunction(mlir::MLIRContext &mlir, const std::string &op,
              const OperatorEntry &entry, const OperatorContract &c,
              const OperatorAttributes &attributes, const CallTensors &call,
              const DimSizes &dims) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  std::optional<mlir::RegisteredOperationName> name =
      mlir::RegisteredOperationName::lookup(op, &mlir);
  if (!name)
    throw Unsupported("operator " + op + " is not registered");

  llvm::SmallVector<mlir::Type> inputs, outputs, resultTypes;
  for (auto [index, tensor] : llvm::enumerate(c.operands))
    if (call.operands[index])
      inputs.push_back(
          typeOf(b, op, c, tensor, call.operands[index], dims, call));
  for (auto [index, tensor] : llvm::enumerate(c.results)) {
    resultTypes.push_back(
        typeOf(b, op, c, tensor, call.results[index], dims, call));
    if (call.requested[index])
      outputs.push_back(resultTypes.back());
  }
  llvm::SmallVector<mlir::NamedAttribute> named;
  for (const auto &[attribute, value] : attributes)
    if (mlir::Attribute converted =
            convertAttribute(*name, b, attribute, value))
      named.push_back(b.getNamedAttr(attribute, converted));

  b.setInsertionPointToEnd(module->getBody());
  std::string symbol = op.substr(op.find('.') + 1);
  auto func = b.create<mlir::func::FuncOp>(loc, symbol,
                                           b.getFunctionType(inputs, outputs));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  llvm::SmallVector<mlir::Value> operands;
  unsigned argument = 0;
  for (auto [index, tensor] : llvm::enumerate(c.operands)) {
    if (!call.operands[index]) {
      operands.push_back(mlir::Value());
      continue;
    }
    func.setArgAttr(argument, "rudnn.name", b.getStringAttr(tensor.name));
    if (call.aligned[index])
      func.setArgAttr(argument, mlir::rudnn::RudnnDialect::kAlignAttrName,
                      b.getI64IntegerAttr(16));
    operands.push_back(body->getArgument(argument++));
  }
  mlir::Operation *built =
      entry.model->buildFromContract(b, loc, c, operands, resultTypes, named);
  auto built_op = mlir::cast<mlir::rudnn::OperatorOpInterface>(built);
  llvm::SmallVector<mlir::Value> returned;
  for (auto [index, tensor] : llvm::enumerate(c.results))
    if (call.requested[index]) {
      mlir::Value value = built_op.getContractResult(index);
      if (!value)
        throw InvalidArgument("result '" + std::string(tensor.name) + "' of " +
                              op +
                              " is not computed by this call (an attribute "
                              "or an input it needs is missing)");
      func.setResultAttr(returned.size(), "rudnn.name",
                         b.getStringAttr(tensor.name));
      if (call.resultAligned[index])
        func.setResultAttr(returned.size(),
                           mlir::rudnn::RudnnDialect::kAlignAttrName,
                           b.getI64IntegerAttr(16));
      returned.push_back(value);
    }
  b.create<mlir::func::ReturnOp>(loc, returned);
  // The op may have fixed a size the call left open (KDA's saved tiles).
  func.setType(
      b.getFunctionType(inputs, mlir::ValueRange(returned).getTypes()));
  return module;
}

} // namespace

namespace {

/// A call made ready for its function: its contract, tensors, sizes and
/// the function's cache key.
struct PreparedCall {
  const OperatorEntry *entry;
  const OperatorContract *contract;
  CallTensors call;
  DimSizes dims;
  std::string signature;
};

/// The flags and integers among `attributes`, as a CallDescription takes
/// them, after refusing a name given twice or unknown to `op`.
CallDescription describeCall(const std::string &op, const OperatorEntry &entry,
                             const OperatorAttributes &attributes) {
  CallDescription form;
  for (size_t i = 0; i < attributes.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (attributes[i].first == attributes[j].first)
        throw InvalidArgument("attribute '" + attributes[i].first +
                              "' is given twice");
  for (const auto &[name, value] : attributes) {
    if (std::find(entry.attributes.begin(), entry.attributes.end(), name) ==
        entry.attributes.end()) {
      std::string known;
      for (const std::string &attribute : entry.attributes)
        known += (known.empty() ? "'" : ", '") + attribute + "'";
      throw InvalidArgument("'" + name + "' is not an attribute of " + op +
                            " (its attributes are " + known + ")");
    }
    if (const bool *flag = std::get_if<bool>(&value))
      form.integers.emplace_back(name, *flag ? 1 : 0);
    else if (const int64_t *integer = std::get_if<int64_t>(&value))
      form.integers.emplace_back(name, *integer);
  }
  return form;
}

PreparedCall prepare(const std::string &op,
                     const OperatorAttributes &attributes,
                     const NamedTensors &tensors,
                     const std::vector<std::string> &returned) {
  const OperatorEntry &entry = operatorNamed(op);
  CallDescription form = describeCall(op, entry, attributes);
  for (const auto &[name, view] : tensors)
    form.ranks.emplace_back(name, view.shape.size());
  const OperatorContract &contract = entry.model->getCallContract(form);
  CallTensors call = tensorsByContract(op, contract, tensors);
  for (const std::string &name : returned) {
    const int index = contract.resultIndex(name);
    if (index < 0)
      throw InvalidArgument("'" + name + "' is not a result of " + op);
    call.requested[index] = true;
  }
  DimSizes dims = checkCall(contract, call.operands, call.results);
  deriveDims(contract, dims);
  std::string signature = signatureOf(op, contract, attributes, call, dims);
  return {&entry, &contract, std::move(call), dims, std::move(signature)};
}

Function functionOf(Context &context, const std::string &op,
                    const OperatorAttributes &attributes,
                    const PreparedCall &p) {
  return cachedFunction(context, p.signature, [&](mlir::MLIRContext &mlir) {
    return buildFunction(mlir, op, *p.entry, *p.contract, attributes, p.call,
                         p.dims);
  });
}

} // namespace

void rudnn::callOperator(Context &context, const std::string &op,
                         const OperatorAttributes &attributes,
                         const NamedTensors &tensors, Stream stream) {
  const PreparedCall p = prepare(op, attributes, tensors, {});
  functionOf(context, op, attributes, p)
      .call(presentViews(p.call.operands), presentViews(p.call.results),
            stream);
}

Function rudnn::operatorFunction(Context &context, const std::string &op,
                                 const OperatorAttributes &attributes,
                                 const NamedTensors &operands,
                                 const std::vector<std::string> &results) {
  return functionOf(context, op, attributes,
                    prepare(op, attributes, operands, results));
}

std::vector<std::string> rudnn::operatorNames() {
  std::vector<std::string> names;
  for (const auto &[name, entry] : operators())
    names.push_back(name);
  return names;
}

OperatorSignature rudnn::operatorSignature(
    const std::string &op, const OperatorAttributes &attributes,
    const std::vector<std::pair<std::string, size_t>> &ranks) {
  const OperatorEntry &entry = operatorNamed(op);
  CallDescription form = describeCall(op, entry, attributes);
  form.ranks = ranks;
  const OperatorContract &c = entry.model->getCallContract(form);
  OperatorSignature signature;
  signature.op = op;
  signature.summary = std::string(c.summary);
  signature.attributes = entry.attributes;
  auto tensor = [](const TensorContract &t) {
    static const char *const kElements[] = {"float", "f32", "", "i32", "bool"};
    SignatureTensor out;
    out.name = std::string(t.name);
    out.layout = std::string(t.layout);
    out.element = t.element == ElementRule::SameAs
                      ? "as " + std::string(t.sameAs)
                      : kElements[static_cast<int>(t.element)];
    out.optional = t.optional;
    out.updates = std::string(t.updates);
    return out;
  };
  for (const TensorContract &t : c.operands)
    signature.operands.push_back(tensor(t));
  for (const TensorContract &t : c.results)
    signature.results.push_back(tensor(t));
  for (const DimContract &d : c.dims)
    signature.dims.push_back({d.letter, std::string(d.kind), std::string(d.doc),
                              d.isStatic, d.min, d.max, d.multipleOf, d.timesOf,
                              d.times, d.plus, d.piecesOf,
                              std::string(d.perAttribute), d.plusOf});
  return signature;
}
