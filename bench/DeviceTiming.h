//===- DeviceTiming.h - Operator benchmarks' inputs and medians -*- C++ -*-===//
//
// What the operator benchmarks share with each other and with their Python
// anchors (bench/*.py): inputs placed in device memory, and the median of
// CUDA-event timings after untimed warm-up calls.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_BENCH_DEVICETIMING_H
#define RUDNN_BENCH_DEVICETIMING_H

#include "test/support/KdaProblem.h"

#include "rudnn/rudnn.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace rudnn::bench {

/// Device memory holding `values` as `dtype` (f32, bf16 or i32).
inline DeviceBuffer upload(Context &context, const std::vector<double> &values,
                           DType dtype) {
  DeviceBuffer buffer(context, values.size() * dtypeSize(dtype));
  std::vector<unsigned char> bytes(values.size() * dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i) {
    float x = static_cast<float>(values[i]);
    if (dtype == DType::I32) {
      const auto n = static_cast<int32_t>(values[i]);
      std::memcpy(&bytes[4 * i], &n, 4);
    } else if (dtype == DType::BF16) {
      uint16_t bits = test::toBf16(x);
      std::memcpy(&bytes[2 * i], &bits, 2);
    } else {
      std::memcpy(&bytes[4 * i], &x, 4);
    }
  }
  context.copyToDevice(buffer.data(), bytes.data(), bytes.size());
  return buffer;
}

/// The median of `repeats` CUDA-event timings of `call` (host clock on the
/// emulation backend), after `warmup` untimed calls: the Python anchors'
/// median_ms.
template <typename Call>
double medianMs(Context &context, int warmup, int repeats, Call call) {
  for (int i = 0; i < warmup; ++i)
    call();
  context.synchronize();
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r)
    times.push_back(context.timeMilliseconds(call));
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

/// The options every operator benchmark takes.
struct BenchOptions {
  std::string backend, json, shapes;
  int repeats = 20, warmup = 3;
  bool allowLarge = false;
};

/// Refuses a shape of `work` tokens x heads beyond `limit` on the
/// emulation backend (it would run for hours) unless the options allow it.
inline void refuseLargeOnEmulation(Context &context,
                                   const BenchOptions &options, int64_t work,
                                   int64_t limit, const std::string &shape) {
  if (context.backend() == BackendKind::Emulation && !options.allowLarge &&
      work > limit)
    throw InvalidArgument("shape " + shape +
                          " is GPU-sized and the backend is emulation (no "
                          "GPU): pass --allow-large to run it anyway, or "
                          "smaller --shapes");
}

/// The shapes of a --shapes list (items separated by ';', empty ones
/// skipped), each read by `read(item, shape)`; an item it refuses (false)
/// fails naming what the list wants.
template <typename Shape, typename Read>
std::vector<Shape> parseShapeList(const std::string &text,
                                  const std::string &wants, Read read) {
  std::vector<Shape> shapes;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ';');) {
    if (item.empty())
      continue;
    Shape shape{};
    if (!read(item, shape))
      throw InvalidArgument("--shapes wants " + wants + ";..., got '" + item +
                            "'");
    shapes.push_back(shape);
  }
  return shapes;
}

inline std::string shapeField(int64_t value) { return std::to_string(value); }
inline std::string shapeField(const std::string &text) { return text; }

/// One item of a --shapes list, "a,b,c;".
template <typename... Fields> std::string shapeItem(const Fields &...fields) {
  std::string text;
  ((text += (text.empty() ? "" : ",") + shapeField(fields)), ...);
  return text + ";";
}

/// Prints the device and the results table's header (`format`, a printf
/// format, with `columns`), flushed so that a slow first shape shows them.
template <typename... Columns>
void printTableHeader(Context &context, const char *format,
                      Columns... columns) {
  std::printf("device: %s\n", context.deviceDescription().c_str());
  std::printf(format, columns...);
  std::fflush(stdout);
}

/// Parses `tool`'s command line into `options` (`shapes` defaulting to
/// `defaultShapes`, described by `shapesHelp`): -1 to go on, else the exit
/// code (0 after --help, 2 after printing a usage error).
inline int parseBenchOptions(int argc, char **argv, const std::string &tool,
                             const std::string &defaultShapes,
                             const std::string &shapesHelp,
                             BenchOptions &options) {
  namespace po = boost::program_options;
  po::options_description described("usage: " + tool + " [options]");
  described.add_options()("help,h", "this text")("version",
                                                 "print rudnn's version")(
      "backend", po::value(&options.backend)->default_value("auto"),
      "auto, cuda or emulation")(
      "repeats", po::value(&options.repeats)->default_value(20),
      "timed calls per measurement (the median is reported)")(
      "warmup", po::value(&options.warmup)->default_value(3),
      "untimed calls first (the first compiles)")(
      "shapes", po::value(&options.shapes)->default_value(defaultShapes),
      shapesHelp.c_str())("json", po::value(&options.json),
                          "also write the results here")(
      "allow-large", po::bool_switch(&options.allowLarge),
      "run shapes of GPU size on the emulation backend too");
  try {
    po::variables_map given;
    po::store(po::parse_command_line(argc, argv, described), given);
    if (given.count("help")) {
      std::cout << described;
      return 0;
    }
    if (given.count("version")) {
      std::cout << tool << " (rudnn " << version() << ")\n";
      return 0;
    }
    po::notify(given);
    if (options.repeats < 1 || options.warmup < 0)
      throw po::error("--repeats must be at least 1, --warmup at least 0");
  } catch (const po::error &error) {
    std::cerr << tool << ": " << error.what() << "\n" << described;
    return 2;
  }
  return -1;
}

/// A benchmark's main: parses its options (parseBenchOptions), opens the
/// context on the chosen backend and returns `run(context, options)`; an
/// error is printed under the tool's name and exits 1.
template <typename Run>
int benchMain(int argc, char **argv, const std::string &tool,
              const std::string &defaults, const std::string &shapesHelp,
              Run run) {
  BenchOptions options;
  if (int code =
          parseBenchOptions(argc, argv, tool, defaults, shapesHelp, options);
      code >= 0)
    return code;
  try {
    ContextOptions contextOptions;
    contextOptions.backend = parseBackend(options.backend);
    Context context(contextOptions);
    return run(context, options);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "%s: %s\n", tool.c_str(), error.what());
    return 1;
  }
}

/// Writes `results` of operator `op` (bf16) to the options' JSON file, if
/// any, with how they were timed. Called after every shape: a run cut short
/// keeps what it measured.
inline void writeResults(Context &context, const BenchOptions &options,
                         const std::string &op, const nlohmann::json &results) {
  if (options.json.empty())
    return;
  const bool emulated = context.backend() == BackendKind::Emulation;
  std::ofstream(options.json)
      << nlohmann::json{{"op", op},
                        {"dtype", "bf16"},
                        {"timing", emulated ? "host clock" : "cuda events"},
                        {"warmup", options.warmup},
                        {"repeats", options.repeats},
                        {"results", results}}
             .dump(1)
      << "\n";
}

} // namespace rudnn::bench

#endif // RUDNN_BENCH_DEVICETIMING_H
