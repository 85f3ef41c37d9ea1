//===- rudnn-fuzz.cpp - Mutated IR through every stage of rudnn -----------===//
//
//   rudnn-fuzz --replay FILE...              run each case once
//   rudnn-fuzz [--seed N] [--runs N | --seconds S] [--crash FILE] DIR|FILE...
//
// Every input goes through what the tools do with IR text: the nesting
// check, parsing and verification, then each pass alone and the whole
// pipeline (rudnn-specialize, rudnn-decompose, rudnn-plan), with the CUDA
// emitter run on the parsed module and after each. Diagnostics are expected
// and ignored; a crash, an abort or an input running past 20 s is a failure:
// the input is written to the --crash file (default ./rudnn-fuzz-crash.mlir)
// before the process dies with the signal.
//
// Fuzzing mutates cases drawn from the seed files (split at "// -----", as
// lit's -split-input-file does): byte edits, deleted and repeated spans,
// tokens of the IR and interesting numbers inserted, splices of two cases.
// Each base is a seed from a file drawn uniformly (every operator family
// alike, however many cases its files hold) or a mutant that parsed; a
// file's seeds are its cases and what they lower to (primitives, plans), so
// that the verifiers of every level see mutated text.
// Deterministic for a seed.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/EmitModule.h"
#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/SourceLimits.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace mlir;
namespace fs = std::filesystem;

namespace {

// --- crash reporting: async-signal-safe, from preallocated state -----------

constexpr unsigned kTimeoutSeconds = 20;
std::string crashPath = "rudnn-fuzz-crash.mlir";
const char *currentData = nullptr;
size_t currentSize = 0;

void writeAll(int fd, const char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n <= 0)
      return;
    data += n;
    size -= static_cast<size_t>(n);
  }
}

extern "C" void onFatalSignal(int signal) {
  const char *what = signal == SIGALRM ? "timeout" : "crash";
  writeAll(2, "rudnn-fuzz: ", 12);
  writeAll(2, what, std::strlen(what));
  writeAll(2, "; input written to ", 19);
  writeAll(2, crashPath.c_str(), crashPath.size());
  writeAll(2, "\n", 1);
  int fd = ::open(crashPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    writeAll(fd, currentData, currentSize);
    ::close(fd);
  }
  std::signal(signal == SIGALRM ? SIGABRT : signal, SIG_DFL);
  std::raise(signal == SIGALRM ? SIGABRT : signal);
}

void installCrashHandlers() {
  // Stack overflows deliver SIGSEGV on a stack that is full: run the
  // handler on a stack of its own.
  static std::vector<char> alternate(1 << 16);
  stack_t stack{};
  stack.ss_sp = alternate.data();
  stack.ss_size = alternate.size();
  ::sigaltstack(&stack, nullptr);
  struct sigaction action {};
  action.sa_handler = onFatalSignal;
  action.sa_flags = SA_ONSTACK | SA_RESETHAND;
  for (int signal : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL, SIGALRM})
    ::sigaction(signal, &action, nullptr);
}

// --- one input through every stage -----------------------------------------

class Pipeline {
public:
  Pipeline() { reset(); }

  /// Whether `text` parsed and verified.
  bool run(const std::string &text) {
    if (++uses % 500 == 0) // interned types and attributes only grow
      reset();
    currentData = text.data();
    currentSize = text.size();
    ::alarm(kTimeoutSeconds);
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.mlir"), llvm::SMLoc());
    OwningOpRef<ModuleOp> module =
        mlir::rudnn::parseRudnnSource(sourceMgr, context.get());
    bool parsed = static_cast<bool>(module);
    if (parsed) {
      emit(*module);
      using Factory = std::function<std::unique_ptr<Pass>()>;
      const Factory passes[] = {
          [] { return mlir::rudnn::createRudnnSpecialize(); },
          mlir::rudnn::createRudnnDecompose, mlir::rudnn::createRudnnPlan};
      for (const Factory &pass : passes)
        lower(*module, {pass});
      lower(*module, {passes[0], passes[1], passes[2]});
    }
    ::alarm(0);
    return parsed;
  }

