//===- KdaChunked.cpp - The chunked KDA backward, in float64 --------------===//
//
// Per chunk of L tokens, with Γ the inclusive cumsum of g, e_ij = e^(Γi−Γj),
// S0 the state at the chunk start:
//   A_ij  = β_i Σ_d k_id k_jd e_ijd (j < i)    Bm_ij = Σ_d q_id k_jd e_ijd (j ≤
//   i) M = (I + A)⁻¹,  W = M (β k ⊙ e^Γ),  U0 = M (β v),  U = U0 − W S0 O =
//   scale (Qd S0 + Bm U),  Qd = q ⊙ e^Γ S_end = diag(e^Γlast) S0 + Kdᵀ U,  Kd =
//   k ⊙ e^(Γlast − Γ)
// Backward, from dO and dS_end:
//   dU = scale Bmᵀ dO + Kd dS_end
//   dS0 = scale Qdᵀ dO + diag(e^Γlast) dS_end − Wᵀ dU     (the reverse walk)
//   dRw = Mᵀ(−dU S0ᵀ),  dRu = Mᵀ dU,  dA = −(dRw Wᵀ + dRu U0ᵀ) (j < i)
// and the chain rule through A, Bm, Qd, Kd, e^Γlast and the right-hand
// sides to q, k, v, β and Γ; dg is the reverse cumsum of dΓ in the chunk.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/kda/KdaChunked.h"

#include <cmath>

using namespace rudnn::reference;

namespace {

/// A dense row-major matrix.
struct Matrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> data;
  Matrix() = default;
  Matrix(int64_t r, int64_t c) : rows(r), cols(c), data(r * c, 0.0) {}
  double &operator()(int64_t i, int64_t j) { return data[i * cols + j]; }
  double operator()(int64_t i, int64_t j) const { return data[i * cols + j]; }
};

/// One chunk's forward quantities.
struct ChunkForward {
  int64_t t0, L;
  Matrix gamma, A, Bm, W, U0, U, S0; // L×K, L×L, L×L, L×K, L×V, L×V, K×V
};

} // namespace

