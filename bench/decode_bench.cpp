//===- decode_bench.cpp - Decoding-step timings over a K/V cache ----------===//
//
//   rudnn-bench-decode [--backend auto|cuda|emulation] [--repeats N]
//                      [--warmup N] [--shapes B,L,page;...]
//                      [--json FILE] [--allow-large]
//
// Times rudnn::kvCacheAttention for one new token (T = 1) of B entries each
// with L tokens cached, Hq = 32 query heads over Hk = 8 key heads, D = E =
// 128, bf16; page 0 is a contiguous cache [B, L + 1, 8, 128], else pages of
// that many tokens, each entry's own in shuffled order. Timed as
// bench/sdpa_decode.py times PyTorch: `warmup` untimed calls, then
// `repeats` calls each between two CUDA events, the median reported. The
// calls rotate over copies of the cache filling at least 256 MiB, so no
// call finds its cache in L2. Bandwidth: the bytes of K and V the step
// must read (B·(L + 1)·Hk·(D + E)·2) over the time. On the emulation
// backend shapes beyond 2^14 cached tokens in all are refused unless
// --allow-large.
//
//===----------------------------------------------------------------------===//

#include "bench/DeviceTiming.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <sstream>

using namespace rudnn;

namespace {

constexpr int64_t kHeads = 32, kKvHeads = 8, kHeadDim = 128;

struct Shape {
  int64_t B, L, page;
};

std::vector<Shape> parseShapes(const std::string &text) {
  return bench::parseShapeList<Shape>(
      text, "B,L,page (page 0: contiguous, else 1 to 256)",
      [](const std::string &item, Shape &s) {
        return std::sscanf(item.c_str(), "%ld,%ld,%ld", &s.B, &s.L, &s.page) ==
                   3 &&
               s.B >= 1 && s.L >= 0 && s.page >= 0 && s.page <= 256;
      });
}

/// Batches 1, 8 and 64 over caches of 1k to 64k tokens, contiguous and in
/// pages of 16.
std::string defaultShapes() {
  std::string text;
  for (int64_t page : {0, 16})
    for (int64_t B : {1, 8, 64})
      for (int64_t L : {1024, 4096, 16384, 65536})
        text += bench::shapeItem(B, L, page);
  return text;
}

/// Cached tokens in all beyond which the emulation backend needs
/// --allow-large.
constexpr int64_t kEmulationLimit = int64_t(1) << 14;
/// The cache copies of one shape fill at least this much.
constexpr int64_t kRotationBytes = int64_t(256) << 20;

/// Device memory of `count` bf16 values: a block of random ones repeated,
/// so that no host copy of a GPU-sized cache is made.
DeviceBuffer randomBf16(Context &context, int64_t count, std::mt19937 &random) {
  constexpr int64_t kBlock = int64_t(1) << 22;
  std::vector<uint16_t> block(std::min(count, kBlock));
  std::normal_distribution<float> normal;
  for (uint16_t &x : block)
    x = test::toBf16(normal(random));
  DeviceBuffer buffer(context, std::max<int64_t>(count, 1) * 2);
  for (int64_t at = 0; at < count; at += kBlock)
    context.copyToDevice(static_cast<char *>(buffer.data()) + 2 * at,
                         block.data(), 2 * std::min(kBlock, count - at));
  return buffer;
}

/// Device memory of i32 `values`.
DeviceBuffer uploadInts(Context &context, const std::vector<int32_t> &values) {
  DeviceBuffer buffer(context, values.size() * 4);
  context.copyToDevice(buffer.data(), values.data(), values.size() * 4);
  return buffer;
}

} // namespace

