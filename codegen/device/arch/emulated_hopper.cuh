//===- arch/emulated_hopper.cuh - sm_90 instructions on the host ----------===//
//
// Used by the wrappers under __RUDNN_EMULATION__ only: mbarriers with their
// arrival and transaction counts and phase parity, TMA box loads that read a
// tensor map the emulation backend encoded (rudnn_emu_tensor_map) and write
// the 128-byte swizzle on shared-memory address bits, and wgmma reading its
// operands through matrix descriptors exactly as the PTX ISA lays them out.
// Shared-memory addresses are offsets from the block's dynamic shared
// memory, so a kernel aligns its tiles to 1024 bytes as on a GPU.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__

#include "rudnn/arch/emulated.cuh"

namespace rudnn {
namespace arch {
namespace emulated {

/// The shared-window address of `pointer`: its offset in the block's
/// dynamic shared memory.
inline unsigned long long shared_offset(const void *pointer) {
  const rudnn_emu_thread *thread = rudnn_emu_current();
  const char *base = static_cast<const char *>(thread->dynamicShared);
  const char *at = static_cast<const char *>(pointer);
  if (at < base || at >= base + thread->dynamicSharedBytes)
    rudnn_emu_trap("a shared-memory operand outside the dynamic shared "
                   "memory");
  return static_cast<unsigned long long>(at - base);
}

inline unsigned char *shared_at(unsigned long long offset, size_t bytes) {
  const rudnn_emu_thread *thread = rudnn_emu_current();
  if (offset + bytes > thread->dynamicSharedBytes)
    rudnn_emu_trap("a shared-memory operand past the dynamic shared memory");
  return static_cast<unsigned char *>(thread->dynamicShared) + offset;
}

/// The 128-byte swizzle: bits 4-6 of a shared address XOR bits 7-9.
inline unsigned long long swizzle128(unsigned long long address) {
  return address ^ ((address >> 7) & 7) << 4;
}

//===----------------------------------------------------------------------===//
// mbarrier: expected arrivals (bits 0-19), pending arrivals (20-39), the
// transaction count (40-62, two's complement) and the phase (63).
//===----------------------------------------------------------------------===//

struct Mbarrier {
  unsigned expected, pending;
  long long transactions;
  unsigned phase;

