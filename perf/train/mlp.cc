#include "perf/train/mlp.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace squeeze::perf {

namespace {

std::vector<float> normal(std::size_t n, double stddev, std::mt19937_64& rng) {
  std::normal_distribution<double> d(0.0, stddev);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(d(rng));
  return v;
}

}  // namespace

Teacher::Teacher(const MlpShape& shape, std::size_t teacher_hidden, uint64_t seed)
    : shape_(shape), hidden_(teacher_hidden) {
  std::mt19937_64 rng(seed ^ 0x7eac4e7ull);
  w1_ = normal(shape.in * hidden_, 1.0 / std::sqrt(static_cast<double>(shape.in)), rng);
  w2_ = normal(hidden_ * shape.out, 1.0 / std::sqrt(static_cast<double>(hidden_)), rng);
}

Batch Teacher::draw(std::size_t n, uint64_t seed) const {
  std::mt19937_64 rng(seed);
  Batch b;
  b.n = n;
  b.x = normal(n * shape_.in, 1.0, rng);
  b.y.resize(n);
  std::vector<float> h(hidden_), z(shape_.out);
  for (std::size_t i = 0; i < n; ++i) {
    const float* x = b.x.data() + i * shape_.in;
    std::fill(h.begin(), h.end(), 0.0f);
    for (std::size_t k = 0; k < shape_.in; ++k)
      for (std::size_t j = 0; j < hidden_; ++j) h[j] += x[k] * w1_[k * hidden_ + j];
    std::fill(z.begin(), z.end(), 0.0f);
    for (std::size_t j = 0; j < hidden_; ++j) {
      const float t = std::tanh(h[j]);
      for (std::size_t c = 0; c < shape_.out; ++c) z[c] += t * w2_[j * shape_.out + c];
    }
    b.y[i] = static_cast<uint32_t>(std::max_element(z.begin(), z.end()) - z.begin());
  }
  return b;
}

Mlp::Mlp(const MlpShape& shape, uint64_t seed) : shape_(shape), p_(shape.params(), 0.0f) {
  std::mt19937_64 rng(seed ^ 0x51ed5eedull);
  const std::vector<float> w1 =
      normal(shape.in * shape.hidden, std::sqrt(2.0 / static_cast<double>(shape.in)), rng);
  const std::vector<float> w2 =
      normal(shape.hidden * shape.out, std::sqrt(2.0 / static_cast<double>(shape.hidden)), rng);
  std::copy(w1.begin(), w1.end(), p_.begin());
  std::copy(w2.begin(), w2.end(),
            p_.begin() + static_cast<std::ptrdiff_t>(w1.size() + shape.hidden));
}

double Mlp::loss(const Batch& b, std::vector<float>* grad) const {
  const std::size_t in = shape_.in, hid = shape_.hidden, out = shape_.out;
  const float* w1 = p_.data();
  const float* b1 = w1 + in * hid;
  const float* w2 = b1 + hid;
  const float* b2 = w2 + hid * out;
  float *g1 = nullptr, *gb1 = nullptr, *g2 = nullptr, *gb2 = nullptr;
  if (grad != nullptr) {
    grad->assign(p_.size(), 0.0f);
    g1 = grad->data();
    gb1 = g1 + in * hid;
    g2 = gb1 + hid;
    gb2 = g2 + hid * out;
  }
  const auto inv_n = static_cast<float>(1.0 / static_cast<double>(b.n));
  std::vector<float> pre(hid), h(hid), z(out), dh(hid);
  double total = 0;
  for (std::size_t i = 0; i < b.n; ++i) {
    const float* x = b.x.data() + i * in;
    std::copy(b1, b1 + hid, pre.begin());
    for (std::size_t k = 0; k < in; ++k) {
      const float xk = x[k];
      const float* row = w1 + k * hid;
      for (std::size_t j = 0; j < hid; ++j) pre[j] += xk * row[j];
    }
    for (std::size_t j = 0; j < hid; ++j) h[j] = std::max(pre[j], 0.0f);
    std::copy(b2, b2 + out, z.begin());
    for (std::size_t j = 0; j < hid; ++j)
      for (std::size_t c = 0; c < out; ++c) z[c] += h[j] * w2[j * out + c];
    const float zmax = *std::max_element(z.begin(), z.end());
    double sum = 0;
    for (float v : z) sum += std::exp(static_cast<double>(v - zmax));
    const uint32_t y = b.y[i];
    total += std::log(sum) - static_cast<double>(z[y] - zmax);
    if (grad == nullptr) continue;
    // dL/dz = softmax - onehot, averaged over the batch.
    for (std::size_t c = 0; c < out; ++c) {
      const double p = std::exp(static_cast<double>(z[c] - zmax)) / sum;
      z[c] = static_cast<float>(p - (c == y ? 1.0 : 0.0)) * inv_n;
    }
    for (std::size_t j = 0; j < hid; ++j) {
      float d = 0;
      for (std::size_t c = 0; c < out; ++c) {
        g2[j * out + c] += h[j] * z[c];
        d += w2[j * out + c] * z[c];
      }
      dh[j] = pre[j] > 0.0f ? d : 0.0f;
      gb1[j] += dh[j];
    }
    for (std::size_t c = 0; c < out; ++c) gb2[c] += z[c];
    for (std::size_t k = 0; k < in; ++k) {
      const float xk = x[k];
      float* row = g1 + k * hid;
      for (std::size_t j = 0; j < hid; ++j) row[j] += xk * dh[j];
    }
  }
  return total / static_cast<double>(b.n);
}

void Sgd::step(std::vector<float>& params, const std::vector<float>& grad) {
  const auto lr = static_cast<float>(lr_), m = static_cast<float>(momentum_);
  for (std::size_t i = 0; i < params.size(); ++i) {
    v_[i] = m * v_[i] + grad[i];
    params[i] -= lr * v_[i];
  }
}

}  // namespace squeeze::perf
