// A small data-parallel training problem for squeeze-train-check: a two-layer MLP (ReLU hidden
// layer, softmax cross-entropy) learning a fixed random "teacher" network's labels from
// Gaussian inputs. Everything is deterministic from seeds: every rank builds the same model
// and evaluation set, and draws its own batches from (seed, rank, step), as data-parallel
// ranks read their own shards. All parameters live in one flat float vector, and so do the
// gradients: one tensor to all-reduce per step, as a DDP bucket.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace squeeze::perf {

struct MlpShape {
  std::size_t in = 128, hidden = 512, out = 10;
  std::size_t params() const { return in * hidden + hidden + hidden * out + out; }
};

// Inputs (n x in, row-major) and their labels.
struct Batch {
  std::vector<float> x;
  std::vector<uint32_t> y;
  std::size_t n = 0;
};

// The labelling rule: a random network with `teacher_hidden` tanh units; a label is the
// argmax of its logits. The same seed gives the same teacher on every rank.
class Teacher {
 public:
  Teacher(const MlpShape& shape, std::size_t teacher_hidden, uint64_t seed);
  // n samples drawn from the stream `seed` (inputs standard normal).
  Batch draw(std::size_t n, uint64_t seed) const;

 private:
  MlpShape shape_;
  std::size_t hidden_;
  std::vector<float> w1_, w2_;
};

class Mlp {
 public:
  // He-initialised from `seed` (biases 0).
  Mlp(const MlpShape& shape, uint64_t seed);

  const MlpShape& shape() const { return shape_; }
  std::vector<float>& params() { return p_; }
  const std::vector<float>& params() const { return p_; }
  // Mean cross-entropy of the batch; with `grad` (params() elements), its gradient.
  double loss(const Batch& b, std::vector<float>* grad) const;

 private:
  MlpShape shape_;
  std::vector<float> p_;
};

// SGD with momentum on the flat parameter vector: v = momentum * v + g; p -= lr * v.
class Sgd {
 public:
  Sgd(std::size_t n, double lr, double momentum) : v_(n, 0.0f), lr_(lr), momentum_(momentum) {}
  void step(std::vector<float>& params, const std::vector<float>& grad);

 private:
  std::vector<float> v_;
  double lr_, momentum_;
};

}  // namespace squeeze::perf