int main(int argc, char **argv) {
  return bench::benchMain(
      argc, argv, "rudnn-bench-decode", defaultShapes(),
      "B,L,page;... (T = 1, Hq = 32, Hk = 8, D = E = 128; page 0: "
      "contiguous)",
      [](Context &context, const bench::BenchOptions &options) {
        const std::vector<Shape> shapes = parseShapes(options.shapes);
        for (const Shape &s : shapes)
          bench::refuseLargeOnEmulation(
              context, options, s.B * s.L, kEmulationLimit,
              std::to_string(s.B) + "," + std::to_string(s.L));
        bench::printTableHeader(context, "%-20s %10s %10s %10s\n", "B,L,page",
                                "ms", "GB/s", "copies");
        nlohmann::json results = nlohmann::json::array();
        for (const Shape &s : shapes) {
          const int64_t B = s.B, H = kHeads, G = kKvHeads, D = kHeadDim;
          const int64_t tokens = s.L + 1; // room for the new one
          const int64_t pagesPerEntry =
                            s.page ? (tokens + s.page - 1) / s.page : 0,
                        pages = B * pagesPerEntry,
                        rows = s.page ? pages * s.page : B * tokens;
          const int64_t cacheBytes = 2 * rows * G * D * 2;
          const int64_t copies = std::max<int64_t>(
              1, (kRotationBytes + cacheBytes - 1) / cacheBytes);
          std::mt19937 random(7);
          DeviceBuffer q = bench::upload(context,
                                         test::normalValues(B * H * D, random),
                                         DType::BF16),
                       k = bench::upload(context,
                                         test::normalValues(B * G * D, random),
                                         DType::BF16),
                       v = bench::upload(context,
                                         test::normalValues(B * G * D, random),
                                         DType::BF16),
                       o(context, B * H * D * 2);
          std::vector<DeviceBuffer> kCaches, vCaches;
          for (int64_t c = 0; c < copies; ++c) {
            kCaches.push_back(randomBf16(context, rows * G * D, random));
            vCaches.push_back(randomBf16(context, rows * G * D, random));
          }
          DeviceBuffer lengths = uploadInts(
              context, std::vector<int32_t>(B, static_cast<int32_t>(s.L)));
          std::vector<int32_t> table(std::max<int64_t>(pages, 1));
          std::iota(table.begin(), table.end(), 0);
          std::shuffle(table.begin(), table.end(), random);
          DeviceBuffer blockTable = uploadInts(context, table);
          const std::vector<int64_t> cacheShape =
              s.page ? std::vector<int64_t>{pages, s.page, G, D}
                     : std::vector<int64_t>{B, tokens, G, D};
          // Every copy's inputs, made before the timing.
          std::vector<KvCacheInputs> inputs;
          for (int64_t c = 0; c < copies; ++c) {
            inputs.push_back(
                {TensorView::contiguous(q.data(), DType::BF16, {B, 1, H, D}),
                 TensorView::contiguous(k.data(), DType::BF16, {B, 1, G, D}),
                 TensorView::contiguous(v.data(), DType::BF16, {B, 1, G, D}),
                 TensorView::contiguous(kCaches[c].data(), DType::BF16,
                                        cacheShape),
                 TensorView::contiguous(vCaches[c].data(), DType::BF16,
                                        cacheShape),
                 {},
                 TensorView::contiguous(lengths.data(), DType::I32, {B}),
                 {},
                 {},
                 {},
                 {},
                 {}});
            if (s.page)
              inputs.back().blockTable = TensorView::contiguous(
                  blockTable.data(), DType::I32, {B, pagesPerEntry});
          }
          const KvCacheOutputs outputs{
              TensorView::contiguous(o.data(), DType::BF16, {B, 1, H, D}),
              {},
              {}};
          int64_t next = 0;
          auto call = [&] {
            kvCacheAttention(context, inputs[next++ % copies], outputs);
          };
          const double ms =
              bench::medianMs(context, options.warmup, options.repeats, call);
          const double bytes = double(B) * tokens * G * (D + D) * 2;
          const double gbs = bytes / (ms * 1e-3) / 1e9;
          char label[64];
          std::snprintf(label, sizeof(label), "%ld,%ld,%ld", s.B, s.L, s.page);
          std::printf("%-20s %10.4f %10.1f %10ld\n", label, ms, gbs, copies);
          std::fflush(stdout);
          results.push_back({{"B", s.B},
                             {"L", s.L},
                             {"page", s.page},
                             {"ms", ms},
                             {"bytes", bytes},
                             {"gbs", gbs}});
          bench::writeResults(context, options, "decode", results);
        }
        return 0;
      });
}
