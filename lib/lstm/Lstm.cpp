//===- Lstm.cpp - torch.nn.LSTM's forward through the JIT -----------------===//
//
// Matches the weights given by state_dict key to the contract of the LSTM's
// form, validates the call (and, unless told not to, the lengths), finds
// (or builds once) the function of its signature and calls it. T, B and
// the strides are read from the views.
//
//===----------------------------------------------------------------------===//

#include "lib/OperatorFunctions.h"
#include "runtime/ContractChecks.h"

#include "dialects/IR/LstmContracts.h"
#include "dialects/IR/RudnnOps.h"

#include "rudnn/errors.h"
#include "rudnn/lstm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <sstream>

using namespace rudnn;

namespace {

/// What shapes a call's function besides T and B.
struct CallForm {
  DType dtype;
  int64_t inputSize, hiddenSize;
  LstmForm lstm;
  bool h0, c0, lengths, hN, cN;
  int64_t units;
  std::optional<bool> weightsOnChip, perStep;
};

std::string signatureOf(const CallForm &f) {
  std::ostringstream key;
  key << "lstm:" << dtypeName(f.dtype) << ":i" << f.inputSize << ":h"
      << f.hiddenSize << ":l" << f.lstm.layers << ":bi" << f.lstm.bidirectional
      << ":bias" << f.lstm.biases << ":bf" << f.lstm.batchFirst << ":h0" << f.h0
      << ":c0" << f.c0 << ":len" << f.lengths << ":hn" << f.hN << ":cn" << f.cN
      << ":units" << f.units << ":onchip"
      << (f.weightsOnChip ? int(*f.weightsOnChip) : -1) << ":step"
      << (f.perStep ? int(*f.perStep) : -1);
  return key.str();
}

/// @lstm(x, [h0], [c0], [lengths], weights…) -> (out, [h_n], [c_n]), T and
/// B dynamic.
mlir::OwningOpRef<mlir::ModuleOp> lstmModule(mlir::MLIRContext &mlir,
                                             const CallForm &f) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  const int64_t H = f.hiddenSize, D = f.lstm.directions(),
                states = f.lstm.layers * D;
  mlir::Type element = mlirElementType(b, f.dtype);
  auto tensor = [&](llvm::ArrayRef<int64_t> shape) -> mlir::Type {
    return mlir::RankedTensorType::get(shape, element);
  };
  mlir::Type x = tensor({dyn, dyn, f.inputSize}),
             out = tensor({dyn, dyn, D * H}), state = tensor({states, dyn, H}),
             lengths = mlir::RankedTensorType::get({dyn}, b.getI32Type());
  llvm::SmallVector<mlir::Type> inputs = {x};
  if (f.h0)
    inputs.push_back(state);
  if (f.c0)
    inputs.push_back(state);
  if (f.lengths)
    inputs.push_back(lengths);
  const unsigned firstWeight = inputs.size();
  for (int64_t layer = 0; layer < f.lstm.layers; ++layer)
    for (int64_t d = 0; d < D; ++d) {
      inputs.push_back(tensor({4 * H, layer ? D * H : f.inputSize}));
      inputs.push_back(tensor({4 * H, H}));
      if (f.lstm.biases)
        inputs.append({tensor({4 * H}), tensor({4 * H})});
    }
  llvm::SmallVector<mlir::Type> results = {out};
  if (f.hN)
    results.push_back(state);
  if (f.cN)
    results.push_back(state);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "lstm",
                                           b.getFunctionType(inputs, results));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  unsigned next = 1;
  auto optionalArg = [&](bool present) {
    return present ? mlir::Value(body->getArgument(next++)) : mlir::Value();
  };
  mlir::Value h0 = optionalArg(f.h0), c0 = optionalArg(f.c0),
              lengthsArg = optionalArg(f.lengths);
  llvm::SmallVector<mlir::Value> weights(
      body->getArguments().begin() + firstWeight, body->getArguments().end());
  auto op = b.create<mlir::rudnn::LstmOp>(
      loc, mlir::TypeRange{out, state, state}, body->getArgument(0), h0, c0,
      lengthsArg, weights, b.getI64IntegerAttr(f.lstm.layers),
      f.lstm.bidirectional ? b.getUnitAttr() : mlir::UnitAttr(),
      f.lstm.batchFirst ? b.getUnitAttr() : mlir::UnitAttr(),
      f.units ? b.getI64IntegerAttr(f.units) : mlir::IntegerAttr(),
      f.weightsOnChip ? b.getBoolAttr(*f.weightsOnChip) : mlir::BoolAttr(),
      f.perStep ? b.getBoolAttr(*f.perStep) : mlir::BoolAttr());
  llvm::SmallVector<mlir::Value> returned = {op.getOut()};
  if (f.hN)
    returned.push_back(op.getHN());
  if (f.cN)
    returned.push_back(op.getCN());
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

