//===- ApiFixture.h - Operators through the JIT API -------------*- C++ -*-===//
//
// A context on the backend under test (testBackend(): the suites compile
// once and link into one executable per backend) and the helpers that place
// reference data on it in either memory layout and read it back.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TEST_API_APIFIXTURE_H
#define RUDNN_TEST_API_APIFIXTURE_H

#include "runtime/backends/CudaBackend.h"
#include "test/support/KdaProblem.h"

#include "rudnn/rudnn.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>

namespace rudnn::test {

enum class Layout { BTHD, BHTD };

/// The backend this executable's suites run on: defined by the one-line
/// source each executable adds (EmulationBackendMain.cpp, CudaBackendMain.cpp).
BackendKind testBackend();

/// A tensor in the context's device memory and its view.
struct DeviceTensor {
  std::unique_ptr<DeviceBuffer> buffer;
  TensorView view;
};

/// Rounds each of `data` to `dtype`, so a reference sees what kernels read.
inline void roundTo(DType dtype,
                    std::initializer_list<std::vector<double> *> data) {
  for (std::vector<double> *values : data)
    for (double &x : *values) { // as `store` rounds them: through float
      const float narrow = static_cast<float>(x);
      x = dtype == DType::BF16
              ? runtime::fromBfloat16(runtime::toBfloat16(narrow))
          : dtype == DType::F16
              ? runtime::fromFloat16(runtime::toFloat16(narrow))
              : static_cast<double>(narrow);
    }
}

/// `values` as the raw bytes of element type T (i32 lengths, bool masks).
template <typename T>
std::vector<unsigned char> bytesOf(const std::vector<double> &values) {
  std::vector<unsigned char> bytes(values.size() * sizeof(T));
  for (size_t i = 0; i < values.size(); ++i) {
    const T x = static_cast<T>(values[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &x, sizeof(T));
  }
  return bytes;
}

/// "T65_K64_V60_C32_bf16", the start of a numerics case's name.
inline std::string shapeName(int T, int K, int V, int chunk, DType dtype) {
  return "T" + std::to_string(T) + "_K" + std::to_string(K) + "_V" +
         std::to_string(V) + "_C" + std::to_string(chunk) + "_" +
         dtypeName(dtype);
}

/// "_BHTD" or "_BTHD", then "_steep" for g down to −20 per step, "_mild"
/// for g above −0.1.
inline std::string layoutAndDecayName(Layout layout, double gMin) {
  return std::string(layout == Layout::BHTD ? "_BHTD" : "_BTHD") +
         (gMin <= -20 ? "_steep" : "") + (gMin > -0.1 ? "_mild" : "");
}

class ApiTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() { openContext("sm_90"); }
  /// The suite's context, specializing for `arch` where no device decides
  /// (emulation). Its kernels are cached on disk in the build folder, where
  /// every test process finds the kernels earlier ones compiled: most of an
  /// emulated test's time is compiling its kernels on the host.
  static void openContext(const std::string &arch) {
    ContextOptions options;
    options.backend = testBackend();
    options.cacheDirectory = RUDNN_TEST_KERNEL_CACHE_DIR;
    options.arch = arch;
    context = new Context(options);
  }
  static void TearDownTestSuite() {
    delete context;
    context = nullptr;
  }
  void SetUp() override {
    if (testBackend() == BackendKind::Cuda && !runtime::cudaAvailable())
      GTEST_SKIP() << "no CUDA device";
  }

  /// Kernels the context compiled or read from the disk cache: what a call
  /// that specialized anew adds, whichever process compiled the kernel.
  static uint64_t kernelsBuilt(const Counters &counters) {
    return counters.kernelsCompiled + counters.kernelCacheDiskHits;
  }

  /// [B, T, H, width] data (row-major doubles) placed as `dtype` in `layout`.
  DeviceTensor sequence(const std::vector<double> &data, int64_t B, int64_t T,
                        int64_t H, int64_t width, DType dtype, Layout layout,
                        bool rank3 = false) {
    std::vector<int64_t> strides =
        layout == Layout::BTHD
            ? std::vector<int64_t>{T * H * width, H * width, width, 1}
            : std::vector<int64_t>{H * T * width, width, T * width, 1};
    std::vector<unsigned char> bytes(B * T * H * width * dtypeSize(dtype));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < width; ++d) {
            float x =
                static_cast<float>(data[((b * T + t) * H + h) * width + d]);
            int64_t at = b * strides[0] + t * strides[1] + h * strides[2] + d;
            store(bytes.data(), at, x, dtype);
          }
    DeviceTensor tensor = upload(bytes, dtype);
    tensor.view.shape = rank3 ? std::vector<int64_t>{B, T, H}
                              : std::vector<int64_t>{B, T, H, width};
    if (rank3) // beta: [B, T, H], one value per token and head
      strides.pop_back();
    tensor.view.strides = strides;
    return tensor;
  }