  static Mbarrier load(unsigned long long *word) {
    const unsigned long long bits = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    long long transactions = static_cast<long long>(bits >> 40 & 0x7fffff);
    if (transactions & 0x400000)
      transactions -= 0x800000;
    return {static_cast<unsigned>(bits & 0xfffff),
            static_cast<unsigned>(bits >> 20 & 0xfffff), transactions,
            static_cast<unsigned>(bits >> 63)};
  }
  void store(unsigned long long *word) const {
    const unsigned long long bits =
        expected | static_cast<unsigned long long>(pending) << 20 |
        (static_cast<unsigned long long>(transactions) & 0x7fffff) << 40 |
        static_cast<unsigned long long>(phase) << 63;
    __atomic_store_n(word, bits, __ATOMIC_SEQ_CST);
  }
  /// The phase completes when all arrived and every byte landed.
  void advance() {
    if (pending == 0 && transactions == 0) {
      phase ^= 1;
      pending = expected;
    }
  }
};

inline void landBulkCopies();

inline void requireBarrier(unsigned long long *barrier) {
  requireAligned(barrier, 8, "mbarrier: address not 8-byte aligned");
  requireShared(barrier, 8, "mbarrier: not in shared memory");
}

inline void mbarrier_init(unsigned long long *barrier, unsigned arrivals) {
  requireBarrier(barrier);
  if (arrivals < 1 || arrivals > 0xfffff)
    rudnn_emu_trap("mbarrier.init: arrival count out of range");
  Mbarrier{arrivals, arrivals, 0, 0}.store(barrier);
}

/// Arrives, announcing `bytes` more transaction bytes first.
inline void mbarrier_arrive(unsigned long long *barrier, unsigned bytes) {
  requireBarrier(barrier);
  landBulkCopies();
  Mbarrier state = Mbarrier::load(barrier);
  if (state.expected == 0)
    rudnn_emu_trap("mbarrier: used before mbarrier.init");
  if (state.pending == 0)
    rudnn_emu_trap("mbarrier.arrive: more arrivals than the phase expects");
  state.transactions += bytes;
  state.pending -= 1;
  state.advance();
  state.store(barrier);
}

/// The TMA unit's side: `bytes` have landed (the barrier checked when the
/// copy was issued).
inline void mbarrier_complete_tx(unsigned long long *barrier,
                                 unsigned bytes) noexcept {
  Mbarrier state = Mbarrier::load(barrier);
  state.transactions -= bytes;
  state.advance();
  state.store(barrier);
}

/// Waits until the phase of parity `parity` has completed (the current
/// phase has the other parity), polling: the executor runs the block's
/// other threads first.
inline void mbarrier_wait(unsigned long long *barrier, unsigned parity) {
  requireBarrier(barrier);
  landBulkCopies();
  for (;;) {
    const Mbarrier state = Mbarrier::load(barrier);
    if (state.expected == 0)
      rudnn_emu_trap("mbarrier: used before mbarrier.init");
    if (state.phase != (parity & 1))
      return;
    rudnn_emu_table()->poll(0);
  }
}

//===----------------------------------------------------------------------===//
// TMA
//===----------------------------------------------------------------------===//

/// cp.async.bulk.tensor: the box at `coords` of the map, innermost dim
/// contiguous in shared memory, zeros outside the tensor, its bytes then
/// completing on `barrier`. Read now; the destination holds poison until
/// the issuing thread's next mbarrier operation or its end lands it
/// (rudnn_emu_async.h).
inline void tma_load(void *shared, const void *mapBytes, const int *coords,
                     int rank, unsigned long long *barrier) {
  rudnn_emu_tensor_map map;
  std::memcpy(&map, mapBytes, sizeof map);
  if (map.magic != RUDNN_EMU_TENSOR_MAP_MAGIC)
    rudnn_emu_trap("cp.async.bulk.tensor: not a tensor map");
  if (static_cast<int>(map.rank) != rank)
    rudnn_emu_trap("cp.async.bulk.tensor: the instruction's rank is not the "
                   "map's");
  requireBarrier(barrier);
  if (Mbarrier::load(barrier).expected == 0)
    rudnn_emu_trap("cp.async.bulk.tensor: its mbarrier is not initialised");
  const unsigned long long start = shared_offset(shared);
  if (start % (map.swizzleBytes == 128 ? 1024 : 128))
    rudnn_emu_trap("cp.async.bulk.tensor: shared destination misaligned for "
                   "its swizzle");
  if (map.swizzleBytes != 0 && map.swizzleBytes != 128)
    rudnn_emu_trap("cp.async.bulk.tensor: only the 128-byte swizzle is "
                   "emulated");
  unsigned long long elements = 1;
  for (int d = 0; d < rank; ++d)
    elements *= map.box[d];
  const unsigned size = map.elementBytes;
  unsigned char *base = shared_at(start, elements * size);
  // Swizzling permutes 16-byte chunks within each 128-byte row: the box
  // stays in [start, start + its bytes).
  std::vector<unsigned char> image(elements * size);
  for (unsigned long long index = 0; index < elements; ++index) {
    unsigned long long rest = index, offset = 0;
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      const long long at = static_cast<long long>(coords[d]) +
                           static_cast<long long>(rest % map.box[d]);
      rest /= map.box[d];
      if (at < 0 || at >= static_cast<long long>(map.dims[d]))
        inside = false;
      else
        offset += d == 0 ? at * size : at * map.strideBytes[d - 1];
    }
    unsigned long long to = start + index * size;
    if (map.swizzleBytes == 128)
      to = swizzle128(to);
    if (inside)
      std::memcpy(&image[to - start],
                  reinterpret_cast<const void *>(map.address + offset), size);
  }
  rudnn_emu_detail::engineWrite(base, nullptr, image.size()); // poison
  rudnn_emu_detail::asyncCopies().bulk.push_back(
      {base, std::move(image), &mbarrier_complete_tx, barrier});
}

/// The thread's TMA boxes land before it signals or waits.
inline void landBulkCopies() {
  if (rudnn_emu_current()->asyncCopies)
    rudnn_emu_detail::landBulkCopies(rudnn_emu_detail::asyncCopies());
}

//===----------------------------------------------------------------------===//
// wgmma
//===----------------------------------------------------------------------===//

/// wgmma.fence, commit_group, wait_group and setmaxnreg are .sync.aligned
/// over the warpgroup: all 128 threads at one call site, with one
/// `operand` (the groups left pending, the register budget).
inline void warpgroup_uniform(const char *operation, unsigned operand,
                              RUDNN_EMU_CALL_SITE) {
  unsigned all[128];
  rudnn_emu_warpgroup_exchange(&operand, all, sizeof operand,
                               RUDNN_EMU_SITE(operation));
  for (unsigned other : all)
    if (other != operand) {
      char message[160];
      snprintf(message, sizeof message,
               "%s: the warpgroup's threads give it different operands "
               "(%u and %u)",
               operation, operand, other);
      rudnn_emu_trap(message);
    }
}

/// The 16-bit element (r, c) of a 128-byte-swizzled operand named by
/// `descriptor`: K-major, r the M or N index and c the K index; MN-major
/// (transposed), r the K index and c the M or N index.
inline float descriptorElement(unsigned long long descriptor, int r, int c,
                               bool mnMajor, bool bf16) {
  if (descriptor >> 62 != 1)
    rudnn_emu_trap("wgmma: only the 128-byte swizzle is emulated");
  const unsigned long long start = (descriptor & 0x3fff) << 4,
                           leading = (descriptor >> 16 & 0x3fff) << 4,
                           stride = (descriptor >> 32 & 0x3fff) << 4;
  unsigned long long address;
  if (!mnMajor) // ((8, m), (8, 2k)) : ((128 B, SBO), (2 B, 16 B))
    address = start + (r % 8) * 128 + (r / 8) * stride + c * 2;
  else // ((64, n), (8, k)) : ((2 B, LBO), (128 B, SBO))
    address = start + (c % 64) * 2 + (c / 64) * leading + (r % 8) * 128 +
              (r / 8) * stride;
  unsigned short bits;
  std::memcpy(&bits, shared_at(swizzle128(address), 2), 2);
  return low(bits, bf16);
}

/// wgmma.mma_async m64n64k16 with fp32 accumulators, for this thread's 32:
/// A from `registers` (this warp's 16 rows, mma A layout) or, when null,
/// from descriptor `a` (K-major); B from descriptor `b`, MN-major when
/// `transposedB`.
inline void wgmma_m64n64k16(float (&d)[32], const unsigned *registers,
                            unsigned long long a, unsigned long long b,
                            bool transposedB, bool bf16, RUDNN_EMU_CALL_SITE) {
  const rudnn_emu_thread *thread = rudnn_emu_current();
  const int lane = static_cast<int>(thread->lane);
  const int warp = static_cast<int>(thread->warp % 4); // in the warpgroup
  // What each thread of the warpgroup issues: the same instruction and
  // descriptors in all 128, each warp's A rows in its registers.
  struct Issue {
    unsigned long long a, b;
    unsigned form; // A from registers, B transposed, bf16
    unsigned registers[4];
  };
  Issue mine = {registers ? 0 : a,
                b,
                (registers ? 1u : 0u) | (transposedB ? 2u : 0u) |
                    (bf16 ? 4u : 0u),
                {}};
  if (registers)
    for (int i = 0; i < 4; ++i)
      mine.registers[i] = registers[i];
  Issue all[128];
  rudnn_emu_warpgroup_exchange(&mine, all, sizeof mine,
                               RUDNN_EMU_SITE("wgmma"));
  for (const Issue &other : all)
    if (other.a != mine.a || other.b != mine.b || other.form != mine.form)
      rudnn_emu_trap("wgmma: the threads of the warpgroup issue different "
                     "descriptors or forms (it is .sync.aligned: one "
                     "instruction for all 128)");
  float A[16][16];
  if (registers) {
    for (int l = 0; l < 32; ++l) {
      const unsigned *fragment = all[32 * warp + l].registers;
      const int g = l / 4, t = l % 4;
      for (int half = 0; half < 2; ++half) {
        const int row = g + 8 * half;
        A[row][2 * t] = low(fragment[half], bf16);
        A[row][2 * t + 1] = high(fragment[half], bf16);
        A[row][2 * t + 8] = low(fragment[2 + half], bf16);
        A[row][2 * t + 9] = high(fragment[2 + half], bf16);
      }
    }
  } else {
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < 16; ++k)
        A[r][k] = descriptorElement(a, 16 * warp + r, k, false, bf16);
  }
  const int g = lane / 4, t = lane % 4;
  // B's 16 columns this lane's accumulators need, read once.
  float B[16][16];
  for (int column = 0; column < 16; ++column) {
    const int col = 8 * (column / 2) + 2 * t + column % 2;
    for (int k = 0; k < 16; ++k)
      B[column][k] = transposedB ? descriptorElement(b, k, col, true, bf16)
                                 : descriptorElement(b, col, k, false, bf16);
  }
  float result[32];
  for (int i = 0; i < 32; ++i) {
    const int row = g + 8 * (i % 4 / 2), column = 2 * (i / 4) + i % 2;
    double products[16];
    for (int k = 0; k < 16; ++k)
      products[k] = static_cast<double>(A[row][k]) * B[column][k];
#ifdef RUDNN_EMU_CHECK
    float sum = d[i];
    for (int group = 0; group < 2; ++group) {
      double terms[9] = {sum};
      for (int k = 0; k < 8; ++k)
        terms[1 + k] = products[8 * group + k];
      sum = truncatedSum(terms, 9);
    }
    result[i] = sum;
#else
    double sum = d[i];
    for (int k = 0; k < 16; ++k)
      sum += products[k];
    result[i] = static_cast<float>(sum);
#endif
  }
  for (int i = 0; i < 32; ++i)
    d[i] = result[i];
}

} // namespace emulated
} // namespace arch
} // namespace rudnn

#endif // __RUDNN_EMULATION__
