//===- arch/emulated.cuh - The arch wrappers' instructions on the host ----===//
//
// Used by the wrappers under __RUDNN_EMULATION__ only. Warp-wide
// instructions gather every lane's operands through the executor's warp
// exchange and then let each lane pick out its own result, following the
// fragment layouts of the PTX ISA exactly, so a kernel that addresses
// fragments wrongly computes wrong results here as it would on a GPU.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace rudnn {
namespace arch {
namespace emulated {

constexpr unsigned kWarp = 0xffffffffu;

/// The tensor cores' own arithmetic on operands already gathered (and the
/// engines' reads of them, reported to the executor on their own): no load
/// or store of a CUDA thread that check mode must see, and each seen would
/// cost a call into the executor.
#define RUDNN_EMU_UNWATCHED __attribute__((no_sanitize("thread")))

/// The address must be aligned as the instruction demands; a GPU faults
/// with a misaligned address otherwise.
inline void requireAligned(const void *address, uintptr_t alignment,
                           const char *message) {
  if (reinterpret_cast<uintptr_t>(address) % alignment != 0)
    rudnn_emu_trap(message);
}

/// The instruction reads or writes shared memory only; a generic address
/// elsewhere faults on a GPU.
inline void requireShared(const void *address, size_t bytes,
                          const char *message) {
  if (!rudnn_emu_table()->isShared(address, bytes))
    rudnn_emu_trap(message);
}

/// mma and ldmatrix are .aligned: every lane of the warp executes the same
/// instruction; a missing lane (exited, diverged or absent in a partial
/// warp) makes them undefined on a GPU, and a trap here.
inline void requireWholeWarp(unsigned present, const char *operation) {
  if (present != kWarp) {
    char message[160];
    snprintf(message, sizeof message,
             "%s needs all 32 lanes of the warp; lanes 0x%08x took part",
             operation, present);
    rudnn_emu_trap(message);
  }
}

#ifdef RUDNN_EMU_CHECK
/// A model of tensor-core accumulation: the addends of a group (the running
/// sum and eight exact products) are aligned to the largest, truncated to
/// its 24-bit grid, summed without normalising in between, and the sum is
/// truncated to fp32. Round-to-nearest fp32 arithmetic is only one of the
/// results hardware of different generations gives; a kernel must not
/// depend on it.
RUDNN_EMU_UNWATCHED inline float truncatedSum(const double *terms, int count) {
  int largest = INT_MIN;
  double plain = 0;
  for (int i = 0; i < count; ++i) {
    plain += terms[i];
    if (terms[i] != 0)
      largest = std::max(largest, std::ilogb(terms[i]));
  }
  if (largest == INT_MIN || !std::isfinite(plain))
    return static_cast<float>(plain);
  const double quantum = std::ldexp(1.0, largest - 23);
  double sum = 0;
  for (int i = 0; i < count; ++i)
    sum += std::trunc(terms[i] / quantum) * quantum;
  float rounded = static_cast<float>(sum);
  if (std::fabs(static_cast<double>(rounded)) > std::fabs(sum))
    rounded = std::nextafter(rounded, 0.0f);
  return rounded;
}
#endif

RUDNN_EMU_UNWATCHED inline float low(unsigned pair, bool bf16) {
  unsigned short bits = static_cast<unsigned short>(pair & 0xffffu);
  return bf16 ? __bfloat162float(__ushort_as_bfloat16(bits))
              : __half2float(__ushort_as_half(bits));
}

RUDNN_EMU_UNWATCHED inline float high(unsigned pair, bool bf16) {
  return low(pair >> 16, bf16);
}

/// Every lane's operand registers of an mma.sync (m16n8k16: 2 halves a
/// register; m16n8k8.tf32: one TF32 value a register).
struct MmaOperands {
  unsigned a[4], b[2];
};

/// c + Σ_k a[k]·b[k·bStride] over `depth` products (a multiple of 8, each
/// exact in double), as the tensor cores sum an mma.sync's or a wgmma's:
/// rounded to fp32 once; check mode models the hardware's truncation, a
/// group of eight products at a time.
RUDNN_EMU_UNWATCHED inline float mmaSum(float c, int depth, const float *a,
                                        const float *b, int bStride) {
#ifdef RUDNN_EMU_CHECK
  float sum = c;
  for (int group = 0; group < depth; group += 8) {
    double terms[9] = {sum};
    for (int k = group; k < group + 8; ++k)
      terms[1 + k - group] = static_cast<double>(a[k]) * b[k * bStride];
    sum = truncatedSum(terms, 9);
  }
  return sum;
#else
  double sum = c;
  for (int k = 0; k < depth; ++k)
    sum += static_cast<double>(a[k]) * b[k * bStride];
  return static_cast<float>(sum);
#endif
}

/// One mma.sync of the warp at the caller's site: gathers every lane's
/// operands, then `results` (all, c, lane, result) gives this lane's four
/// accumulators. d may be c: the results are stored (where check mode sees
/// them) last.
template <typename Results>
inline void warpMma(float (&d)[4], const unsigned (&a)[4],
                    const unsigned (&b)[2], const float (&c)[4],
                    Results results, const char *rudnn_emu_file,
                    unsigned rudnn_emu_line) {
  const MmaOperands mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  MmaOperands all[32];
  requireWholeWarp(rudnn_emu_warp_exchange(kWarp, &mine, all,
                                           sizeof(MmaOperands),
                                           RUDNN_EMU_SITE("mma.sync")),
                   "mma.sync");
  float result[4];
  results(all, c, static_cast<int>(rudnn_emu_current()->lane), result);
  for (int i = 0; i < 4; ++i)
    d[i] = result[i];
}

/// mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32.
/// groupID g = lane / 4, threadID_in_group t = lane % 4:
///   A: a[0] (g, 2t..2t+1), a[1] (g+8, 2t..), a[2] (g, 2t+8..), a[3] (g+8,
///   2t+8..) B: b[0] (k 2t..2t+1, n g), b[1] (k 2t+8..2t+9, n g) C, D: [0], [1]
///   (g, 2t..2t+1), [2], [3] (g+8, 2t..2t+1)
/// The lower half of every register holds the element of smaller index.
/// Products of 16-bit operands are exact.
RUDNN_EMU_UNWATCHED inline void mmaResults(const MmaOperands (&all)[32],
                                           const float (&c)[4], int self,
                                           bool bf16, float (&result)[4]) {
  float A[16][16], B[16][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    const MmaOperands &o = all[lane];
    for (int half = 0; half < 2; ++half) {
      const int row = g + 8 * half;
      A[row][2 * t] = low(o.a[half], bf16);
      A[row][2 * t + 1] = high(o.a[half], bf16);
      A[row][2 * t + 8] = low(o.a[2 + half], bf16);
      A[row][2 * t + 9] = high(o.a[2 + half], bf16);
      B[2 * t + 8 * half][g] = low(o.b[half], bf16);
      B[2 * t + 8 * half + 1][g] = high(o.b[half], bf16);
    }
  }
  const int g = self / 4, t = self % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
    result[i] = mmaSum(c[i], 16, A[row], &B[0][col], 8);
  }
}

inline void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4],
                         const unsigned (&b)[2], const float (&c)[4], bool bf16,
                         RUDNN_EMU_CALL_SITE) {
  warpMma(
      d, a, b, c,
      [&](const MmaOperands(&all)[32], const float(&in)[4], int self,
          float(&result)[4]) { mmaResults(all, in, self, bf16, result); },
      rudnn_emu_file, rudnn_emu_line);
}

