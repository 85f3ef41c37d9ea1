//===- arch/emulated_hopper.cuh - sm_90 instructions on the host ----------===//
//
// Used by the wrappers under __RUDNN_EMULATION__ only: mbarriers with their
// arrival and transaction counts and phase parity, TMA box loads that read a
// tensor map the emulation backend encoded (rudnn_emu_tensor_map) and write
// the 128-byte swizzle on shared-memory address bits, and wgmma reading its
// operands through matrix descriptors exactly as the PTX ISA lays them out.
// wgmma is asynchronous as on the GPU: its accumulators hold poison from
// its issue until the wgmma_wait that retires its commit group, a wgmma
// not chained onto one in flight needs a wgmma_fence since the last wait,
// and in check mode its shared operands must not change before that wait.
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

RUDNN_EMU_UNWATCHED inline unsigned char *shared_at(unsigned long long offset,
                                                    size_t bytes) {
  const rudnn_emu_thread *thread = rudnn_emu_current();
  if (offset + bytes > thread->dynamicSharedBytes)
    rudnn_emu_trap("a shared-memory operand past the dynamic shared memory");
  return static_cast<unsigned char *>(thread->dynamicShared) + offset;
}

/// The 128-byte swizzle: bits 4-6 of a shared address XOR bits 7-9.
RUDNN_EMU_UNWATCHED inline unsigned long long
swizzle128(unsigned long long address) {
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
  unsigned long long bits() const {
    return expected | static_cast<unsigned long long>(pending) << 20 |
           (static_cast<unsigned long long>(transactions) & 0x7fffff) << 40 |
           static_cast<unsigned long long>(phase) << 63;
  }
  void store(unsigned long long *word) const {
    __atomic_store_n(word, bits(), __ATOMIC_SEQ_CST);
  }
  /// The phase completes when all arrived and every byte landed.
  void advance() {
    if (pending == 0 && transactions == 0) {
      phase ^= 1;
      pending = expected;
    }
  }
};

inline void requireBarrier(unsigned long long *barrier) {
  requireAligned(barrier, 8, "mbarrier: address not 8-byte aligned");
  requireShared(barrier, 8, "mbarrier: not in shared memory");
}

/// Traps unless `barrier` holds an mbarrier: shared memory starts with all
/// bits set (as garbage), and zeros are none either. The read is a plain
/// one, as mbarrier_init's write is: check mode reports a use that is not
/// ordered after the init (a missing __syncthreads) as a race.
inline void requireInitialised(unsigned long long *barrier,
                               const char *operation) {
  const unsigned long long bits = *barrier;
  if (bits == ~0ull || (bits & 0xfffff) == 0) {
    char message[160];
    snprintf(message, sizeof message, "%s: used before mbarrier.init",
             operation);
    rudnn_emu_trap(message);
  }
}

inline void mbarrier_init(unsigned long long *barrier, unsigned arrivals) {
  requireBarrier(barrier);
  if (arrivals < 1 || arrivals > 0xfffff)
    rudnn_emu_trap("mbarrier.init: arrival count out of range");
  *barrier = Mbarrier{arrivals, arrivals, 0, 0}.bits();
}

