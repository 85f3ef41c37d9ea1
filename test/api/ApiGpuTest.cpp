//===- ApiGpuTest.cpp - Plans through the JIT API on a GPU ----------------===//

#include "runtime/backends/CudaBackend.h"
#include "test/api/PlanCacheCheck.h"

namespace {

TEST(ApiGpu, PlanCacheServesRepeatedCallsWithoutCompiling) {
  if (!rudnn::runtime::cudaAvailable())
    GTEST_SKIP() << "no CUDA device";
  rudnn::ContextOptions options;
  options.backend = rudnn::BackendKind::Cuda;
  options.cacheDirectory = "";
  rudnn::Context context(options);
  rudnn::test::checkPlanCache(context);
}

} // namespace