/// The contract's weights from `given`, in its order; throws for a missing
/// or unknown key.
std::vector<const TensorView *>
weightsInOrder(const OperatorContract &contract,
               const std::map<std::string, TensorView> &given,
               const LstmForm &form) {
  std::vector<const TensorView *> ordered;
  for (size_t k = kLstmLeadingOperands; k < contract.operands.size(); ++k) {
    auto it = given.find(std::string(contract.operands[k].name));
    if (it == given.end())
      throw InvalidArgument(
          "'" + std::string(contract.operands[k].name) + "' is missing: a " +
          std::to_string(form.layers) + "-layer " +
          (form.bidirectional ? "bidirectional " : "") + "LSTM" +
          (form.biases ? " with biases" : "") + " takes " +
          std::to_string(contract.operands.size() - kLstmLeadingOperands) +
          " weights");
    ordered.push_back(&it->second);
  }
  if (given.size() != ordered.size())
    for (const auto &[name, view] : given)
      if (contract.operandIndex(name) < int(kLstmLeadingOperands))
        throw InvalidArgument("unknown weight '" + name + "' for a " +
                              std::to_string(form.layers) + "-layer " +
                              (form.bidirectional ? "bidirectional " : "") +
                              "LSTM");
  return ordered;
}

/// Throws for a length outside [0, T]: a synchronising read.
void checkLengths(Context &context, const TensorView &lengths, int64_t steps,
                  Stream stream) {
  std::vector<int32_t> values(lengths.shape.at(0));
  if (values.empty())
    return;
  context.copyToHost(values.data(), lengths.data,
                     values.size() * sizeof(int32_t), stream);
  context.synchronize(stream);
  for (size_t b = 0; b < values.size(); ++b)
    if (values[b] < 0 || values[b] > steps)
      throw InvalidArgument("'lengths'[" + std::to_string(b) + "] is " +
                            std::to_string(values[b]) +
                            ", expected 0 to T = " + std::to_string(steps));
}

} // namespace

void rudnn::lstmForward(Context &context, const LstmInputs &in,
                        const LstmOutputs &out, const LstmOptions &options,
                        Stream stream) {
  if (options.numLayers < 1 || options.numLayers > 64)
    throw InvalidArgument("'numLayers' must be 1 to 64, got " +
                          std::to_string(options.numLayers));
  // Biases or not: as the state_dict has them.
  LstmForm form{options.numLayers, options.bidirectional,
                in.weights.count("bias_ih_l0") > 0, options.batchFirst};
  const OperatorContract &contract = lstmContract(form);
  std::vector<const TensorView *> operands = {
      &in.x, viewOf(in.h0), viewOf(in.c0), viewOf(in.lengths)};
  for (const TensorView *weight : weightsInOrder(contract, in.weights, form))
    operands.push_back(weight);
  DimSizes dims =
      checkCall(contract, operands, {&out.out, viewOf(out.hN), viewOf(out.cN)});
  for (char letter : {'T', 'B'})
    if (dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (options.units < 0 || options.units > dims['H'])
    throw InvalidArgument("'units' must be 0 (the target's choice) or 1 to "
                          "the hidden size " +
                          std::to_string(dims['H']) + ", got " +
                          std::to_string(options.units));
  if (in.lengths && options.checkLengths)
    checkLengths(context, *in.lengths, dims['T'], stream);

  CallForm call{in.x.dtype,
                dims['I'],
                dims['H'],
                form,
                in.h0.has_value(),
                in.c0.has_value(),
                in.lengths.has_value(),
                out.hN.has_value(),
                out.cN.has_value(),
                options.units,
                options.weightsOnChip,
                options.perStep};
  Function function =
      cachedFunction(context, signatureOf(call), [&](mlir::MLIRContext &mlir) {
        return lstmModule(mlir, call);
      });
  function.call(presentViews(operands),
                presentViews({&out.out, viewOf(out.hN), viewOf(out.cN)}),
                stream);
}