/// cvt.rna.tf32.f32: the nearest value with a 10-bit fraction, ties away
/// from zero, in a 32-bit register whose low 13 bits are zero. Infinities
/// pass unchanged and NaN stays NaN (a quiet one where its payload sat in
/// the low bits alone); a rounding past the largest finite value gives an
/// infinity, as the carry into the exponent does.
inline unsigned to_tf32(float value) {
  unsigned bits;
  memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) != 0x7f800000u)
    return (bits + 0x1000u) & ~0x1fffu;
  const unsigned kept = bits & ~0x1fffu;
  const bool nan = (bits & 0x007fffffu) != 0;
  return nan && (kept & 0x007fffffu) == 0 ? kept | 0x00400000u : kept;
}

/// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, g = lane / 4,
/// t = lane % 4: A: a[0] (g, t), a[1] (g+8, t), a[2] (g, t+4), a[3] (g+8,
/// t+4); B: b[0] (k t, n g), b[1] (k t+4, n g); C, D as m16n8k16's. The
/// tensor cores read 19 bits of each operand: the low 13 are ignored.
/// Products of 11-bit significands are exact.
RUDNN_EMU_UNWATCHED inline float tf32Value(unsigned bits) {
  bits &= ~0x1fffu;
  float value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

RUDNN_EMU_UNWATCHED inline void mmaTf32Results(const MmaOperands (&all)[32],
                                               const float (&c)[4], int self,
                                               float (&result)[4]) {
  float A[16][8], B[8][8];
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    const MmaOperands &o = all[lane];
    A[g][t] = tf32Value(o.a[0]);
    A[g + 8][t] = tf32Value(o.a[1]);
    A[g][t + 4] = tf32Value(o.a[2]);
    A[g + 8][t + 4] = tf32Value(o.a[3]);
    B[t][g] = tf32Value(o.b[0]);
    B[t + 4][g] = tf32Value(o.b[1]);
  }
  const int g = self / 4, t = self % 4;
  for (int i = 0; i < 4; ++i) {
    const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
    result[i] = mmaSum(c[i], 8, A[row], &B[0][col], 8);
  }
}

