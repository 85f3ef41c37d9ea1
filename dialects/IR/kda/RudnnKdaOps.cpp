//===- RudnnKdaOps.cpp - The KDA operator ops' rules ----------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/kda/KdaPolicy.h"
#include "dialects/IR/kda/KdaRules.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>
#include <iterator>

using namespace mlir;
using namespace mlir::rudnn;

bool mlir::rudnn::isValidKdaChunk(int64_t chunk) {
  return llvm::is_contained(kKdaChunkSizes, chunk);
}

double mlir::rudnn::defaultKdaScale(int64_t featureDimK) {
  return 1.0 / std::sqrt(static_cast<double>(featureDimK));
}

//===----------------------------------------------------------------------===//
// KDA: rules shared by the forward and the backward
//===----------------------------------------------------------------------===//

LogicalResult mlir::rudnn::verifyKdaAttributes(Operation *op,
                                               std::optional<uint64_t> chunk,
                                               FloatAttr scale) {
  if (chunk && !isValidKdaChunk(static_cast<int64_t>(*chunk)))
    return op->emitOpError() << "'chunk' must be 16, 32 or 64, got "
                             << static_cast<int64_t>(*chunk);
  if (scale) {
    double value = scale.getValueAsDouble();
    if (!(value > 0.0) || !std::isfinite(value))
      return op->emitOpError()
             << "'scale' must be positive and finite, got " << value;
  }
  return success();
}

LogicalResult mlir::rudnn::verifyKdaChunkCount(Operation *op,
                                               const ShapeChecker &shapes,
                                               StringRef name,
                                               std::optional<uint64_t> chunk,
                                               bool packed) {
  std::optional<int64_t> count = shapes.lookup('N');
  std::optional<int64_t> length = shapes.lookup('T');
  // The offsets count the sequences plus one.
  std::optional<int64_t> offsets = shapes.lookup('C');
  // Without a chunk, N is checked once rudnn-specialize has chosen it.
  if (!count || !length || (packed && !offsets) || !chunk)
    return success();
  int64_t expected = llvm::divideCeil(*length, *chunk);
  if (packed)
    expected += *offsets;
  if (*count == expected)
    return success();
  InFlightDiagnostic diag =
      op->emitOpError() << "'" << name << "' dim 0 (chunks) is " << *count
                        << ", expected " << expected << " = ceil(T=" << *length
                        << " / chunk=" << *chunk << ")";
  if (packed)
    diag << " + S=" << *offsets - 1 << " + 1 (the packed chunk slots)";
  return diag;
}

