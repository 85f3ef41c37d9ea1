/*===- rudnn_emu_abi.h - Emulated kernels <-> the CPU SIMT executor -------===*\
|*                                                                            *|
|* Plain C, shared by the executor (compiled into rudnn) and every emulated   *|
|* kernel (compiled by the host compiler into a shared object). The kernel    *|
|* object exports                                                             *|
|*   int  rudnn_emu_bind(const rudnn_emu_host *host);   (returns ABI version) *|
|*   void rudnn_emu_set_current(rudnn_emu_thread *thread);                    *|
|*   void rudnn_emu_entry_<kernel>(void **args);        (one per kernel)      *|
|* The executor calls rudnn_emu_set_current before resuming each CUDA thread  *|
|* (a fiber), so device code reads its indices without calling back; the      *|
|* variable it sets lives in the thread-slot library (loaded first, global),  *|
|* rudnn_emu_thread_slot.cpp.                                                 *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/

#ifndef RUDNN_EMU_ABI_H
#define RUDNN_EMU_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RUDNN_EMU_ABI_VERSION 13

typedef struct rudnn_emu_dim3 {
  unsigned x, y, z;
} rudnn_emu_dim3;

/* A block's asynchronous work that outlives the thread issuing it (TMA
 * boxes in flight): device code's, null at the block's start. The executor
 * calls `end(work)` once the block has ended, however it ended. */
typedef struct rudnn_emu_block_async {
  void *work;
  void (*end)(void *work);
} rudnn_emu_block_async;

/* In which order the asynchronous engines finish what they were given
 * between its issue and the wait that needs it: as early as they may
 * (forward), as late as they may (reverse), or at moments drawn from
 * `scheduleSeed` (random), with the executor's schedule of the same name. */
enum {
  RUDNN_EMU_SCHEDULE_FORWARD = 0,
  RUDNN_EMU_SCHEDULE_REVERSE = 1,
  RUDNN_EMU_SCHEDULE_RANDOM = 2
};

/* One CUDA thread, as the executor runs it. */
typedef struct rudnn_emu_thread {
  rudnn_emu_dim3 threadIdx, blockIdx, blockDim, gridDim;
  unsigned linear; /* threadIdx.x + blockDim.x * (threadIdx.y + ...) */
  unsigned lane;   /* linear % 32 */
  unsigned warp;   /* linear / 32 */
  void *dynamicShared;
  size_t dynamicSharedBytes;
  /* The thread's cp.async copies in flight: device code's, null at start. */
  void *asyncCopies;
  /* Its block's (the same for every thread of the block). */
  rudnn_emu_block_async *blockAsync;
  unsigned schedule;
  uint64_t scheduleSeed; /* per block */
  /* The registers each thread starts with, as ptxas gives a kernel with
   * __launch_bounds__ that sets register budgets (setmaxnreg); 0 unknown. */
  unsigned registersPerThread;
  /* Check mode: the thread's stack [stackBegin, stackEnd), where its
   * registers live, and whether the executor watches writes there (from a
   * wgmma fence to the next wait); the hooks pass it no other access of
   * the stack. */
  uintptr_t stackBegin, stackEnd;
  int watchStackWrites;
  /* Check mode: addresses the executor found to hold nothing it watches
   * (no allocation, no shared memory, not this thread's stack, such as the
   * emulator's own bookkeeping): the hooks pass no access there on. */
  uintptr_t unwatchedBegin, unwatchedEnd;
} rudnn_emu_thread;

/* __syncthreads variants. */
enum {
  RUDNN_EMU_SYNC_PLAIN = 0,
  RUDNN_EMU_SYNC_COUNT = 1,
  RUDNN_EMU_SYNC_AND = 2,
  RUDNN_EMU_SYNC_OR = 3
};

/* Where a collective operation was called: the executor matches the
 * participants of a barrier or warp operation by operation and, in check
 * mode, by call site. */
typedef struct rudnn_emu_site {
  const char *operation; /* "__syncthreads", "__shfl_sync", "mma", ... */
  const char *file;
  unsigned line;
} rudnn_emu_site;

/* Kinds of memory access reported in check mode. Atomics are checked for
 * bounds only: they never race with each other. */
enum { RUDNN_EMU_READ = 0, RUDNN_EMU_WRITE = 1, RUDNN_EMU_ATOMIC = 2 };

/* Check mode: what the asynchronous engines do to shared memory, reported
 * to the executor's shadow (rudnn_emu_host.asyncAccess). */
enum {
  /* A TMA box will land on [address, +bytes), completing on `barrier`:
   * until it lands, any thread's access to those bytes races. Returns the
   * box's id. */
  RUDNN_EMU_BOX_ISSUED = 0,
  /* Box `box` landed: a thread may access its bytes only once it has waited
   * on the box's barrier since (or a __syncthreads came between). */
  RUDNN_EMU_BOX_LANDED = 1,
  /* The running thread's wait on `barrier` saw its phase complete: the
   * boxes landed on it and the accesses of the threads that arrived on it
   * are ordered before the thread's later accesses. */
  RUDNN_EMU_BARRIER_ACQUIRED = 2,
  /* The running thread executed fence.proxy.async.shared::cta. */
  RUDNN_EMU_PROXY_FENCE = 3,
  /* An async-proxy operation the running thread issued (wgmma, a TMA store)
   * reads [address, +bytes): what threads wrote there must have been
   * fenced by its writer, and a TMA box there must be landed and waited
   * for. */
  RUDNN_EMU_ASYNC_READ = 4,
  /* The running thread arrived on `barrier` (a release). */
  RUDNN_EMU_BARRIER_ARRIVED = 5,
  /* The running thread executed wgmma.fence: until its next wgmma.wait,
   * what it writes outside shared and global memory (its registers) is
   * noted, and a wgmma reading any of it is reported. */
  RUDNN_EMU_WGMMA_FENCE = 6,
  /* A wgmma the running thread issues reads its registers at [address,
   * +bytes) (accumulators, A fragment). */
  RUDNN_EMU_WGMMA_READS = 7,
  /* The running thread executed wgmma.wait_group. */
  RUDNN_EMU_WGMMA_WAIT = 8
};

