//===- PlanImportTest.cpp - A rudnn.plan as the runtime's plan ------------===//
//
// What the import carries from the plan IR that the KDA lowering does not
// produce yet: a cooperative kernel with dynamic shared memory above 48 KiB,
// a parameter derived from another, a split count chosen at the call,
// packed workspace buffers.
//
//===----------------------------------------------------------------------===//

#include "lib/PlanImport.h"
#include "lib/ContextImpl.h"

#include "codegen/InitRudnn.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace rudnn;

namespace {

const char *const kPlan = R"mlir(
rudnn.plan @p params ["T", "T4", "S"] sources [
    #rudnn.dim<buffer = "q", index = 1, divisor = 1>,
    #rudnn.size<constant = 4, params = ["T"], divisor = 1>,
    #rudnn.split<blocks = #rudnn.size<constant = 1, params = ["T"], divisor = 1>,
                 target = 264,
                 max = #rudnn.size<constant = 1, params = ["T"], divisor = 16>>] {
  rudnn.buffer @q "in"
  rudnn.buffer @o "out"
  rudnn.buffer @a "workspace" bytes #rudnn.size<constant = 6, params = ["T"], divisor = 1>
  rudnn.buffer @b "workspace" bytes #rudnn.size<constant = 4, params = [], divisor = 1>
  rudnn.kernel @kda_fwd_recurrent_f32_f32_f32_k8_v8_c16 threads 32 shared_bytes 65536 cooperative {
  ^bb0(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>):
    %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
        : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
           tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
        -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
    rudnn.yield %o : tensor<?x?x?x8xf32>
  }
  rudnn.launch @kda_fwd_recurrent_f32_f32_f32_k8_v8_c16 grid [#rudnn.size<constant = 1, params = ["T"], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [@q, @o, @a, #rudnn.param<name = "T4", bits = 64>]
}
)mlir";

TEST(PlanImport, CarriesCooperativeSharedMemoryDerivedParamsAndPacking) {
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  Context context(options);
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::MLIRContext mlir(registry);
  mlir.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kPlan, &mlir);
  ASSERT_TRUE(module);
  auto planOp = *module->getOps<mlir::rudnn::PlanOp>().begin();
  runtime::Plan plan = importPlan(planOp, context.impl());

  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_TRUE(plan.launches[0].cooperative);
  EXPECT_EQ(plan.launches[0].dynamicSharedBytes, 65536u);
  EXPECT_EQ(plan.launches[0].block[0], 32u);
  ASSERT_EQ(plan.kernels.size(), 1u);
  EXPECT_EQ(plan.kernels[0].entry, "kda_fwd_recurrent_f32_f32_f32_k8_v8_c16");

  // T4 = 4·T, read after T from the view bound to q; S splits T blocks
  // into enough parts for 264 (ceil(264 / 37) = 8), at most ceil(T / 16).
  const std::vector<int64_t> shape = {2, 37, 3, 8}, strides = {888, 24, 8, 1};
  std::vector<runtime::BufferShape> bound(plan.buffers.size());
  bound[0] = {&shape, &strides};
  EXPECT_EQ(plan.paramValues(bound), (std::vector<int64_t>{37, 148, 3}));
  const std::vector<int64_t> longer = {2, 200, 3, 8};
  bound[0] = {&longer, &strides};
  EXPECT_EQ(plan.paramValues(bound)[2], 2); // ceil(264 / 200), under 13
  const std::vector<int64_t> shorter = {2, 20, 3, 8};
  bound[0] = {&shorter, &strides};
  EXPECT_EQ(plan.paramValues(bound)[2], 2); // 14 wanted, 2 have work

  // Workspace buffers laid out in order, each at a 256-byte boundary.
  std::vector<uint64_t> offsets;
  const uint64_t total = plan.workspaceLayout({37, 148, 3}, offsets);
  EXPECT_TRUE(plan.buffers[2].packed && plan.buffers[3].packed);
  EXPECT_EQ(offsets[2], 0u);
  EXPECT_EQ(offsets[3], 256u); // after 6·37 = 222 bytes
  EXPECT_EQ(total, 260u);
}

} // namespace