LogicalResult mlir::rudnn::verifyKdaSavedTiles(Operation *op,
                                               const ShapeChecker &shapes,
                                               std::optional<uint64_t> chunk,
                                               Value q, bool packed) {
  if (!chunk)
    return success(); // checked once rudnn-specialize has chosen it
  if (failed(verifyKdaChunkCount(op, shapes, "tiles", chunk, packed)))
    return failure();
  std::optional<int64_t> featureK = shapes.lookup('K'),
                         featureV = shapes.lookup('V');
  if (!featureK || !featureV)
    return success(); // the contract has named the dynamic K or V
  const int64_t inputBytes =
      cast<ShapedType>(q.getType()).getElementTypeBitWidth() / 8;
  const int64_t expected = kdaSavedTileWords(static_cast<int64_t>(*chunk),
                                             *featureK, *featureV, inputBytes);
  std::optional<int64_t> words = shapes.lookup('W');
  if (!words || *words != expected) {
    InFlightDiagnostic diag =
        op->emitOpError() << "'tiles' dim 3 (W) must be " << expected
                          << " at K = " << *featureK << ", V = " << *featureV
                          << ", chunk " << *chunk << " and "
                          << cast<ShapedType>(q.getType()).getElementType()
                          << " inputs, got ";
    if (words)
      diag << *words;
    else
      diag << "a dynamic size";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// KdaOp
//===----------------------------------------------------------------------===//

/// W of the tiles a forward of these q and v (static K and V) saves at
/// `chunk`.
static int64_t savedTileWords(RankedTensorType q, RankedTensorType v,
                              int64_t chunk) {
  return kdaSavedTileWords(chunk, q.getDimSize(3), v.getDimSize(3),
                           q.getElementTypeBitWidth() / 8);
}

void KdaOp::build(OpBuilder &builder, OperationState &state, Value q, Value k,
                  Value v, Value g, Value beta, Value initialState,
                  bool saveBoundaries, int64_t saveTilesChunk) {
  auto queryType = cast<RankedTensorType>(q.getType());
  auto valueType = cast<RankedTensorType>(v.getType());
  // States have the value heads (q's may be fewer, grouped).
  int64_t batch = queryType.getDimSize(0), heads = valueType.getDimSize(2);
  int64_t featureDimK = queryType.getDimSize(3);
  int64_t featureDimV = valueType.getDimSize(3);
  Type f32 = builder.getF32Type();
  auto stateType =
      RankedTensorType::get({batch, heads, featureDimK, featureDimV}, f32);
  SmallVector<Type, 2> saved;
  if (saveBoundaries)
    saved.push_back(RankedTensorType::get(
        {ShapedType::kDynamic, batch, heads, featureDimK, featureDimV},
        queryType.getElementType()));
  IntegerAttr chunk;
  if (saveTilesChunk) {
    saved.push_back(RankedTensorType::get(
        {ShapedType::kDynamic, batch, heads,
         savedTileWords(queryType, valueType, saveTilesChunk)},
        f32));
    chunk = builder.getI64IntegerAttr(saveTilesChunk);
  }
  build(builder, state, valueType, stateType, saved, q, k, v, g, beta,
        initialState, /*a_log=*/Value(), /*dt_bias=*/Value(), chunk,
        /*scale=*/nullptr, saveBoundaries,
        /*save_tiles=*/saveTilesChunk != 0, /*grouped_heads=*/false,
        /*qk_l2norm=*/false, /*beta_logits=*/false,
        /*gate_lower_bound=*/nullptr, /*wgmma=*/nullptr);
}

/// output, final_state, then what the forward saves (null when not saved).
template <typename KdaLikeOp>
static Value forwardContractResult(KdaLikeOp op, unsigned index) {
  const Value results[] = {op.getOutput(), op.getFinalState(),
                           op.getBoundaries(), op.getTiles()};
  return index < std::size(results) ? results[index] : Value();
}

/// True when `attributes` set the unit attribute `name`.
static bool setsFlag(ArrayRef<NamedAttribute> attributes, StringRef name) {
  return llvm::any_of(attributes, [&](NamedAttribute a) {
    return a.getName() == name && isa<UnitAttr>(a.getValue());
  });
}

/// The saved tiles' type with its last dim (W) made what the chunk, K, V
/// and q's type fix, when the call left it to the operator.
static Type savedTilesType(Type tiles, ArrayRef<Value> operands,
                           ArrayRef<NamedAttribute> attributes) {
  auto type = cast<RankedTensorType>(tiles);
  const auto chunk = llvm::find_if(attributes, [](NamedAttribute a) {
    return a.getName() == "chunk" && isa<IntegerAttr>(a.getValue());
  });
  if (!type.isDynamicDim(3) || chunk == attributes.end() || operands.size() < 3)
    return type; // the verifier names what is missing
  auto q = cast<RankedTensorType>(operands[0].getType());
  auto v = cast<RankedTensorType>(operands[2].getType());
  if (q.isDynamicDim(3) || v.isDynamicDim(3))
    return type;
  SmallVector<int64_t> shape(type.getShape());
  shape[3] =
      savedTileWords(q, v, cast<IntegerAttr>(chunk->getValue()).getInt());
  return RankedTensorType::get(shape, type.getElementType());
}

/// A forward from its contract: output and final_state, then the saved
/// results its save_* flags ask for.
template <typename KdaLikeOp>
static Operation *
buildForwardFromContract(OpBuilder &builder, Location loc,
                         ArrayRef<Value> operands, ArrayRef<Type> results,
                         ArrayRef<NamedAttribute> attributes) {
  SmallVector<Type> kept(results.take_front(2));
  if (results.size() > 2 && setsFlag(attributes, "save_boundaries"))
    kept.push_back(results[2]);
  if (results.size() > 3 && setsFlag(attributes, "save_tiles"))
    kept.push_back(savedTilesType(results[3], operands, attributes));
  return buildByContractGroups(builder, loc, KdaLikeOp::getOperationName(),
                               operands, kept, attributes);
}

/// A backward from its contract: dq … dbeta, then the gradient of each of
/// initial_state, a_log and dt_bias that the call gives.
template <typename KdaBackwardLikeOp>
static Operation *
buildBackwardFromContract(OpBuilder &builder, Location loc,
                          const ::rudnn::OperatorContract &contract,
                          ArrayRef<Value> operands, ArrayRef<Type> results,
                          ArrayRef<NamedAttribute> attributes) {
  SmallVector<Type> kept(results.take_front(5));
  const char *inputs[] = {"initial_state", "a_log", "dt_bias"};
  for (auto [which, input] : llvm::enumerate(inputs)) {
    const int index = contract.operandIndex(input);
    if (index >= 0 && operands[index] && 5 + which < results.size())
      kept.push_back(results[5 + which]);
  }
  return buildByContractGroups(builder, loc,
                               KdaBackwardLikeOp::getOperationName(), operands,
                               kept, attributes);
}

const ::rudnn::OperatorContract &
KdaOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::kdaContract(call.integer("grouped_heads") != 0);
}
Operation *KdaOp::buildFromContract(OpBuilder &builder, Location loc,
                                    const ::rudnn::OperatorContract &,
                                    ArrayRef<Value> operands,
                                    ArrayRef<Type> results,
                                    ArrayRef<NamedAttribute> attributes) {
  return buildForwardFromContract<KdaOp>(builder, loc, operands, results,
                                         attributes);
}

const ::rudnn::OperatorContract &
KdaVarlenOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::kdaVarlenContract(call.integer("grouped_heads") != 0);
}
Operation *KdaVarlenOp::buildFromContract(OpBuilder &builder, Location loc,
                                          const ::rudnn::OperatorContract &,
                                          ArrayRef<Value> operands,
                                          ArrayRef<Type> results,
                                          ArrayRef<NamedAttribute> attributes) {
  return buildForwardFromContract<KdaVarlenOp>(builder, loc, operands, results,
                                               attributes);
}