/* A TMA tensor map as the emulation backend encodes it, in the 128 bytes of
 * a CUtensorMap: what cuTensorMapEncodeTiled was given. */
#define RUDNN_EMU_TENSOR_MAP_MAGIC 0x70616d726f736e65ull /* "ensormap" */
typedef struct rudnn_emu_tensor_map {
  uint64_t magic;
  uint64_t address;
  uint64_t dims[5];        /* innermost first */
  uint64_t strideBytes[4]; /* of dims 1 and up */
  uint32_t box[5];
  uint32_t rank, elementBytes, swizzleBytes;
} rudnn_emu_tensor_map;

typedef struct rudnn_emu_host {
  uint32_t abiVersion;
  /* Block barrier. Every live thread of the block must arrive; returns the
   * count / and / or of `predicate` over the block for the non-plain modes.
   * A barrier some thread can never reach is reported by the executor as a
   * deadlock (the kernel call fails), never a hang. */
  int (*syncthreads)(int predicate, int mode, const rudnn_emu_site *site);
  /* Warp exchange: every lane in `mask` (which must include the caller)
   * contributes `bytes` bytes at `value`; once all have arrived, each
   * receives in `all` the 32 contributions lane by lane (`bytes` each; lanes
   * outside the result left untouched). As in CUDA, lanes of `mask` that
   * have exited, or do not exist in a partial warp, take no part. Lanes
   * meeting at different operations trap. Returns the lanes that took part.
   * The basis of shuffles, votes, __syncwarp, mma and ldmatrix. bytes <=
   * 256. */
  unsigned (*warpExchange)(unsigned mask, const void *value, void *all,
                           size_t bytes, const rudnn_emu_site *site);
  /* Aborts the kernel call with `message` (e.g. __trap, a failed assert). */
  void (*trap)(const char *message);
  /* Check mode: the running thread is about to access `bytes` at `address`
   * (kind RUDNN_EMU_READ, RUDNN_EMU_WRITE or RUDNN_EMU_ATOMIC); races on
   * shared memory and accesses outside a guarded global allocation trap. */
  void (*memoryAccess)(const void *address, size_t bytes, int kind);
  /* Whether [address, address + bytes) is the block's shared memory. */
  int (*isShared)(const void *address, size_t bytes);
  /* A thread polls memory (an atomic, a volatile read): the others run
   * first, as the GPU's independent thread scheduling lets them; `changed`
   * when the poll wrote memory. A block that polls without progress for
   * too long is reported (watchdog), never hung. */
  void (*poll)(int changed);
  /* Grid barrier of a cooperative launch, called by one thread of each
   * block (the others wait at a block barrier around it): returns once
   * every block of the grid has called it as often. Every block of a
   * cooperative grid runs at once, as on a GPU. Traps in a launch that is
   * not cooperative. */
  void (*gridSync)(void);
  /* Named barrier `id` (1 to 15; 0 is __syncthreads') of `threads` threads,
   * a multiple of 32: the caller arrives and, with `wait`, waits until
   * `threads` have arrived (bar.sync), else goes on (bar.arrive). Warps
   * take part whole; counts that disagree trap; a barrier that can never
   * complete is reported as a deadlock. In check mode the arrivals' earlier
   * shared-memory accesses are ordered before the waiters' later ones. */
  void (*namedBarrier)(unsigned id, unsigned threads, int wait,
                       const rudnn_emu_site *site);
  /* Warpgroup exchange: the 128 threads of the caller's warpgroup (warps
   * 4i to 4i + 3) each contribute `bytes` at `value`; once all have
   * arrived at the same call site, each receives the 128 contributions in
   * `all`, thread by thread. A warpgroup with exited threads, threads at
   * different operations, or a block not made of whole warpgroups traps.
   * The basis of wgmma, its fence, commit and wait, and setmaxnreg. */
  void (*warpgroupExchange)(const void *value, void *all, size_t bytes,
                            const rudnn_emu_site *site);
  /* Check mode: an asynchronous engine's event (RUDNN_EMU_BOX_ISSUED ...)
   * on shared memory, by or for the running thread; `box` names the box of
   * RUDNN_EMU_BOX_LANDED. Returns the new box's id for RUDNN_EMU_BOX_ISSUED,
   * else 0. Accesses the model forbids trap. */
  int (*asyncAccess)(int event, const void *address, size_t bytes,
                     const void *barrier, int box);
} rudnn_emu_host;

#ifdef __cplusplus
}
#endif

#endif /* RUDNN_EMU_ABI_H */
