//===- Prelude.h - The emulation prelude, embedded --------------*- C++ -*-===//

#ifndef RUDNN_RUNTIME_EMULATION_PRELUDE_H
#define RUDNN_RUNTIME_EMULATION_PRELUDE_H

#include "runtime/compile/Kernel.h"

#include <string_view>
#include <vector>

namespace rudnn::runtime {

struct EmbeddedFile {
  std::string_view name;
  std::string_view contents;
};

/// The files under runtime/emulation/prelude as embedded at build time,
/// named by their path relative to that folder's parent ("prelude/...").
const std::vector<EmbeddedFile> &emulationPreludeFiles();

/// The prelude as compiler headers, named relative to the prelude folder
/// ("rudnn_emulation.h", "cuda_bf16.h", ...).
const std::vector<HeaderFile> &emulationPrelude();

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_PRELUDE_H