  /// The text of `text` after rudnn-specialize and rudnn-decompose, and
  /// after the whole pipeline, where they succeed: seeds that reach the
  /// primitives' and plans' verifiers directly.
  std::vector<std::string> loweredForms(const std::string &text) {
    std::vector<std::string> forms;
    auto sourceMgr = std::make_shared<llvm::SourceMgr>();
    sourceMgr->AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "seed.mlir"), llvm::SMLoc());
    OwningOpRef<ModuleOp> module =
        mlir::rudnn::parseRudnnSource(sourceMgr, context.get());
    if (!module)
      return forms;
    PassManager pm(context.get());
    pm.addPass(mlir::rudnn::createRudnnSpecialize());
    pm.addPass(mlir::rudnn::createRudnnDecompose());
    for (int stage = 0; stage < 2; ++stage) {
      if (failed(pm.run(*module)))
        break;
      std::string printed;
      llvm::raw_string_ostream os(printed);
      module->print(os);
      forms.push_back(std::move(os.str()));
      pm.clear();
      pm.addPass(mlir::rudnn::createRudnnPlan());
    }
    return forms;
  }

private:
  void reset() {
    DialectRegistry registry;
    mlir::rudnn::registerRudnnDialects(registry);
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    context->getDiagEngine().registerHandler(
        [](Diagnostic &) { return success(); });
  }

  /// Runs `passes` on a copy of `module`, then emits what it produced.
  void
  lower(ModuleOp module,
        std::initializer_list<std::function<std::unique_ptr<Pass>()>> passes) {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(context.get());
    for (const auto &pass : passes)
      pm.addPass(pass());
    if (succeeded(pm.run(*copy))) {
      ++lowered;
      emit(*copy);
    }
  }

  void emit(ModuleOp module) {
    if (auto kernels = ::rudnn::codegen::emitKernels(module);
        succeeded(kernels))
      emitted += kernels->size();
  }

  std::unique_ptr<MLIRContext> context;
  unsigned uses = 0;

public:
  /// Pass runs that succeeded, and kernels emitted: how deep inputs reach.
  long long lowered = 0, emitted = 0;
};

// --- seeds and mutations
// ------------------------------------------------------

/// The cases of a file, split as -split-input-file splits them.
std::vector<std::string> casesOf(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::vector<std::string> cases;
  std::string all = text.str(), separator = "// -----";
  size_t start = 0;
  for (;;) {
    size_t end = all.find(separator, start);
    cases.push_back(all.substr(start, end - start));
    if (end == std::string::npos)
      return cases;
    start = end + separator.size();
  }
}

