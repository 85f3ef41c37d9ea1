//===- SourceRewrite.h - CUDA text the host compiler accepts ----*- C++ -*-===//
//
// The one CUDA declaration no prelude macro can express on the host:
// `extern __shared__ T name[];`, the block's dynamic shared memory. Each is
// replaced by a macro naming the executor's buffer; line numbers stay those
// of the original text, so diagnostics and call sites point at it.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_EMULATION_SOURCEREWRITE_H
#define RUDNN_RUNTIME_EMULATION_SOURCEREWRITE_H

#include <string>
#include <utility>

namespace rudnn::runtime {

/// `source` with every `extern __shared__ [__align__(N)] T name[];` turned
/// into a definition of `name` as the block's dynamic shared memory.
std::string rewriteDynamicShared(const std::string &source);

/// The `__launch_bounds__(threads[, minBlocks])` of kernel `entry` in
/// `source`, when written with literal counts: {threads, minBlocks (1 when
/// not given)}; {0, 0} when there are none.
std::pair<unsigned, unsigned> launchBoundsOf(const std::string &source,
                                             const std::string &entry);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_SOURCEREWRITE_H