/// Arrives, announcing `bytes` more transaction bytes first.
inline void mbarrier_arrive(unsigned long long *barrier, unsigned bytes) {
  requireBarrier(barrier);
  requireInitialised(barrier, "mbarrier.arrive");
  rudnn_emu_detail::landAtSignal();
  Mbarrier state = Mbarrier::load(barrier);
  if (state.pending == 0)
    rudnn_emu_trap("mbarrier.arrive: more arrivals than the phase expects");
  rudnn_emu_detail::reportAsync(RUDNN_EMU_BARRIER_ARRIVED, nullptr, 0, barrier);
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
/// other threads first. A phase still waiting for bytes lands the boxes
/// completing on it (the latest moment they may land).
inline void mbarrier_wait(unsigned long long *barrier, unsigned parity) {
  requireBarrier(barrier);
  requireInitialised(barrier, "mbarrier.try_wait");
  rudnn_emu_detail::landAtSignal();
  for (;;) {
    const Mbarrier state = Mbarrier::load(barrier);
    if (state.phase != (parity & 1)) {
      rudnn_emu_detail::reportAsync(RUDNN_EMU_BARRIER_ACQUIRED, nullptr, 0,
                                    barrier);
      return;
    }
    if (!rudnn_emu_detail::landForWait(barrier))
      rudnn_emu_table()->poll(0);
  }
}

//===----------------------------------------------------------------------===//
// TMA
//===----------------------------------------------------------------------===//

/// The tensor map at `mapBytes`, checked against the instruction's rank.
inline rudnn_emu_tensor_map tensorMapOf(const void *mapBytes, int rank,
                                        const char *operation) {
  rudnn_emu_tensor_map map;
  std::memcpy(&map, mapBytes, sizeof map);
  char message[160];
  if (map.magic != RUDNN_EMU_TENSOR_MAP_MAGIC) {
    snprintf(message, sizeof message, "%s: not a tensor map", operation);
    rudnn_emu_trap(message);
  }
  if (static_cast<int>(map.rank) != rank) {
    snprintf(message, sizeof message,
             "%s: the instruction's rank is not the map's", operation);
    rudnn_emu_trap(message);
  }
  if (map.swizzleBytes != 0 && map.swizzleBytes != 128) {
    snprintf(message, sizeof message,
             "%s: only the 128-byte swizzle is emulated", operation);
    rudnn_emu_trap(message);
  }
  return map;
}

/// The bytes of one box of `map`.
inline unsigned long long boxBytes(const rudnn_emu_tensor_map &map) {
  unsigned long long elements = 1;
  for (unsigned d = 0; d < map.rank; ++d)
    elements *= map.box[d];
  return elements * map.elementBytes;
}

/// The box at `coords` of `map` against shared memory at `shared`:
/// `visit(at, global)` for each element, `at` its offset from the box's
/// start (innermost dim contiguous, swizzled as the map says, staying in
/// the box's bytes) and `global` its address, null outside the tensor.
/// The shared offset of a box of `map` at `shared`, which must be aligned
/// for its swizzle and inside the dynamic shared memory.
inline unsigned long long boxStart(const rudnn_emu_tensor_map &map,
                                   const void *shared, const char *operation) {
  const unsigned long long start = shared_offset(shared);
  if (start % (map.swizzleBytes == 128 ? 1024 : 128)) {
    char message[160];
    snprintf(message, sizeof message,
             "%s: shared memory misaligned for its swizzle", operation);
    rudnn_emu_trap(message);
  }
  shared_at(start, boxBytes(map));
  return start;
}

template <typename Visit>
inline void walkBox(const rudnn_emu_tensor_map &map, const int *coords,
                    const void *shared, const char *operation, Visit visit) {
  const unsigned long long start = boxStart(map, shared, operation);
  const int rank = static_cast<int>(map.rank);
  const unsigned size = map.elementBytes;
  const unsigned long long elements = boxBytes(map) / size;
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
    visit(to - start,
          inside ? reinterpret_cast<unsigned char *>(map.address + offset)
                 : nullptr);
  }
}

/// cp.async.bulk.tensor, global to shared: the box at `coords` of the map,
/// zeros outside the tensor, its bytes then completing on `barrier`. Read
/// now; the destination holds poison until the box lands, at a moment the
/// schedule chooses (rudnn_emu_async.h).
inline void tma_load(void *shared, const void *mapBytes, const int *coords,
                     int rank, unsigned long long *barrier) {
  const rudnn_emu_tensor_map map =
      tensorMapOf(mapBytes, rank, "cp.async.bulk.tensor");
  requireBarrier(barrier);
  requireInitialised(barrier, "cp.async.bulk.tensor");
  std::vector<unsigned char> image(boxBytes(map));
  const unsigned size = map.elementBytes;
  walkBox(map, coords, shared, "cp.async.bulk.tensor",
          [&](unsigned long long at, const unsigned char *global) {
            if (global)
              std::memcpy(&image[at], global, size);
          });
  auto *base = static_cast<unsigned char *>(shared);
  rudnn_emu_detail::engineWrite(base, nullptr, image.size()); // poison
  const int box = rudnn_emu_detail::reportAsync(RUDNN_EMU_BOX_ISSUED, base,
                                                image.size(), barrier);
  rudnn_emu_detail::blockAsync().boxes.push_back(
      {base, std::move(image), &mbarrier_complete_tx, barrier,
       rudnn_emu_current()->linear, box});
}

