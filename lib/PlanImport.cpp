//===- PlanImport.cpp - A rudnn.plan as the runtime's plan ----------------===//

#include "lib/PlanImport.h"

#include "codegen/Emit/EmitModule.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/ElementTypes.h"
#include "runtime/plans/Dump.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringMap.h"

#include <iterator>
#include <memory>

using namespace rudnn;
using namespace rudnn::runtime;
using mlir::rudnn::BufferOp;
using mlir::rudnn::KernelOp;
using mlir::rudnn::LaunchOp;
using mlir::rudnn::ParamAttr;
using mlir::rudnn::SizeAttr;

namespace {

[[noreturn]] void internal(const std::string &message) {
  throw Error(Status::Internal, "rudnn.plan import: " + message);
}

} // namespace

Plan rudnn::importPlan(mlir::rudnn::PlanOp planOp, Context::Impl &context,
                       const KernelCompile &compile) {
  Plan plan;
  plan.name = planOp.getSymName().str();
  llvm::StringMap<uint32_t> params, buffers, kernels;
  for (mlir::Attribute name : planOp.getParams()) {
    std::string text = mlir::cast<mlir::StringAttr>(name).str();
    params[text] = static_cast<uint32_t>(plan.params.size());
    plan.params.push_back(text);
  }
  auto size = [&](SizeAttr attr) {
    SizeExpr expr{attr.getConstant(), {}, attr.getDivisor()};
    for (mlir::Attribute name : attr.getParams())
      expr.params.push_back(
          params.at(mlir::cast<mlir::StringAttr>(name).getValue()));
    return expr;
  };
  auto paramIndex = [&](llvm::StringRef name) {
    auto it = params.find(name);
    if (it == params.end())
      internal("unknown parameter '" + name.str() + "'");
    return it->second;
  };
  auto tensorMapOf = [&](mlir::rudnn::TensorMapAttr map) {
    auto extents = [&](mlir::ArrayAttr list) {
      std::vector<runtime::PlanExtent> result;
      for (mlir::Attribute extent : list)
        if (auto param = mlir::dyn_cast<ParamAttr>(extent))
          result.push_back(
              {static_cast<int32_t>(paramIndex(param.getName())), 0});
        else
          result.push_back(
              {-1, mlir::cast<mlir::IntegerAttr>(extent).getInt()});
      return result;
    };
    runtime::PlanTensorMap result;
    result.buffer = buffers.at(map.getBuffer());
    result.elementBytes = static_cast<uint32_t>(map.getElementBytes());
    result.dims = extents(map.getDims());
    result.strides = extents(map.getStrides());
    for (int64_t size : map.getBox().asArrayRef())
      result.box.push_back(static_cast<uint32_t>(size));
    result.swizzleBytes = static_cast<uint32_t>(map.getSwizzleBytes());
    return result;
  };

  auto onlyGuarded = [&](KernelOp kernel) {
    bool launched = false;
    for (LaunchOp launch : planOp.getBody().front().getOps<LaunchOp>())
      if (launch.getKernel() == kernel.getSymName()) {
        if (!launch.getGuard())
          return false;
        launched = true;
      }
    return launched;
  };
  auto kernelOps = planOp.getBody().front().getOps<KernelOp>();
  auto progress = std::make_shared<CompileProgress>(
      plan.name,
      static_cast<int>(std::distance(kernelOps.begin(), kernelOps.end())));

  // Buffers and kernels first: launches refer to them by name.
  for (mlir::Operation &op : planOp.getBody().front()) {
    if (auto buffer = mlir::dyn_cast<BufferOp>(op)) {
      llvm::StringRef access = buffer.getAccess();
      PlanBuffer entry{buffer.getSymName().str(),
                       access == "in"      ? BufferAccess::In
                       : access == "out"   ? BufferAccess::Out
                       : access == "inout" ? BufferAccess::InOut
                                           : BufferAccess::Workspace,
                       SizeExpr::of(0), SizeExpr::of(0)};
      if (auto alias = buffer.getAliasesAttr())
        entry.aliasOf = static_cast<int32_t>(buffers.at(alias.getValue()));
      if (buffer.getBytesAttr())
        entry.bytes = size(buffer.getBytesAttr());
      if (buffer.getGuard())
        entry.guard = {static_cast<int32_t>(paramIndex(*buffer.getGuard())),
                       static_cast<int64_t>(*buffer.getGuardMin()),
                       static_cast<int64_t>(*buffer.getGuardMax())};
      entry.zeroed = buffer.getZeroed();
      if (buffer.getOffsetAttr())
        entry.offset = size(buffer.getOffsetAttr());
      else
        entry.packed = entry.access == BufferAccess::Workspace;
      buffers[entry.name] = static_cast<uint32_t>(plan.buffers.size());
      plan.buffers.push_back(std::move(entry));
      continue;
    }
    if (auto kernel = mlir::dyn_cast<KernelOp>(op)) {
      codegen::KernelBuilder builder;
      if (mlir::failed(codegen::emitKernel(kernel, builder)))
        internal("kernel @" + kernel.getSymName().str() + " cannot be emitted");
      kernels[builder.entry()] = static_cast<uint32_t>(plan.kernels.size());
      KernelSource source{builder.entry(), builder.source(),
                          builder.archSpecific()};
      PlanKernel planKernel{builder.entry(), {}, {}};
      // A kernel only guarded launches run may never run (the T = 1 decode
      // of a long-sequence model): it compiles when a call first needs it.
      if (compile) {
        planKernel.binary = compile(source);
      } else if (onlyGuarded(kernel)) {
        planKernel.deferred = [&context, source, progress] {
          return *context.compile(source, progress.get());
        };
        // Its source is generated now: dumped now, like the others'.
        dumpIfRequested(source.entry + ".cu", source.source);
      } else
        planKernel.binary = *context.compile(source, progress.get());
      plan.kernels.push_back(std::move(planKernel));
    }
  }
  if (std::optional<mlir::ArrayAttr> sources = planOp.getSources())
    for (mlir::Attribute source : *sources) {
      if (auto dim = mlir::dyn_cast<mlir::rudnn::DimSourceAttr>(source))
        plan.paramSources.push_back(
            {ParamSource::Kind::Dim, buffers.at(dim.getBuffer()),
             static_cast<uint32_t>(dim.getIndex()), dim.getDivisor()});
      else if (auto stride =
                   mlir::dyn_cast<mlir::rudnn::StrideSourceAttr>(source))
        plan.paramSources.push_back(
            {ParamSource::Kind::Stride, buffers.at(stride.getBuffer()),
             static_cast<uint32_t>(stride.getIndex()), 1});
      else if (auto split =
                   mlir::dyn_cast<mlir::rudnn::SplitSourceAttr>(source))
        plan.paramSources.push_back({ParamSource::Kind::Split, 0, 0, 1,
                                     size(split.getBlocks()), split.getTarget(),
                                     size(split.getMax())});
      else if (auto sum = mlir::dyn_cast<mlir::rudnn::SumSourceAttr>(source)) {
        ParamSource derived{ParamSource::Kind::Size, 0, 0, 1, SizeExpr::of(0)};
        for (mlir::Attribute term : sum.getTerms())
          derived.addends.push_back(size(mlir::cast<SizeAttr>(term)));
        plan.paramSources.push_back(std::move(derived));
      } else
        plan.paramSources.push_back({ParamSource::Kind::Size, 0, 0, 1,
                                     size(mlir::cast<SizeAttr>(source))});
    }
  for (LaunchOp launchOp : planOp.getBody().front().getOps<LaunchOp>()) {
    PlanLaunch launch;
    launch.kernel = kernels.at(launchOp.getKernel());
    auto kernelOp = planOp.lookupSymbol<KernelOp>(launchOp.getKernelAttr());
    launch.block[0] = static_cast<uint32_t>(kernelOp.getThreads());
    launch.cooperative = kernelOp.getCooperative();
    launch.dynamicSharedBytes =
        static_cast<uint32_t>(kernelOp.getSharedBytes());
    if (launchOp.getRepeat())
      launch.repeat = static_cast<int32_t>(paramIndex(*launchOp.getRepeat()));
    for (int i = 0; i < 3; ++i)
      launch.grid[i] = size(mlir::cast<SizeAttr>(launchOp.getGrid()[i]));
    if (launchOp.getGuard())
      launch.guard = {static_cast<int32_t>(paramIndex(*launchOp.getGuard())),
                      static_cast<int64_t>(*launchOp.getGuardMin()),
                      static_cast<int64_t>(*launchOp.getGuardMax())};
    for (mlir::Attribute arg : launchOp.getArgs()) {
      if (auto buffer = mlir::dyn_cast<mlir::FlatSymbolRefAttr>(arg))
        launch.args.push_back(LaunchArg::buffer(buffers.at(buffer.getValue())));
      else if (auto param = mlir::dyn_cast<ParamAttr>(arg))
        launch.args.push_back(
            param.getBits() == 32
                ? LaunchArg::paramI32(paramIndex(param.getName()))
                : LaunchArg::paramI64(paramIndex(param.getName())));
      else if (auto map = mlir::dyn_cast<mlir::rudnn::TensorMapAttr>(arg)) {
        launch.args.push_back(LaunchArg::tensorMap(
            static_cast<uint32_t>(plan.tensorMaps.size())));
        plan.tensorMaps.push_back(tensorMapOf(map));
      } else if (mlir::isa<mlir::IntegerAttr>(arg))
        launch.args.push_back(LaunchArg::i64(0)); // a null pointer
      else
        launch.args.push_back(LaunchArg::f32(static_cast<float>(
            mlir::cast<mlir::FloatAttr>(arg).getValueAsDouble())));
    }
    plan.launches.push_back(std::move(launch));
  }
  plan.validate();
  return plan;
}