inline void mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4],
                             const unsigned (&b)[2], const float (&c)[4],
                             RUDNN_EMU_CALL_SITE) {
  warpMma(d, a, b, c, mmaTf32Results, rudnn_emu_file, rudnn_emu_line);
}

/// ldmatrix.sync.aligned.m8n8.x{Count}{.trans}.shared.b16. Lanes 8i..8i+7
/// address rows 0-7 of matrix i (only the first 8 * Count lanes count).
/// Register i of lane l holds, of matrix i, row l / 4 and columns
/// 2 (l % 4), 2 (l % 4) + 1; with .trans, column l / 4 and rows
/// 2 (l % 4), 2 (l % 4) + 1. The element of smaller index is the low half.
template <int Count, bool Transposed>
inline void ldmatrix(unsigned *r, const void *row, RUDNN_EMU_CALL_SITE) {
  const int lane = static_cast<int>(rudnn_emu_current()->lane);
  // Each addressing lane reads its row as the warp meets, and the warp
  // exchanges the rows' contents: a lane that writes its row afterwards
  // cannot change what the others load, as on the GPU.
  struct Row {
    unsigned char bytes[16];
  } mine = {}, rows[32];
  if (lane < 8 * Count) {
    requireAligned(row, 16, "ldmatrix: row address not 16-byte aligned");
    requireShared(row, 16, "ldmatrix: row address is not shared memory");
    std::memcpy(mine.bytes, row, 16);
  }
  requireWholeWarp(rudnn_emu_warp_exchange(kWarp, &mine, rows, sizeof mine,
                                           RUDNN_EMU_SITE("ldmatrix")),
                   "ldmatrix");

  auto element = [&](int matrix, int r16, int c16) {
    uint16_t value;
    std::memcpy(&value, rows[8 * matrix + r16].bytes + 2 * c16, 2);
    return static_cast<unsigned>(value);
  };
  const int group = lane / 4, pair = 2 * (lane % 4);
  for (int i = 0; i < Count; ++i)
    r[i] = Transposed
               ? element(i, pair, group) | element(i, pair + 1, group) << 16
               : element(i, group, pair) | element(i, group, pair + 1) << 16;
}

} // namespace emulated
} // namespace arch
} // namespace rudnn

#endif // __RUDNN_EMULATION__