//===----------------------------------------------------------------------===//
// TMA stores: bulk groups of the issuing thread
//===----------------------------------------------------------------------===//

/// Performs `store` if it has not been: its shared source read now, its
/// global writes made.
inline void finishStore(rudnn_emu_detail::BulkStore &store) {
  if (store.done)
    return;
  const unsigned size = store.map.elementBytes;
  walkBox(store.map, store.coords, store.source, "cp.async.bulk.tensor",
          [&](unsigned long long at, unsigned char *global) {
            if (global)
              std::memcpy(global, store.source + at, size);
          });
  store.done = true;
}

/// The wait that retires `store`: in check mode its source must hold what
/// it held at issue (the engine may have read it at any moment since).
inline void retireStore(rudnn_emu_detail::BulkStore &store) {
#ifdef RUDNN_EMU_CHECK
  if (std::memcmp(store.atIssue.data(), store.source, store.atIssue.size()))
    rudnn_emu_trap("TMA store: its shared source changed between its issue "
                   "and the tma_store_wait that retires it");
#endif
  finishStore(store);
}

/// cp.async.bulk.tensor, shared to global (bulk_group completion): the box
/// at `coords` of the map from `shared`, elements outside the tensor not
/// written. An async-proxy read: threads' writes to `shared` need a
/// fence_proxy_async_shared first. The source is read, and global memory
/// written, at a moment the schedule chooses before the wait that retires
/// the store's group.
inline void tma_store(const void *mapBytes, const int *coords, int rank,
                      const void *shared) {
  rudnn_emu_detail::BulkStore store{
      tensorMapOf(mapBytes, rank, "cp.async.bulk.tensor (store)"),
      {},
      static_cast<const unsigned char *>(shared),
      {}};
  std::memcpy(store.coords, coords, sizeof(int) * rank);
  const unsigned long long bytes = boxBytes(store.map);
  boxStart(store.map, shared, "cp.async.bulk.tensor (store)");
  rudnn_emu_detail::reportAsync(RUDNN_EMU_ASYNC_READ, shared, bytes);
#ifdef RUDNN_EMU_CHECK
  store.atIssue.assign(store.source, store.source + bytes);
#endif
  const rudnn_emu_thread *thread = rudnn_emu_current();
  if (thread->schedule == RUDNN_EMU_SCHEDULE_FORWARD ||
      (thread->schedule == RUDNN_EMU_SCHEDULE_RANDOM &&
       rudnn_emu_detail::blockAsync().coin()))
    finishStore(store);
  rudnn_emu_detail::asyncCopies().openStores.push_back(std::move(store));
}

/// cp.async.bulk.commit_group: the stores issued since the last commit form
/// a group.
inline void tma_store_commit() {
  rudnn_emu_detail::AsyncCopies &copies = rudnn_emu_detail::asyncCopies();
  copies.storeGroups.push_back(std::move(copies.openStores));
  copies.openStores.clear();
}

/// cp.async.bulk.wait_group.read `pending`: every committed group but the
/// `pending` most recent has read its sources (and written global memory).
inline void tma_store_wait(unsigned pending) {
  rudnn_emu_detail::AsyncCopies &copies = rudnn_emu_detail::asyncCopies();
  while (copies.storeGroups.size() > pending) {
    for (rudnn_emu_detail::BulkStore &store : copies.storeGroups.front())
      retireStore(store);
    copies.storeGroups.pop_front();
  }
}