std::vector<fs::path> mlirFiles(const std::vector<std::string> &roots) {
  std::vector<fs::path> files;
  for (const std::string &root : roots) {
    if (fs::is_directory(root)) {
      for (const auto &entry : fs::recursive_directory_iterator(root))
        if (entry.is_regular_file() && entry.path().extension() == ".mlir")
          files.push_back(entry.path());
    } else {
      files.push_back(root);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

const char *const kTokens[] = {
    "rudnn.kda",
    "rudnn.kda_backward",
    "rudnn.plan",
    "rudnn.kernel",
    "rudnn.launch",
    "rudnn.buffer",
    "rudnn.chunk_solve",
    "rudnn.chunk_propagate",
    "tensor<",
    ">",
    "?x",
    "x",
    "f32",
    "f16",
    "bf16",
    "i1",
    "i32",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ",",
    ":",
    "=",
    "%",
    "@",
    "\"",
    "-> ",
    "!",
    "#rudnn.size<constant = 1, params = [], divisor = 1>",
    "#rudnn.param<\"T\">",
    ("#rudnn.target<arch = \"sm_90\", lanes = 32, "
     "shared_memory_per_block = 49152, sm_count = 132>"),
    "chunk = 64",
    "K = 128",
    "threads 1024",
    "args [",
    "grid [",
    "params [",
    "rudnn.name = \"x\"",
    "func.func @f(",
    "return",
    "unit",
    "dense<0.0>",
    "// -----",
    "\n",
    " ",
    "0",
    "1",
    "-1",
    "16",
    "65",
    "256",
    "257",
    "2147483647",
    "2147483648",
    "-2147483648",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "1e308",
    "-0.0",
    "0x7FC00000",
    "nan",
    "inf",
    "divisor = 0"};

class Mutator {
public:
  explicit Mutator(unsigned seed) : random(seed) {}

  std::string mutate(const std::string &base, const std::string &other) {
    std::string text = base;
    const int edits = 1 + pick(4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = text.empty() ? 0 : pick(text.size());
      switch (pick(7)) {
      case 0: // one byte changed
        if (!text.empty())
          text[at] = static_cast<char>(32 + pick(95));
        break;
      case 1: // a span deleted
        text.erase(at, 1 + pick(32));
        break;
      case 2: { // a span repeated
        const size_t length = std::min<size_t>(1 + pick(64), text.size() - at);
        const std::string span = text.substr(at, length);
        const int times = 1 + pick(pick(2) ? 3 : 300);
        for (int t = 0; t < times && text.size() < (1 << 20); ++t)
          text.insert(at, span);
        break;
      }
      case 3:
      case 4: // a token inserted
        text.insert(at, kTokens[pick(std::size(kTokens))]);
        break;
      case 5: { // a number, any of the text's alike, replaced
        std::vector<std::pair<size_t, size_t>> runs; // first digit, length
        for (size_t i = 0; i < text.size();) {
          const size_t digit = text.find_first_of("0123456789", i);
          if (digit == std::string::npos)
            break;
          size_t end = text.find_first_not_of("0123456789", digit);
          end = end == std::string::npos ? text.size() : end;
          runs.emplace_back(digit, end - digit);
          i = end;
        }
        if (!runs.empty()) {
          const auto [digit, length] = runs[pick(runs.size())];
          text.replace(digit, length, numbers[pick(std::size(numbers))]);
        }
        break;
      }
      case 6: // spliced with another case
        if (!other.empty()) {
          const size_t from = pick(other.size());
          text.insert(at, other.substr(from, 1 + pick(256)));
        }
        break;
      }
    }
    return text;
  }

  size_t pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(random);
  }

private:
  std::mt19937_64 random;
  const char *numbers[12] = {"0",
                             "1",
                             "-1",
                             "3",
                             "65",
                             "257",
                             "2147483647",
                             "2147483648",
                             "4294967297",
                             "9223372036854775807",
                             "99999999999999999999",
                             "1024"};
};

int usage() {
  std::fputs("usage: rudnn-fuzz --replay FILE...\n"
             "       rudnn-fuzz [--seed N] [--runs N | --seconds S] "
             "[--crash FILE] DIR|FILE...\n",
             stderr);
  return 2;
}

} // namespace

int main(int argc, char **argv) {
  bool replay = false;
  unsigned seed = 1;
  long long runs = -1;
  double seconds = -1;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> const char * {
      return i + 1 < argc ? argv[++i] : nullptr;
    };
    const char *v = nullptr;
    if (flag == "--replay")
      replay = true;
    else if (flag == "--seed" && (v = value()))
      seed = static_cast<unsigned>(std::stoul(v));
    else if (flag == "--runs" && (v = value()))
      runs = std::stoll(v);
    else if (flag == "--seconds" && (v = value()))
      seconds = std::stod(v);
    else if (flag == "--crash" && (v = value()))
      crashPath = v;
    else if (!flag.empty() && flag[0] != '-')
      inputs.push_back(flag);
    else
      return usage();
  }
  if (inputs.empty())
    return usage();
  installCrashHandlers();
  // Seeds by file: a mutant's base is drawn from a file chosen uniformly,
  // so a family with few cases is fuzzed as often as one with many.
  std::vector<std::string> pool;
  std::vector<std::pair<size_t, size_t>> fileCases; // first case, count
  Pipeline pipeline;
  for (const fs::path &file : mlirFiles(inputs)) {
    const size_t first = pool.size();
    for (std::string &text : casesOf(file)) {
      if (!replay)
        for (std::string &form : pipeline.loweredForms(text))
          pool.push_back(std::move(form));
      pool.push_back(std::move(text));
    }
    fileCases.emplace_back(first, pool.size() - first);
  }

  const auto start = std::chrono::steady_clock::now();
  long long executed = 0, parsed = 0;
  if (replay) {
    for (const std::string &text : pool)
      parsed += pipeline.run(text), ++executed;
  } else {
    if (runs < 0 && seconds < 0)
      runs = 10000;
    Mutator mutator(seed);
    const size_t seeds = pool.size();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           start)
          .count();
    };
    while ((runs < 0 || executed < runs) &&
           (seconds < 0 || elapsed() < seconds)) {
      auto seedCase = [&] {
        const auto [first, count] = fileCases[mutator.pick(fileCases.size())];
        return first + mutator.pick(count);
      };
      // Half the time a seed, half the time a mutant that parsed.
      const size_t mutants = pool.size() - seeds;
      const std::string &base = mutants && mutator.pick(2)
                                    ? pool[seeds + mutator.pick(mutants)]
                                    : pool[seedCase()];
      const std::string &other = pool[seedCase()];
      std::string mutant = mutator.mutate(base, other);
      ++executed;
      if (pipeline.run(mutant)) {
        ++parsed;
        if (pool.size() < seeds + 4096 && mutant.size() < 65536)
          pool.push_back(std::move(mutant));
      }
    }
  }
  std::printf(
      "rudnn-fuzz: %lld inputs (%lld parsed, %lld pass runs "
      "succeeded, %lld kernels emitted) in %.1f s, no crash\n",
      executed, parsed, pipeline.lowered, pipeline.emitted,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  return 0;
}