  DeviceTensor dense(const std::vector<double> &data,
                     std::vector<int64_t> shape, DType dtype = DType::F32) {
    std::vector<unsigned char> bytes(data.size() * dtypeSize(dtype));
    for (size_t i = 0; i < data.size(); ++i)
      store(bytes.data(), i, static_cast<float>(data[i]), dtype);
    DeviceTensor tensor = upload(bytes, dtype);
    tensor.view = TensorView::contiguous(tensor.view.data, dtype, shape);
    return tensor;
  }

  /// Packed batches' offsets, [C] i32.
  DeviceTensor offsets(const std::vector<double> &values) {
    DeviceTensor tensor = upload(bytesOf<int32_t>(values), DType::I32);
    tensor.view = TensorView::contiguous(tensor.view.data, DType::I32,
                                         {int64_t(values.size())});
    return tensor;
  }

  std::vector<double> read(const DeviceTensor &tensor, size_t elements) {
    std::vector<unsigned char> bytes(elements * dtypeSize(tensor.view.dtype));
    context->copyToHost(bytes.data(), tensor.view.data, bytes.size());
    context->synchronize();
    std::vector<double> values(elements);
    for (size_t i = 0; i < elements; ++i)
      values[i] = load(bytes.data(), i, tensor.view.dtype);
    return values;
  }

  /// Reads a sequence tensor back in [B, T, H, width] order.
  std::vector<double> readSequence(const DeviceTensor &tensor, int64_t B,
                                   int64_t T, int64_t H, int64_t width) {
    const std::vector<int64_t> &s = tensor.view.strides;
    std::vector<double> raw = read(tensor, B * T * H * width);
    std::vector<double> values(B * T * H * width);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < H; ++h)
          for (int64_t d = 0; d < width; ++d)
            values[((b * T + t) * H + h) * width + d] =
                raw[b * s[0] + t * s[1] + h * s[2] + d];
    return values;
  }

  static void store(unsigned char *bytes, int64_t at, float x, DType dtype) {
    if (dtype == DType::F32) {
      std::memcpy(bytes + 4 * at, &x, 4);
    } else {
      uint16_t bits =
          dtype == DType::BF16 ? runtime::toBfloat16(x) : runtime::toFloat16(x);
      std::memcpy(bytes + 2 * at, &bits, 2);
    }
  }
  static double load(const unsigned char *bytes, size_t at, DType dtype) {
    if (dtype == DType::F32) {
      float x;
      std::memcpy(&x, bytes + 4 * at, 4);
      return x;
    }
    uint16_t bits;
    std::memcpy(&bits, bytes + 2 * at, 2);
    return dtype == DType::BF16 ? runtime::fromBfloat16(bits)
                                : runtime::fromFloat16(bits);
  }

  DeviceTensor upload(const std::vector<unsigned char> &bytes, DType dtype) {
    DeviceTensor tensor;
    tensor.buffer = std::make_unique<DeviceBuffer>(*context, bytes.size());
    context->copyToDevice(tensor.buffer->data(), bytes.data(), bytes.size());
    tensor.view.data = tensor.buffer->data();
    tensor.view.dtype = dtype;
    return tensor;
  }

  static inline Context *context = nullptr;
};

} // namespace rudnn::test

#endif // RUDNN_TEST_API_APIFIXTURE_H
