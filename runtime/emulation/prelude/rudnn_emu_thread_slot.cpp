//===- rudnn_emu_thread_slot.cpp - The running CUDA thread, per OS thread -===//
//
// The variable emulated device code reads for its indices, its dynamic
// shared memory and (in check mode) on every access it makes: the CUDA
// thread its OS thread runs. It lives in this small library, loaded once a
// process with its symbols global and its thread-local block in the static
// TLS area, so kernel objects and check mode's hooks reach it with one load
// from the thread pointer (the initial-exec model); a variable of their
// own would sit in a loaded object's dynamic TLS, a call to
// __tls_get_addr on each read.
//
//===----------------------------------------------------------------------===//

#include "rudnn_emu_abi.h"

__thread rudnn_emu_thread *rudnn_emu_current_thread
    __attribute__((visibility("default"), tls_model("initial-exec"))) = nullptr;

// Reads the slot as kernels do, so that loading the library itself asks
// for its static TLS (and fails at once where there is none left).
extern "C" __attribute__((visibility("default"))) rudnn_emu_thread **
rudnn_emu_thread_slot() {
  return &rudnn_emu_current_thread;
}