/// fence.proxy.async.shared::cta: this thread's shared-memory writes are
/// ordered before the async-proxy operations (wgmma, TMA stores) that come
/// after it.
inline void fence_proxy_async_shared() {
  rudnn_emu_detail::reportAsync(RUDNN_EMU_PROXY_FENCE);
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

/// setmaxnreg.inc / .dec to `registers` per thread, warpgroup-uniform. The
/// block's warpgroups share the registers the launch reserved (the kernel's
/// count per thread, from its launch bounds, times its threads): an
/// increase waits until the others' budgets leave room, as on the GPU,
/// where one that never can blocks forever (here the watchdog reports it).
/// An increase below or a decrease above the current budget traps.
inline void setmaxnreg(unsigned registers, bool increase) {
  const char *operation = increase ? "setmaxnreg.inc" : "setmaxnreg.dec";
  warpgroup_uniform(operation, registers);
  const rudnn_emu_thread *thread = rudnn_emu_current();
  const unsigned start = thread->registersPerThread;
  if (!start)
    return; // no launch bounds: ptxas ignores setmaxnreg (C7508)
  std::vector<unsigned> &budgets =
      rudnn_emu_detail::blockAsync().registerBudgets;
  const unsigned threads = blockDim.x * blockDim.y * blockDim.z;
  if (budgets.empty())
    budgets.assign(threads / 128, start);
  const unsigned group = thread->linear / 128;
  if (budgets[group] == registers)
    return; // another thread of the warpgroup set it
  if (increase ? registers < budgets[group] : registers > budgets[group]) {
    char message[200];
    snprintf(message, sizeof message,
             "%s to %u registers from the warpgroup's %u: an increase must "
             "not lower the budget, nor a decrease raise it",
             operation, registers, budgets[group]);
    rudnn_emu_trap(message);
  }
  const unsigned long long pool =
      static_cast<unsigned long long>(start) * threads;
  for (;;) {
    unsigned long long used = 128ull * registers;
    for (unsigned other = 0; other < budgets.size(); ++other)
      used += other == group ? 0 : 128ull * budgets[other];
    if (!increase || used <= pool)
      break;
    rudnn_emu_table()->poll(0);
    if (budgets[group] == registers)
      return;
  }
  budgets[group] = registers;
}

/// What a wgmma's operands hold (the bits WgmmaIssue::form keeps them in):
/// 16-bit halves or bfloat16s, 16 deep (m64nNk16), or fp32 read as TF32, 8
/// deep (m64nNk8, K-major only).
enum class WgmmaInput : unsigned { F16 = 0, Bf16 = 4, Tf32 = 32 };

/// The shared offset of element (r, c) of a 128-byte-swizzled operand of
/// `elementBytes` bytes named by `descriptor`: K-major, r the M or N index
/// and c the K index; MN-major (transposed, 16-bit only), r the K index and
/// c the M or N index.
RUDNN_EMU_UNWATCHED inline unsigned long long
descriptorOffset(unsigned long long descriptor, int r, int c, bool mnMajor,
                 int elementBytes = 2) {
  if (descriptor >> 62 != 1)
    rudnn_emu_trap("wgmma: only the 128-byte swizzle is emulated");
  const unsigned long long start = (descriptor & 0x3fff) << 4,
                           leading = (descriptor >> 16 & 0x3fff) << 4,
                           stride = (descriptor >> 32 & 0x3fff) << 4;
  unsigned long long address;
  if (!mnMajor) // ((8, m), k) : ((128 B, SBO), elementBytes)
    address = start + (r % 8) * 128 + (r / 8) * stride + c * elementBytes;
  else // ((64, n), (8, k)) : ((2 B, LBO), (128 B, SBO))
    address = start + (c % 64) * 2 + (c / 64) * leading + (r % 8) * 128 +
              (r / 8) * stride;
  return swizzle128(address);
}

/// The shared element at `offset` as the tensor cores read it: a 16-bit
/// value, or TF32's top 19 bits of an fp32 one (the low 13 are ignored).
RUDNN_EMU_UNWATCHED inline float elementAt(unsigned long long offset,
                                           WgmmaInput input) {
  if (input == WgmmaInput::Tf32) {
    unsigned bits;
    std::memcpy(&bits, shared_at(offset, 4), 4);
    return tf32Value(bits);
  }
  unsigned short bits;
  std::memcpy(&bits, shared_at(offset, 2), 2);
  return low(bits, input == WgmmaInput::Bf16);
}

/// What each thread of a warpgroup issues with a wgmma: the same
/// instruction and descriptors in all 128, each warp's A rows in its
/// registers.
struct WgmmaIssue {
  unsigned long long a, b;
  // 1: A from registers, 2: B transposed, 4: bf16, 8: accumulate (scale-d),
  // 16: A transposed, 32: TF32; the accumulator count (N / 2) from bit 8.
  unsigned form;
  unsigned registers[4];

  int count() const { return static_cast<int>(form >> 8); }
  WgmmaInput input() const {
    return WgmmaInput(form & (static_cast<unsigned>(WgmmaInput::Bf16) |
                              static_cast<unsigned>(WgmmaInput::Tf32)));
  }
  /// The instruction's K: 16, or TF32's 8.
  int depth() const { return input() == WgmmaInput::Tf32 ? 8 : 16; }
  int elementBytes() const { return input() == WgmmaInput::Tf32 ? 4 : 2; }
  /// The columns of B a thread's accumulators need.
  int columns() const { return count() / 2; }
};

/// The shared offset of element (m, k) of a shared A operand: K-major, or
/// MN-major when `transposed` (its rows the depth, M contiguous).
RUDNN_EMU_UNWATCHED inline unsigned long long
aOffset(const WgmmaIssue &issue, int m, int k, bool transposed) {
  return transposed
             ? descriptorOffset(issue.a, k, m, true)
             : descriptorOffset(issue.a, m, k, false, issue.elementBytes());
}

/// The shared offset of element (n, k) of B: K-major, or MN-major when
/// `transposed` (its rows the depth, N contiguous).
RUDNN_EMU_UNWATCHED inline unsigned long long
bOffset(const WgmmaIssue &issue, int n, int k, bool transposed) {
  return transposed
             ? descriptorOffset(issue.b, k, n, true)
             : descriptorOffset(issue.b, n, k, false, issue.elementBytes());
}

/// The most accumulators a thread holds: m64n256's 128.
constexpr int kMaxWgmmaAccumulators = 128;

/// One thread's operands of a wgmma: the 16 rows of A of its warp and the
/// columns of B its accumulators need (N / 4 of them), issue.depth() deep.
struct WgmmaOperands {
  float A[16][16];
  float B[kMaxWgmmaAccumulators / 2][16];
};

/// Each shared 16-byte chunk `visit(offset)` this thread's operands of
/// `issue` read, once.
template <typename Visit>
inline void forOperandChunks(const WgmmaIssue &issue, int warp, int lane,
                             Visit visit) {
  std::vector<unsigned long long> chunks;
  const bool transposedB = issue.form & 2, transposedA = issue.form & 16;
  // A's 16-byte chunks run along K (K-major) or along M (transposed).
  const int depth = issue.depth(), perChunk = 16 / issue.elementBytes();
  const int rStep = transposedA ? 8 : 1, kStep = transposedA ? 1 : perChunk;
  if (!(issue.form & 1))
    for (int r = 0; r < 16; r += rStep)
      for (int k = 0; k < depth; k += kStep)
        chunks.push_back(aOffset(issue, 16 * warp + r, k, transposedA));
  const int t = lane % 4;
  for (int column = 0; column < issue.columns(); ++column) {
    const int col = 8 * (column / 2) + 2 * t + column % 2;
    for (int k = 0; k < depth; ++k)
      chunks.push_back(bOffset(issue, col, k, transposedB));
  }
  for (unsigned long long &chunk : chunks)
    chunk &= ~15ull;
  std::sort(chunks.begin(), chunks.end());
  chunks.erase(std::unique(chunks.begin(), chunks.end()), chunks.end());
  for (unsigned long long chunk : chunks)
    visit(chunk);
}

/// Check mode: the wgmma's async-proxy reads of this thread's operand
/// elements, told to the executor 16 bytes at a time.
inline void reportOperandReads(const WgmmaIssue &issue, int warp, int lane) {
#ifdef RUDNN_EMU_CHECK
  forOperandChunks(issue, warp, lane, [](unsigned long long chunk) {
    rudnn_emu_detail::reportAsync(RUDNN_EMU_ASYNC_READ, shared_at(chunk, 16),
                                  16);
  });
#else
  (void)issue, (void)warp, (void)lane;
#endif
}

/// Reads the shared-memory operands `issue` names for this thread (A too
/// when it is not in registers).
RUDNN_EMU_UNWATCHED inline void readSharedOperands(WgmmaOperands &operands,
                                                   const WgmmaIssue &issue,
                                                   int warp, int lane) {
  const bool transposedB = issue.form & 2, transposedA = issue.form & 16;
  const WgmmaInput input = issue.input();
  if (!(issue.form & 1))
    for (int r = 0; r < 16; ++r)
      for (int k = 0; k < issue.depth(); ++k)
        operands.A[r][k] =
            elementAt(aOffset(issue, 16 * warp + r, k, transposedA), input);
  const int t = lane % 4;
  for (int column = 0; column < issue.columns(); ++column) {
    const int col = 8 * (column / 2) + 2 * t + column % 2;
    for (int k = 0; k < issue.depth(); ++k)
      operands.B[column][k] =
          elementAt(bOffset(issue, col, k, transposedB), input);
  }
}

/// values += A·B for this thread's `count` accumulators, `depth` deep,
/// summed as mma.sync's (mmaSum).
RUDNN_EMU_UNWATCHED inline void addProducts(float *values, int count, int depth,
                                            const WgmmaOperands &operands,
                                            int lane) {
  const int g = lane / 4;
  for (int i = 0; i < count; ++i) {
    const int row = g + 8 * (i % 4 / 2), column = 2 * (i / 4) + i % 2;
    values[i] =
        mmaSum(values[i], depth, operands.A[row], operands.B[column], 1);
  }
}

/// A wgmma issued and not yet retired by a wait_group. Its accumulators
/// hold poison (all bits set: NaN) from its issue until then; it adds to
/// the values they held at issue, or to the result of the wgmma before it
/// on the same accumulators (`chained`), which the hardware orders; or,
/// without scale-d, to nothing.
struct InFlightWgmma {
  InFlightWgmma() {} // issue fills what is read: no 5 KB of zeros first
  float *accumulators;
  bool chained;
  float input[kMaxWgmmaAccumulators];
  WgmmaIssue issue;
  WgmmaOperands operands; // as read at issue
};

/// A thread's wgmma groups: those issued since its last commit, then the
/// committed groups, oldest first; and whether a wgmma_fence came since it
/// last waited.
struct WgmmaGroups : rudnn_emu_detail::ThreadAsyncWork {
  std::vector<InFlightWgmma> open;
  std::deque<std::vector<InFlightWgmma>> committed;
  /// Retired groups' storage, reused by the next commits (a record is 5 KB:
  /// growing a fresh vector each group would move them again and again).
  std::vector<std::vector<InFlightWgmma>> spare;
  bool fenced = false;

  static WgmmaGroups &of(rudnn_emu_detail::AsyncCopies &copies) {
    if (!copies.wgmma)
      copies.wgmma = std::make_unique<WgmmaGroups>();
    return static_cast<WgmmaGroups &>(*copies.wgmma);
  }
  /// The latest wgmma in flight on `accumulators`, or null.
  InFlightWgmma *latestOn(const float *accumulators) {
    for (auto record = open.rbegin(); record != open.rend(); ++record)
      if (record->accumulators == accumulators)
        return &*record;
    for (auto group = committed.rbegin(); group != committed.rend(); ++group)
      for (auto record = group->rbegin(); record != group->rend(); ++record)
        if (record->accumulators == accumulators)
          return &*record;
    return nullptr;
  }
};

constexpr unsigned kPoison = 0xffffffffu;

inline WgmmaGroups &wgmmaGroups() {
  return WgmmaGroups::of(rudnn_emu_detail::asyncCopies());
}

/// wgmma.fence: this thread's register writes are ordered before the
/// wgmma it issues next.
inline void wgmma_fence() {
  warpgroup_uniform("wgmma.fence", 0);
  wgmmaGroups().fenced = true;
  rudnn_emu_detail::reportAsync(RUDNN_EMU_WGMMA_FENCE);
}

/// wgmma.commit_group: the wgmma issued since the last commit form a group
/// (possibly empty).
inline void wgmma_commit() {
  warpgroup_uniform("wgmma.commit_group", 0);
  WgmmaGroups &groups = wgmmaGroups();
  groups.committed.push_back(std::move(groups.open));
  groups.open.clear();
  if (!groups.spare.empty()) {
    groups.open.swap(groups.spare.back());
    groups.spare.pop_back();
  }
}

/// Check mode: whether the shared operands `record` read at its issue hold
/// other values now (the parts the issue read: A unless from registers,
/// B's columns this thread needs, each issue.depth() deep).
RUDNN_EMU_UNWATCHED inline bool
sharedOperandsChanged(const InFlightWgmma &record, int warp, int lane) {
  WgmmaOperands now;
  readSharedOperands(now, record.issue, warp, lane);
  const size_t row = record.issue.depth() * sizeof(float);
  if (!(record.issue.form & 1))
    for (int r = 0; r < 16; ++r)
      if (std::memcmp(now.A[r], record.operands.A[r], row) != 0)
        return true;
  for (int c = 0; c < record.issue.columns(); ++c)
    if (std::memcmp(now.B[c], record.operands.B[c], row) != 0)
      return true;
  return false;
}

/// wgmma.wait_group `pending`: retires every committed group but the
/// `pending` most recent, oldest first, each wgmma in issue order. In check
/// mode, a wgmma whose shared operands changed since its issue (a stage
/// released or overwritten before this wait) traps: the GPU may read them
/// at any point until now.
inline void wgmma_wait(unsigned pending) {
  warpgroup_uniform("wgmma.wait_group", pending);
  rudnn_emu_detail::reportAsync(RUDNN_EMU_WGMMA_WAIT);
  WgmmaGroups &groups = wgmmaGroups();
  const rudnn_emu_thread *thread = rudnn_emu_current();
  const int warp = static_cast<int>(thread->warp % 4),
            lane = static_cast<int>(thread->lane);
  while (groups.committed.size() > pending) {
    std::vector<InFlightWgmma> group = std::move(groups.committed.front());
    groups.committed.pop_front();
    for (size_t i = 0; i < group.size(); ++i) {
      InFlightWgmma &record = group[i];
#ifdef RUDNN_EMU_CHECK
      if (sharedOperandsChanged(record, warp, lane))
        rudnn_emu_trap("wgmma: its shared-memory operands changed between "
                       "its issue and the wgmma_wait that retires it (a "
                       "stage released or overwritten too early)");
#endif
      const int count = record.issue.count();
      float values[kMaxWgmmaAccumulators] = {};
      if (record.issue.form & 8)
        std::memcpy(values, record.input, count * sizeof(float));
      addProducts(values, count, record.issue.depth(), record.operands, lane);
      InFlightWgmma *next = nullptr;
      for (size_t j = i + 1; j < group.size() && !next; ++j)
        if (group[j].accumulators == record.accumulators)
          next = &group[j];
      for (auto later = groups.committed.begin();
           later != groups.committed.end() && !next; ++later)
        for (InFlightWgmma &other : *later)
          if (!next && other.accumulators == record.accumulators)
            next = &other;
      for (InFlightWgmma &other : groups.open)
        if (!next && other.accumulators == record.accumulators)
          next = &other;
      if (next) { // the next wgmma on them adds to this result
        std::memcpy(next->input, values, count * sizeof(float));
        next->chained = false;
        continue;
      }
      for (int e = 0; e < count; ++e) {
        unsigned bits;
        std::memcpy(&bits, &record.accumulators[e], sizeof bits);
        if (bits != kPoison) {
          char message[200];
          snprintf(message, sizeof message,
                   "wgmma: accumulator %d of a wgmma in flight was written "
                   "before the wgmma_wait that retires it (warp %u, lane %d)",
                   e, thread->warp, lane);
          rudnn_emu_trap(message);
        }
      }
      std::memcpy(record.accumulators, values, count * sizeof(float));
    }
    group.clear();
    groups.spare.push_back(std::move(group));
  }
  // Registers are read again before the next wgmma: it needs a fence.
  groups.fenced = false;
}

/// wgmma.mma_async m64nNk16 (m64nNk8 for TF32) with fp32 accumulators, for
/// this thread's `count` = N / 2 at `d`: A from `registers` (this warp's 16
/// rows, mma A layout) or, when null, from descriptor `a` (K-major); B from
/// descriptor `b`, MN-major when `transposedB`; added to d's values when
/// `accumulate` (scale-d). Asynchronous as on the GPU: `d` holds poison
/// until a wgmma_wait retires the group the wgmma is committed in.
inline void wgmma(float *d, int count, const unsigned *registers,
                  unsigned long long a, unsigned long long b, bool transposedA,
                  bool transposedB, WgmmaInput input, bool accumulate,
                  RUDNN_EMU_CALL_SITE) {
  if (input == WgmmaInput::Tf32 && (registers || transposedA || transposedB))
    rudnn_emu_trap("wgmma: TF32 takes both operands K-major from shared "
                   "memory");
  const bool bf16 = input == WgmmaInput::Bf16;
  const rudnn_emu_thread *thread = rudnn_emu_current();
  const int lane = static_cast<int>(thread->lane);
  const int warp = static_cast<int>(thread->warp % 4); // in the warpgroup
  WgmmaIssue mine = {registers ? 0 : a,
                     b,
                     (registers ? 1u : 0u) | (transposedB ? 2u : 0u) |
                         static_cast<unsigned>(input) | (accumulate ? 8u : 0u) |
                         (transposedA && !registers ? 16u : 0u) |
                         static_cast<unsigned>(count) << 8,
                     {}};
  if (registers)
    for (int i = 0; i < 4; ++i)
      mine.registers[i] = registers[i];
  WgmmaIssue all[128];
  rudnn_emu_warpgroup_exchange(&mine, all, sizeof mine,
                               RUDNN_EMU_SITE("wgmma"));
  for (const WgmmaIssue &other : all)
    if (other.a != mine.a || other.b != mine.b || other.form != mine.form)
      rudnn_emu_trap("wgmma: the threads of the warpgroup issue different "
                     "shapes, descriptors or forms (it is .sync.aligned: one "
                     "instruction for all 128)");
  WgmmaGroups &groups = wgmmaGroups();
  rudnn_emu_detail::reportAsync(RUDNN_EMU_WGMMA_READS, d,
                                count * sizeof(float));
  if (registers)
    rudnn_emu_detail::reportAsync(RUDNN_EMU_WGMMA_READS, registers,
                                  4 * sizeof(unsigned));
  const bool chained = groups.latestOn(d) != nullptr;
  // Only accumulators chained from the wgmma before them on the same ones
  // need no fence; A registers always do.
  if ((!chained || registers) && !groups.fenced)
    rudnn_emu_trap("wgmma: issued with no wgmma_fence since the "
                   "warpgroup last waited (or began): the writes to its "
                   "accumulator and A registers are not ordered before it");
  InFlightWgmma &record = groups.open.emplace_back(); // filled in place
  record.accumulators = d;
  record.issue = mine;
  record.chained = chained;
  if (!record.chained) {
    std::memcpy(record.input, d, count * sizeof(float));
    std::memset(d, 0xff, count * sizeof(float));
  }
  if (registers)
    for (int l = 0; l < 32; ++l) {
      const unsigned *fragment = all[32 * warp + l].registers;
      const int g = l / 4, t = l % 4;
      for (int half = 0; half < 2; ++half) {
        const int row = g + 8 * half;
        record.operands.A[row][2 * t] = low(fragment[half], bf16);
        record.operands.A[row][2 * t + 1] = high(fragment[half], bf16);
        record.operands.A[row][2 * t + 8] = low(fragment[2 + half], bf16);
        record.operands.A[row][2 * t + 9] = high(fragment[2 + half], bf16);
      }
    }
  reportOperandReads(mine, warp, lane);
  readSharedOperands(record.operands, mine, warp, lane);
}

} // namespace emulated
} // namespace arch
} // namespace rudnn

#endif // __RUDNN_EMULATION__
