//===- attention/rotary.cuh - Rotary position embeddings ------------------===//
//
// The rotary embedding FlashAttention applies to a decoding step's new keys
// and queries: the first 2Q features of a row turn in pairs by the angle
// of the row's position, whose cosine and sine are row `position` of the
// tables [R, Q]. Pairs are (2p, 2p + 1) when interleaved (GPT-J's layout),
// else (p, p + Q) (GPT-NeoX's). Computed in f32, rounded once.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/tensor.cuh"

namespace rudnn {
namespace attention {

template <typename T> struct Rotary {
  const T *cos, *sin; // [rows, pairs], dense; null: no rotation
  int rows, pairs;
  bool interleaved;

  /// The features pair `pair` turns.
  __device__ __forceinline__ void features(int pair, int &first,
                                           int &second) const {
    first = interleaved ? 2 * pair : pair;
    second = interleaved ? 2 * pair + 1 : pair + pairs;
  }

  __device__ __forceinline__ void angle(int pair, int position, float &c,
                                        float &s) const {
    const long long at = static_cast<long long>(position) * pairs + pair;
    c = to_float(cos[at]);
    s = to_float(sin[at]);
  }

  /// Feature e of `row` turned at `position` (unturned past 2Q).
  __device__ __forceinline__ float feature(const T *row, int e,
                                           int position) const {
    if (e >= 2 * pairs)
      return to_float(row[e]);
    const int pair = interleaved ? e / 2 : e % pairs;
    int first = 0, second = 0;
    features(pair, first, second);
    float c = 0.f, s = 0.f;
    angle(pair, position, c, s);
    const float x = to_float(row[first]), y = to_float(row[second]);
    return e == first ? x * c - y * s : x * s + y * c;
  }

  /// Turns pair `pair` of a row in place at `position`; at(e) is feature
  /// e's element.
  template <typename At>
  __device__ __forceinline__ void turn(At &&at, int pair, int position) const {
    int first = 0, second = 0;
    features(pair, first, second);
    float c = 0.f, s = 0.f;
    angle(pair, position, c, s);
    T &a = at(first), &b = at(second);
    const float x = to_float(a), y = to_float(b);
    a = from_float<T>(x * c - y * s);
    b = from_float<T>(x * s + y * c);
  }
};

} // namespace attention
} // namespace rudnn