KdaGradients rudnn::reference::kdaBackwardChunked(
    const KdaShape &shape, const KdaInputs &in, double scale,
    const std::vector<double> &dOutput, const std::vector<double> &dFinal,
    int64_t chunk) {
  const int64_t B = shape.batch, T = shape.length, H = shape.heads;
  const int64_t K = shape.featureK, V = shape.featureV;
  KdaGradients grad = zeroGradients(shape);

  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      auto row = [&](int64_t t) { return (b * T + t) * H + h; };
      auto q = [&](int64_t t, int64_t d) { return in.q[row(t) * K + d]; };
      auto k = [&](int64_t t, int64_t d) { return in.k[row(t) * K + d]; };
      auto v = [&](int64_t t, int64_t j) { return in.v[row(t) * V + j]; };
      auto beta = [&](int64_t t) { return in.beta[row(t)]; };
      const int64_t stateOffset = (b * H + h) * K * V;

      // Forward, chunk by chunk.
      std::vector<ChunkForward> chunks;
      Matrix S(K, V);
      if (!in.initialState.empty())
        for (int64_t i = 0; i < K * V; ++i)
          S.data[i] = in.initialState[stateOffset + i];
      for (int64_t t0 = 0; t0 < T; t0 += chunk) {
        ChunkForward c;
        c.t0 = t0;
        c.L = std::min(chunk, T - t0);
        const int64_t L = c.L;
        c.S0 = S;
        c.gamma = Matrix(L, K);
        for (int64_t d = 0; d < K; ++d) {
          double running = 0;
          for (int64_t i = 0; i < L; ++i)
            c.gamma(i, d) = running += in.g[row(t0 + i) * K + d];
        }
        auto e = [&](int64_t i, int64_t j, int64_t d) {
          return std::exp(c.gamma(i, d) - c.gamma(j, d));
        };
        c.A = Matrix(L, L);
        c.Bm = Matrix(L, L);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j <= i; ++j)
            for (int64_t d = 0; d < K; ++d) {
              if (j < i)
                c.A(i, j) +=
                    beta(t0 + i) * k(t0 + i, d) * k(t0 + j, d) * e(i, j, d);
              c.Bm(i, j) += q(t0 + i, d) * k(t0 + j, d) * e(i, j, d);
            }
        // W = M Rw, U0 = M Ru by forward substitution.
        c.W = Matrix(L, K);
        c.U0 = Matrix(L, V);
        for (int64_t i = 0; i < L; ++i) {
          for (int64_t d = 0; d < K; ++d) {
            double x = beta(t0 + i) * k(t0 + i, d) * std::exp(c.gamma(i, d));
            for (int64_t j = 0; j < i; ++j)
              x -= c.A(i, j) * c.W(j, d);
            c.W(i, d) = x;
          }
          for (int64_t col = 0; col < V; ++col) {
            double x = beta(t0 + i) * v(t0 + i, col);
            for (int64_t j = 0; j < i; ++j)
              x -= c.A(i, j) * c.U0(j, col);
            c.U0(i, col) = x;
          }
        }
        c.U = Matrix(L, V);
        for (int64_t i = 0; i < L; ++i)
          for (int64_t col = 0; col < V; ++col) {
            double x = c.U0(i, col);
            for (int64_t d = 0; d < K; ++d)
              x -= c.W(i, d) * S(d, col);
            c.U(i, col) = x;
          }
        Matrix next(K, V);
        for (int64_t d = 0; d < K; ++d)
          for (int64_t col = 0; col < V; ++col) {
            double x = std::exp(c.gamma(L - 1, d)) * S(d, col);
            for (int64_t i = 0; i < L; ++i)
              x += k(t0 + i, d) * std::exp(c.gamma(L - 1, d) - c.gamma(i, d)) *
                   c.U(i, col);
            next(d, col) = x;
          }
        S = next;
        chunks.push_back(std::move(c));
      }

      // Backward, chunks in reverse.
      Matrix dS(K, V);
      if (!dFinal.empty())
        for (int64_t i = 0; i < K * V; ++i)
          dS.data[i] = dFinal[stateOffset + i];
      for (auto c = chunks.rbegin(); c != chunks.rend(); ++c) {
        const int64_t t0 = c->t0, L = c->L;
        auto dO = [&](int64_t i, int64_t j) {
          return dOutput[row(t0 + i) * V + j];
        };
        auto eLast = [&](int64_t i, int64_t d) {
          return std::exp(c->gamma(L - 1, d) - c->gamma(i, d));
        };
        Matrix dGamma(L, K);
        // dU = scale Bmᵀ dO + Kd dS_end
        Matrix dU(L, V);
        for (int64_t s = 0; s < L; ++s)
          for (int64_t j = 0; j < V; ++j) {
            double x = 0;
            for (int64_t i = s; i < L; ++i)
              x += scale * c->Bm(i, s) * dO(i, j);
            for (int64_t d = 0; d < K; ++d)
              x += k(t0 + s, d) * eLast(s, d) * dS(d, j);
            dU(s, j) = x;
          }
        // Through Qd, Kd, e^Γlast (before dS becomes dS0).
        for (int64_t i = 0; i < L; ++i)
          for (int64_t d = 0; d < K; ++d) {
            double dQd = 0, dKd = 0;
            for (int64_t j = 0; j < V; ++j) {
              dQd += scale * dO(i, j) * c->S0(d, j);
              dKd += c->U(i, j) * dS(d, j);
            }
            const double eg = std::exp(c->gamma(i, d));
            grad.dq[row(t0 + i) * K + d] += dQd * eg;
            dGamma(i, d) += dQd * q(t0 + i, d) * eg;
            const double kd = k(t0 + i, d) * eLast(i, d);
            grad.dk[row(t0 + i) * K + d] += dKd * eLast(i, d);
            dGamma(L - 1, d) += dKd * kd;
            dGamma(i, d) -= dKd * kd;
          }
        for (int64_t d = 0; d < K; ++d) {
          double sum = 0;
          for (int64_t j = 0; j < V; ++j)
            sum += dS(d, j) * c->S0(d, j);
          dGamma(L - 1, d) += std::exp(c->gamma(L - 1, d)) * sum;
        }
        // dS0 = scale Qdᵀ dO + diag(e^Γlast) dS_end − Wᵀ dU
        Matrix dS0(K, V);
        for (int64_t d = 0; d < K; ++d)
          for (int64_t j = 0; j < V; ++j) {
            double x = std::exp(c->gamma(L - 1, d)) * dS(d, j);
            for (int64_t i = 0; i < L; ++i)
              x += scale * q(t0 + i, d) * std::exp(c->gamma(i, d)) * dO(i, j) -
                   c->W(i, d) * dU(i, j);
            dS0(d, j) = x;
          }
        // dBm = scale dO Uᵀ (j ≤ i); dW = −dU S0ᵀ; dU0 = dU.
        Matrix dBm(L, L), dW(L, K);
        for (int64_t i = 0; i < L; ++i) {
          for (int64_t s = 0; s <= i; ++s)
            for (int64_t j = 0; j < V; ++j)
              dBm(i, s) += scale * dO(i, j) * c->U(s, j);
          for (int64_t d = 0; d < K; ++d)
            for (int64_t j = 0; j < V; ++j)
              dW(i, d) -= dU(i, j) * c->S0(d, j);
        }
        // dR = Mᵀ dX: back substitution with (I + A)ᵀ.
        Matrix dRw(L, K), dRu(L, V);
        for (int64_t i = L - 1; i >= 0; --i) {
          for (int64_t d = 0; d < K; ++d) {
            double x = dW(i, d);
            for (int64_t j = i + 1; j < L; ++j)
              x -= c->A(j, i) * dRw(j, d);
            dRw(i, d) = x;
          }
          for (int64_t col = 0; col < V; ++col) {
            double x = dU(i, col);
            for (int64_t j = i + 1; j < L; ++j)
              x -= c->A(j, i) * dRu(j, col);
            dRu(i, col) = x;
          }
        }
        // Right-hand sides Rw = β k ⊙ e^Γ, Ru = β v.
        for (int64_t i = 0; i < L; ++i) {
          double dBeta = 0;
          for (int64_t d = 0; d < K; ++d) {
            const double eg = std::exp(c->gamma(i, d));
            dBeta += dRw(i, d) * k(t0 + i, d) * eg;
            grad.dk[row(t0 + i) * K + d] += dRw(i, d) * beta(t0 + i) * eg;
            dGamma(i, d) += dRw(i, d) * beta(t0 + i) * k(t0 + i, d) * eg;
          }
          for (int64_t col = 0; col < V; ++col) {
            dBeta += dRu(i, col) * v(t0 + i, col);
            grad.dv[row(t0 + i) * V + col] += beta(t0 + i) * dRu(i, col);
          }
          grad.dbeta[row(t0 + i)] += dBeta;
        }
        // dA = −(dRw Wᵀ + dRu U0ᵀ), strictly lower; through A and Bm.
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j <= i; ++j) {
            double dA = 0;
            if (j < i) {
              for (int64_t d = 0; d < K; ++d)
                dA -= dRw(i, d) * c->W(j, d);
              for (int64_t col = 0; col < V; ++col)
                dA -= dRu(i, col) * c->U0(j, col);
            }
            double dBeta = 0;
            for (int64_t d = 0; d < K; ++d) {
              const double e = std::exp(c->gamma(i, d) - c->gamma(j, d));
              const double ki = k(t0 + i, d), kj = k(t0 + j, d);
              const double qi = q(t0 + i, d);
              const double termA = dA * beta(t0 + i) * ki * kj * e;
              const double termB = dBm(i, j) * qi * kj * e;
              dBeta += dA * ki * kj * e;
              grad.dk[row(t0 + i) * K + d] += dA * beta(t0 + i) * kj * e;
              grad.dk[row(t0 + j) * K + d] +=
                  dA * beta(t0 + i) * ki * e + dBm(i, j) * qi * e;
              grad.dq[row(t0 + i) * K + d] += dBm(i, j) * kj * e;
              dGamma(i, d) += termA + termB;
              dGamma(j, d) -= termA + termB;
            }
            grad.dbeta[row(t0 + i)] += dBeta;
          }
        // dg: the reverse cumulative sum of dΓ within the chunk.
        for (int64_t d = 0; d < K; ++d) {
          double running = 0;
          for (int64_t i = L - 1; i >= 0; --i) {
            running += dGamma(i, d);
            grad.dg[row(t0 + i) * K + d] = running;
          }
        }
        dS = dS0;
      }
      std::copy(dS.data.begin(), dS.data.end(),
                grad.dInitialState.begin() + stateOffset);
    }
  return grad;
}