const ::rudnn::OperatorContract &
KdaBackwardOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::kdaBackwardContract(call.integer("grouped_heads") != 0);
}
Operation *KdaBackwardOp::buildFromContract(
    OpBuilder &builder, Location loc, const ::rudnn::OperatorContract &contract,
    ArrayRef<Value> operands, ArrayRef<Type> results,
    ArrayRef<NamedAttribute> attributes) {
  return buildBackwardFromContract<KdaBackwardOp>(
      builder, loc, contract, operands, results, attributes);
}

const ::rudnn::OperatorContract &
KdaVarlenBackwardOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::kdaVarlenBackwardContract(call.integer("grouped_heads") != 0);
}
Operation *KdaVarlenBackwardOp::buildFromContract(
    OpBuilder &builder, Location loc, const ::rudnn::OperatorContract &contract,
    ArrayRef<Value> operands, ArrayRef<Type> results,
    ArrayRef<NamedAttribute> attributes) {
  return buildBackwardFromContract<KdaVarlenBackwardOp>(
      builder, loc, contract, operands, results, attributes);
}

const ::rudnn::OperatorContract &
KdaDecodeOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::kdaDecodeContract(call.integer("grouped_heads") != 0);
}

Value KdaOp::getContractResult(unsigned index) {
  return forwardContractResult(*this, index);
}

Value KdaVarlenOp::getContractResult(unsigned index) {
  return forwardContractResult(*this, index);
}

LogicalResult KdaOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)) || failed(verifyKdaSaved(*this)))
    return failure();
  return verifyKdaForward(
      *this,
      {getQ(), getK(), getV(), getG(), getBeta(), getInitialState(), getALog(),
       getDtBias()},
      [&](unsigned i) { return getContractResult(i); }, getGroupedHeads(),
      getTiles());
}

//===----------------------------------------------------------------------===//
// KdaVarlenOp, KdaBackwardOp, KdaVarlenBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult KdaVarlenOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)) || failed(verifyKdaSaved(*this)))
    return failure();
  return verifyKdaVarlenForward(
      *this, getGroupedHeads(),
      {getQ(), getK(), getV(), getG(), getBeta(), getCuSeqlens(),
       getInitialState(), getALog(), getDtBias()},
      {getOutput(), getFinalState(), getBoundaries(), getTiles()});
}

/// A backward's saved tensors: boundaries with the forward's chunk, tiles
/// only with them, each of the forward's chunk count (`packed`: slots).
template <typename KdaBackwardLikeOp>
static LogicalResult verifyKdaBackward(KdaBackwardLikeOp op, bool packed) {
  if (failed(verifyKdaInputTransforms(op)) ||
      failed(verifyOptionalGradients(op)))
    return failure();
  if (op.getTiles() && !op.getBoundaries())
    return op.emitOpError() << "'tiles' come with the forward's 'boundaries'";
  ShapeChecker shapes(op, kKdaStaticDims);
  if (failed(verifyOperatorContract(op, shapes)) ||
      failed(verifyKdaAttributes(op, op.getChunk(), op.getScaleAttr())))
    return failure();
  if (op.getBoundaries() && failed(verifyKdaChunkCount(op, shapes, "boundaries",
                                                       op.getChunk(), packed)))
    return failure();
  if (op.getTiles())
    return verifyKdaSavedTiles(op, shapes, op.getChunk(), op.getQ(), packed);
  return success();
}

LogicalResult KdaVarlenBackwardOp::verify() {
  return verifyKdaBackward(*this, /*packed=*/true);
}

LogicalResult KdaBackwardOp::verify() {
  return verifyKdaBackward(*this, /*packed=*/false);
}

//===----------------------------------------------------------------------===//
// KdaDecodeOp
//===----------------------------------------------------------------------===//

LogicalResult KdaDecodeOp::verify() {
  if (failed(verifyKdaInputTransforms(*this)))
    return failure();
  ShapeChecker shapes(*this, kKdaStaticDims);
  if (failed(verifyOperatorContract(*this, shapes)))
    return failure();
  return verifyKdaAttributes(*this, std::nullopt, getScaleAttr());
}

/// dq, dk, dv, dg, dbeta, then the gradients returned exactly when their
/// input is given.
template <typename KdaBackwardLikeOp>
static Value backwardContractResult(KdaBackwardLikeOp op, unsigned index) {
  if (index < 5)
    return op->getResult(index);
  return index < 8 ? op.optionalGradient(index - 5) : Value();
}

Value KdaBackwardOp::getContractResult(unsigned index) {
  return backwardContractResult(*this, index);
}

Value KdaVarlenBackwardOp::getContractResult(unsigned index) {
  return backwardContractResult(*this, index);
}