Plan rudnn::lowerToPlan(Context::Impl &context, mlir::ModuleOp module,
                        const std::string &arch, const std::string &function,
                        const std::string &name, const KernelCompile &compile) {
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(module.getContext(),
                                        [&](mlir::Diagnostic &d) {
                                          diagnostics += d.str() + "\n";
                                          return mlir::success();
                                        });
  mlir::PassManager pm(module.getContext());
  mlir::rudnn::RudnnSpecializeOptions options;
  options.arch = arch;
  if (int64_t sms = context.targetSmCount())
    options.smCount = sms;
  if (int64_t smem = context.targetSmemPerBlock())
    options.smemPerBlock = smem;
  pm.addPass(mlir::rudnn::createRudnnSpecialize(options));
  pm.addPass(mlir::rudnn::createRudnnDecompose());
  pm.addPass(mlir::rudnn::createRudnnPlan());
  if (mlir::failed(pm.run(module)))
    throw Error(Status::Internal,
                "lowering " + name + " failed:\n" + diagnostics);
  for (auto plan : module.getOps<mlir::rudnn::PlanOp>())
    if (function.empty() || plan.getSymName() == function) {
      Plan imported = importPlan(plan, context, compile);
      imported.name = name;
      return imported;
    }
  throw Error(Status::Internal, "lowering " + name + " made no plan");
}
