//===- ViewChecksTest.cpp - The operator-independent view rules -----------===//

#include "runtime/checks/ViewChecks.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

using namespace rudnn;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

namespace {

TensorView view(uintptr_t address, DType dtype, std::vector<int64_t> shape,
                std::vector<int64_t> strides) {
  return {reinterpret_cast<void *>(address), dtype, std::move(shape),
          std::move(strides)};
}

// Views are never dereferenced here: any address will do.
constexpr uintptr_t kBase = 0x10000;

TEST(ViewChecks, ByteRangeSpansFirstToLastElement) {
  ByteRange range =
      checkedByteRange("x", view(kBase, DType::BF16, {2, 3, 4}, {40, 4, 1}));
  EXPECT_FALSE(range.empty);
  EXPECT_EQ(range.first, kBase);
  EXPECT_EQ(range.last, kBase + 2 * (40 + 2 * 4 + 3) + 1);
  // A zero dim holds no element, whatever the strides.
  EXPECT_TRUE(
      checkedByteRange("x", view(kBase, DType::F32, {0, 8}, {INT64_MAX, 1}))
          .empty);
}

TEST(ViewChecks, ExtentsPastInt64OrTheAddressSpaceAreNamed) {
  auto rejects = [](const TensorView &v, const std::string &message) {
    EXPECT_THAT([&] { checkedByteRange("x", v); },
                ThrowsMessage<InvalidArgument>(HasSubstr(message)))
        << v.describe();
  };
  rejects(view(kBase, DType::F32, {5, 8}, {int64_t(1) << 62, 1}),
          "'x' has a largest element offset");
  rejects(view(kBase, DType::F32, {2, 8}, {INT64_MAX, 1}),
          "'x' has a largest element offset");
  rejects(view(kBase, DType::F32, {2, 8}, {INT64_MAX / 3, 1}),
          "'x' has an extent in bytes that overflows int64");
  // The largest offset fits, its bytes do not: one element of 2 bytes.
  rejects(view(kBase, DType::BF16, {2, 1}, {INT64_MAX / 2 + 1, 1}),
          "'x' has an extent in bytes that overflows int64");
  rejects(view(UINTPTR_MAX - 15, DType::F32, {8}, {1}),
          "'x' runs past the end of the address space");
  rejects(view(kBase, DType::F32, {2, 8}, {-8, 1}),
          "'x' has a negative stride");
  rejects(view(kBase, DType::F32, {-2, 8}, {8, 1}), "'x' has a negative dim");
  rejects(view(kBase, DType::F32, {2, 8}, {8}), "'x' has 1 strides for rank 2");
  // The last byte of the address space is still addressable.
  EXPECT_EQ(
      checkedByteRange("x", view(UINTPTR_MAX - 31, DType::F32, {8}, {1})).last,
      UINTPTR_MAX);
}

TEST(ViewChecks, OutputsMustAddressDistinctElements) {
  auto accepts = [](std::vector<int64_t> shape, std::vector<int64_t> strides) {
    EXPECT_NO_THROW(
        checkNoSelfOverlap("y", view(kBase, DType::F32, shape, strides)));
  };
  auto rejects = [](std::vector<int64_t> shape, std::vector<int64_t> strides) {
    EXPECT_THAT(
        [&] {
          checkNoSelfOverlap("y", view(kBase, DType::F32, shape, strides));
        },
        ThrowsMessage<InvalidArgument>(HasSubstr("'y' overlaps itself")));
  };
  accepts({2, 5, 3, 4}, {60, 12, 4, 1}); // [B, T, H, D]
  accepts({2, 5, 3, 4}, {60, 4, 20, 1}); // [B, H, T, D] memory
  accepts({4, 2}, {1, 4});               // column-major
  accepts({2, 1, 4}, {4, 0, 1});         // a zero stride on a dim of size 1
  accepts({2, 4}, {100, 1});             // gaps between rows
  rejects({2, 5, 4}, {20, 0, 1});        // zero stride
  rejects({3, 3}, {2, 1});               // rows overlap by one element
  rejects({2, 5, 3, 4}, {60, 12, 2, 1}); // heads inside the features
  rejects({4, 4}, {4, 4});               // equal strides
}

TEST(ViewChecks, OutputsShareNoByteWithOutputsOrInputs) {
  const TensorView lower = view(kBase, DType::F32, {4, 8}, {8, 1});
  const TensorView upper = view(kBase + 128, DType::F32, {4, 8}, {8, 1});
  const TensorView straddling = view(kBase + 124, DType::F32, {2}, {1});
  // Adjacent halves of one buffer; inputs may overlap each other.
  EXPECT_NO_THROW(
      checkViewAliasing({{"a", &lower}, {"b", &lower}}, {{"out", &upper}}));
  EXPECT_THAT(
      [&] {
        checkViewAliasing({{"a", &lower}},
                          {{"out", &upper}, {"extra", &straddling}});
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'extra' overlaps 'out'")));
  EXPECT_THAT(
      [&] {
        checkViewAliasing({{"a", &lower}}, {{"out", &straddling}});
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'out' overlaps 'a'")));
  // Self-overlap is checked for outputs only.
  const TensorView broadcast = view(kBase + 512, DType::F32, {4, 8}, {0, 1});
  EXPECT_NO_THROW(checkViewAliasing({{"a", &broadcast}}, {{"out", &upper}}));
  EXPECT_THAT(
      [&] {
        checkViewAliasing({}, {{"out", &broadcast}});
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'out' overlaps itself")));
}

TEST(ViewChecks, InPlacePairsMustBeTheSameView) {
  const TensorView state = view(kBase, DType::F32, {4, 8}, {8, 1});
  const TensorView sameState = state;
  const TensorView transposed = view(kBase, DType::F32, {8, 4}, {1, 8});
  const std::vector<std::pair<std::string_view, std::string_view>> pair = {
      {"new", "old"}};
  EXPECT_NO_THROW(
      checkViewAliasing({{"old", &state}}, {{"new", &sameState}}, pair));
  EXPECT_THAT(
      [&] {
        checkViewAliasing({{"old", &state}}, {{"new", &transposed}}, pair);
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("exactly the same view")));
  // Only the listed pair, in its direction.
  EXPECT_THAT(
      [&] {
        checkViewAliasing({{"old", &state}}, {{"new", &sameState}});
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'new' overlaps 'old'")));
  EXPECT_THAT(
      [&] {
        checkViewAliasing({{"other", &state}}, {{"new", &sameState}}, pair);
      },
      ThrowsMessage<InvalidArgument>(HasSubstr("'new' overlaps 'other'")));
}

} // namespace
