//===- LstmBindings.h - How the LSTM's kernels bind their views -*- C++ -*-===//
//
// The bindings every LSTM kernel makes alike (sequences, per-layer states,
// one weight per direction), and the backward's primitives.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_EMIT_LSTM_LSTMBINDINGS_H
#define RUDNN_CODEGEN_EMIT_LSTM_LSTMBINDINGS_H

#include "codegen/Emit/KernelBuilder.h"

#include "mlir/IR/DialectRegistry.h"

namespace rudnn::codegen::lstm {

/// Binds a [T, B, F] (or batch-first [B, T, F]) view's time and batch
/// strides as `<name>_t` and `<name>_b`; returns "{name_t, name_b}".
inline std::string bindSequence(KernelBuilder &builder, mlir::Value value,
                                const std::string &name, bool batchFirst) {
  const std::string t = name + "_t", b = name + "_b";
  builder.strides(value, batchFirst ? std::vector{b, t} : std::vector{t, b});
  return "{" + t + ", " + b + "}";
}

/// Binds an [L·D, B, H] view's strides; returns "{name_n, name_b}".
inline std::string bindStates(KernelBuilder &builder, mlir::Value value,
                              const std::string &name) {
  builder.strides(value, {name + "_n", name + "_b"});
  return "{" + name + "_n, " + name + "_b}";
}

/// Binds one pointer a direction (null for a missing second); returns
/// "{name0, name1}".
inline std::string bindDirections(KernelBuilder &builder,
                                  mlir::ValueRange values,
                                  const std::string &name,
                                  const std::string &type,
                                  bool writable = false) {
  std::string list = "{";
  for (int d = 0; d < 2; ++d)
    list += (d ? ", " : "") +
            builder.pointer(d < int(values.size()) ? values[d] : mlir::Value(),
                            name + std::to_string(d), type, writable);
  return list + "}";
}

/// Binds each direction's row stride; returns "{name0_row, name1_row}".
inline std::string bindRows(KernelBuilder &builder, mlir::ValueRange values,
                            const std::string &name) {
  std::string list = "{";
  for (int d = 0; d < 2; ++d) {
    const std::string row = name + std::to_string(d) + "_row";
    builder.strides(d < int(values.size()) ? values[d] : mlir::Value(), {row});
    list += (d ? ", " : "") + row;
  }
  return list + "}";
}

/// The device type of a primitive's `cell` ("lstm" or "gru").
inline std::string cellType(llvm::StringRef cell) {
  return cell == "gru" ? "rudnn::lstm::GruCell" : "rudnn::lstm::LstmCell";
}

/// The tiled GEMM's traffic beyond its operands once: each Rows x Cols
/// block tile reads Rows + Cols rows of the depth through L2, rows other
/// tiles read too (2RC / ((R + C)·bytes) FLOPs a byte); and, on tensor
/// cores (16-bit operands), what it reads from shared memory: a warp's 32
/// x 32 tile 64 rows a 16-deep step (mma.sync), a warpgroup's 64 x 128 one
/// 192 (wgmma).
inline void modelTileTraffic(KernelLaunch &launch, int64_t rows, int64_t cols,
                             int64_t elementBytes, bool wgmma = false) {
  launch.flopsPerL2Byte = 2 * rows * cols / ((rows + cols) * elementBytes);
  if (elementBytes == 2)
    launch.flopsPerSharedByte =
        wgmma ? 2 * 64 * 128 / ((64 + 128) * 2) : 2 * 32 * 32 / (64 * 2);
}

/// Attaches the backward's primitives (LstmBackwardPrimitives.cpp).
void attachBackwardPrimitives(mlir::DialectRegistry &registry);

} // namespace rudnn::codegen::lstm

#endif // RUDNN_CODEGEN_EMIT_LSTM_LSTMBINDINGS_H
