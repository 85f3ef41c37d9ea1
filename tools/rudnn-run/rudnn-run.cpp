//===- rudnn-run.cpp - Compile and run an operator program ----------------===//
//
//   rudnn-run examples/kda.mlir --random 0 --check
//
// Runs the entry function of an .mlir file through the JIT: inputs from .npy
// files or drawn at random, results to .npy files, optionally checked
// against the float64 references and timed.
//
//===----------------------------------------------------------------------===//

#include "tools/report/PlanReport.h"
#include "tools/rudnn-run/Program.h"
#include "tools/support/CommandLine.h"
#include "tools/support/ToolMain.h"

#include "lib/reference/Compare.h"

#include "rudnn/rudnn.hpp"

#include "llvm/Support/raw_os_ostream.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>

using namespace rudnn;
using namespace rudnn::run;
using rudnn::tools::parseCommandLine;
namespace po = boost::program_options;

namespace {

/// "B=2,T=64,H=4" → {B: 2, T: 64, H: 4}. Sizes must fit 32 bits here;
/// whether the tensors they make fit in memory is checked when drawing.
std::map<char, int64_t> parseDims(const std::string &text) {
  std::map<char, int64_t> dims;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    std::string item = text.substr(start, end - start);
    size_t equals = item.find('=');
    if (equals != 1 || item.size() < 3)
      throw InvalidArgument("--dims wants LETTER=SIZE items, got '" + item +
                            "'");
    char *rest = nullptr;
    long long size = std::strtoll(item.c_str() + 2, &rest, 10);
    if (*rest || size < 1 || size > std::numeric_limits<int32_t>::max())
      throw InvalidArgument("--dims: '" + item +
                            "' needs a size from 1 to 2147483647");
    if (dims.count(item[0]))
      throw InvalidArgument("--dims gives '" + item.substr(0, 1) + "' twice");
    dims[item[0]] = size;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return dims;
}

/// Throws unless some argument has a dynamic dim named `letter`.
void requireDynamicDim(const Program &program, char letter) {
  std::string dynamic;
  for (const Argument &argument : program.arguments())
    for (size_t i = 0; i < argument.shape.size(); ++i)
      if (argument.shape[i] < 0 && i < argument.layout.size()) {
        if (argument.layout[i] == letter)
          return;
        if (dynamic.find(argument.layout[i]) == std::string::npos)
          dynamic += argument.layout[i];
      }
  std::string list;
  for (char c : dynamic)
    list += (list.empty() ? "" : ", ") + std::string(1, c);
  throw InvalidArgument(
      "--dims: no argument has a dynamic dim '" + std::string(1, letter) +
      "' (its dynamic dims: " + (list.empty() ? "none" : list) + ")");
}

/// The dynamic dims the run bound, by contract letter ("B=2,T=64,H=4"),
/// from the arguments' layouts and the shapes given.
std::string runDims(const std::vector<Argument> &declared,
                    const std::vector<HostTensor> &given) {
  std::map<char, int64_t> bound;
  for (size_t a = 0; a < declared.size() && a < given.size(); ++a)
    for (size_t i = 0;
         i < declared[a].layout.size() && i < declared[a].shape.size() &&
         i < given[a].shape.size();
         ++i)
      if (declared[a].shape[i] < 0)
        bound[declared[a].layout[i]] = given[a].shape[i];
  std::string text;
  for (const auto &[letter, size] : bound)
    text += (text.empty() ? "" : ",") + std::string(1, letter) + "=" +
            std::to_string(size);
  return text;
}

/// Relative error tolerated for a result computed from inputs of `dtype`
/// (f32 products' operands rounded to TF32 with `tf32`).
double tolerance(DType dtype, bool tf32) {
  return dtype != DType::F32 ? 1e-2 : tf32 ? 5e-3 : 1e-4;
}

int runTool(int argc, char **argv) {
  std::string file, entry, inputs, outputs, backend, cacheDir, dump, dims,
      saveInputs;
  unsigned seed = 0;
  int bench = 0;
  po::options_description options("rudnn-run FILE.mlir [options]");
  options.add_options()("help,h", "this help")(
      "version", "print the version and what this machine offers (NVRTC, "
                 "CUDA headers, ptxas, driver, devices)")(
      "operators", "print every operator's contract: dims, operands, results")(
      "entry", po::value(&entry)->default_value("main"), "function to run")(
      "inputs", po::value(&inputs), "read each argument from DIR/<name>.npy")(
      "random", po::value(&seed), "draw the arguments with this seed")(
      "dims", po::value(&dims)->default_value("B=2,T=64,H=4"),
      "sizes of dynamic dims for --random, by contract letter")(
      "outputs", po::value(&outputs), "write each result as DIR/<name>.npy")(
      "save-inputs", po::value(&saveInputs),
      "write the arguments used as DIR/<name>.npy")(
      "backend", po::value(&backend)->default_value("auto"),
      "auto, cuda or emulation")("cache-dir", po::value(&cacheDir),
                                 "kernel cache directory")(
      "check", "compare every result with the float64 reference")(
      "bench", po::value(&bench)->default_value(0),
      "run N more times and report the median")(
      "profile", "run once more timing each kernel launch on its own")(
      "report", "print the kernel report of the plan run, at the run's dims "
                "(registers, shared memory, SASS mix, cost model, roofline)")(
      "dump", po::value(&dump), "write generated sources, PTX and plans here");
  const po::variables_map vm =
      parseCommandLine(argc, argv, options, {{"file", po::value(&file)}});
  if (vm.count("version")) {
    std::cout << setupReport();
    return 0;
  }
  if (vm.count("operators")) {
    for (const OperatorContract *contract : operatorContracts())
      std::cout << contract->format();
    return 0;
  }
  if (vm.count("help") || file.empty()) {
    std::cout << options << "\n";
    return file.empty() && !vm.count("help") ? 2 : 0;
  }
  if (vm.count("inputs") == vm.count("random"))
    throw InvalidArgument("give exactly one of --inputs DIR and --random SEED");
  if (bench < 0)
    throw InvalidArgument("--bench must not be negative");
  if (!dump.empty())
    ::setenv("RUDNN_DUMP_DIR", dump.c_str(), 1);

  ContextOptions contextOptions;
  contextOptions.backend = parseBackend(backend);
  if (vm.count("cache-dir"))
    contextOptions.cacheDirectory = cacheDir;
  Context context(contextOptions);
  Program program(context, file, entry);

  if (vm.count("check"))
    program.requireCheckable();
  std::map<char, int64_t> sizes = parseDims(dims);
  if (!vm["dims"].defaulted())
    for (const auto &[letter, size] : sizes)
      requireDynamicDim(program, letter);
  std::vector<HostTensor> arguments;
  if (vm.count("inputs")) {
    arguments = readInputs(program.arguments(), inputs);
  } else {
    program.completeDims(sizes);
    arguments = randomInputs(program.arguments(), sizes, seed);
    program.deriveResults(arguments);
  }
  if (!saveInputs.empty())
    writeTensors(arguments, saveInputs);

  std::cout << "backend: " << context.deviceDescription() << "\n";
  std::vector<HostTensor> results = program.run(context, arguments);
  for (const HostTensor &result : results) {
    std::cout << "result " << result.name << ": " << dtypeName(result.dtype)
              << "[";
    for (size_t i = 0; i < result.shape.size(); ++i)
      std::cout << (i ? ", " : "") << result.shape[i];
    std::cout << "]\n";
  }

  bool failed = false;
  if (vm.count("check")) {
    DType inputType = DType::F32;
    for (const HostTensor &argument : arguments)
      if (argument.dtype == DType::F16 || argument.dtype == DType::BF16)
        inputType = argument.dtype;
    const double tolerated = tolerance(inputType, program.roundsToTf32());
    std::vector<HostTensor> expected = program.reference(arguments);
    std::vector<HostTensor> sensitivity = program.sensitivity(arguments);
    for (size_t i = 0; i < results.size(); ++i) {
      if (expected[i].values.empty() && !results[i].values.empty()) {
        std::printf("check %s: saved in the kernels' own layout, no "
                    "reference\n",
                    results[i].name.c_str());
        continue;
      }
      reference::Comparison c = reference::compare(
          results[i].values, expected[i].values, sensitivity[i].values);
      bool ok = c.error <= tolerated;
      failed |= !ok;
      std::printf("check %s: relative error %.3e (tolerance %.0e) %s",
                  results[i].name.c_str(), c.error, tolerated,
                  ok ? "ok" : "FAILED");
      if (c.basisIsSensitivity)
        std::printf(" (relative to the result's sensitivity %.3e, above its "
                    "norm %.3e)",
                    c.basis, reference::norm(expected[i].values));
      std::printf("\n");
    }
  }
  if (bench > 0) {
    std::vector<double> milliseconds;
    program.run(context, arguments, bench, &milliseconds);
    std::sort(milliseconds.begin(), milliseconds.end());
    std::printf("bench: median %.3f ms over %d runs\n",
                milliseconds[milliseconds.size() / 2], bench);
  }
  if (vm.count("profile")) {
    context.setProfiling(true);
    program.run(context, arguments);
    context.setProfiling(false);
    for (const KernelProfile &kernel : context.profile())
      std::printf("profile %s: %lu launches, %.3f ms\n", kernel.kernel.c_str(),
                  (unsigned long)kernel.launches, kernel.milliseconds);
  }
  if (vm.count("report")) {
    llvm::raw_os_ostream os(std::cout);
    tools::printFileReport(file, context.options().arch,
                           runDims(program.arguments(), arguments), os);
  }
  if (!outputs.empty())
    writeTensors(results, outputs);

  Counters counters = context.counters();
  std::cout << "compiles: " << counters.kernelsCompiled << "\n"
            << "cache: memory=" << counters.kernelCacheMemoryHits
            << " disk=" << counters.kernelCacheDiskHits << "\n";
  return failed ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  return rudnn::tools::runReportingErrors("rudnn-run", 1,
                                          [&] { return runTool(argc, argv); });
}
