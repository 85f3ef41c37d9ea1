//===- Timing.h - Medians of repeated host-side measurements ----*- C++ -*-===//
//
// A few lines instead of a benchmark library, so the benchmarks the GPU check
// runs link nothing but the C and C++ runtimes.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_BENCH_TIMING_H
#define RUDNN_BENCH_TIMING_H

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace rudnn::bench {

/// One measured quantity: the time per call over `repetitions` samples.
struct Measurement {
  std::string name;
  std::string unit; // "ms" or "us"
  double median = 0, min = 0, max = 0;
  long long callsPerSample = 0;
};

/// Times `call`: each sample runs it enough times to last `sampleSeconds`
/// (at least once), `repetitions` samples; reports per-call figures in
/// `unit`. The first call runs untimed, as a warm-up.
template <typename Call>
Measurement measure(const std::string &name, const std::string &unit,
                    int repetitions, double sampleSeconds, Call call) {
  using Clock = std::chrono::steady_clock;
  call();
  long long calls = 1;
  for (;;) { // grow the sample until it lasts long enough
    auto start = Clock::now();
    for (long long i = 0; i < calls; ++i)
      call();
    double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    if (seconds >= sampleSeconds || calls >= (1ll << 30))
      break;
    calls *= seconds > 0 ? std::max(2ll, static_cast<long long>(
                                             1.2 * sampleSeconds / seconds))
                         : 10;
  }
  const double scale = unit == "us" ? 1e6 : 1e3;
  std::vector<double> samples;
  for (int r = 0; r < repetitions; ++r) {
    auto start = Clock::now();
    for (long long i = 0; i < calls; ++i)
      call();
    samples.push_back(
        std::chrono::duration<double>(Clock::now() - start).count() * scale /
        static_cast<double>(calls));
  }
  std::sort(samples.begin(), samples.end());
  return {name,           unit, samples[samples.size() / 2], samples.front(),
          samples.back(), calls};
}

/// "name  median  (min … max) unit, calls per sample", one line.
inline void print(const Measurement &m) {
  std::printf("%-24s median %10.3f %s  (min %.3f, max %.3f; %lld calls per "
              "sample)\n",
              m.name.c_str(), m.median, m.unit.c_str(), m.min, m.max,
              m.callsPerSample);
  std::fflush(stdout);
}

} // namespace rudnn::bench

#endif // RUDNN_BENCH_TIMING_H
