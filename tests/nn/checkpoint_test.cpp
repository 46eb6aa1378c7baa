// Activation checkpointing (nn/layers/checkpoint.h): the same gradients, bit for bit, as the
// plain run; the same dropout masks; BatchNorm's running statistics updated once; the recompute
// visible as its own phase with exactly the checkpointed modules' forward FLOPs; a lower peak.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "nn/layers/checkpoint.h"
#include "nn/models/resnet.h"
#include "nn/models/zoo.h"
#include "nn/nn.h"
#include "nn_test_util.h"
#include "profiler/aggregate.h"
#include "profiler/reports.h"
#include "profiler/session.h"
#include "tensor/autograd/grad_mode.h"
#include "tensor/autograd/node.h"
#include "tensor/ops.h"
#include "tensor/random.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace prism::nn {
namespace {

using test::OneThread;

// Whether a and b hold the same bits (float32, same shape).
bool same_bits(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || !(a.shape() == b.shape())) return false;
  const Tensor ca = a.contiguous(), cb = b.contiguous();
  return std::memcmp(ca.data<float>(), cb.data<float>(),
                     static_cast<size_t>(ca.numel()) * sizeof(float)) == 0;
}

// Every parameter's gradient (and every buffer) of `a` equals `b`'s bit for bit.
void check_same_state(const Module& a, const Module& b) {
  const NamedTensors pa = a.named_parameters(), pb = b.named_parameters();
  REQUIRE(pa.size() == pb.size());
  for (size_t i = 0; i < pa.size(); ++i) {
    CAPTURE(pa[i].first);
    REQUIRE(pa[i].first == pb[i].first);  // checkpointing changes no name
    CHECK(same_bits(pa[i].second.grad(), pb[i].second.grad()));
  }
  const NamedTensors ba = a.named_buffers(), bb = b.named_buffers();
  REQUIRE(ba.size() == bb.size());
  for (size_t i = 0; i < ba.size(); ++i) {
    CAPTURE(ba[i].first);
    CHECK(same_bits(ba[i].second, bb[i].second));
  }
}

ModelOptions tiny_gpt(const std::string& checkpoint) {
  ModelOptions o;
  o.vocab = 11;
  o.block_size = 7;
  o.width = 16;  // 4 heads of 4
  o.depth = 3;
  o.dropout = 0.3;
  o.checkpoint = checkpoint;
  return o;
}

// One training step's forward and backward on token ids [2, 7]; returns the loss.
Tensor gpt_step(Module& model) {
  std::vector<int64_t> ids(14), next(14);
  for (int64_t i = 0; i < 14; ++i) {
    ids[static_cast<size_t>(i)] = (3 * i + 1) % 11;
    next[static_cast<size_t>(i)] = (3 * i + 4) % 11;
  }
  Tensor logits = model(from_vector(ids, {2, 7}));
  Tensor loss = cross_entropy(logits.view({14, 11}), from_vector(next, {14}));
  loss.backward();
  return loss;
}

ModelOptions tiny_resnet(const std::string& checkpoint) {
  ModelOptions o;
  o.image_size = 8;
  o.num_classes = 3;
  o.checkpoint = checkpoint;
  return o;
}

Tensor resnet_step(Module& model) {
  Tensor x = randn({2, 3, 8, 8});
  Tensor loss = cross_entropy(model(x), from_vector(std::vector<int64_t>{2, 0}, {2}));
  loss.backward();
  return loss;
}

// Builds the model twice from the same seed, plain and checkpointed, runs `step` on each from
// the same generator state, and checks loss, gradients, buffers and the generator's next draw.
template <class Step>
void check_identical(const std::string& name, const ModelOptions& plain_o,
                     const ModelOptions& ckpt_o, Step step) {
  OneThread one;
  manual_seed(42);
  auto plain = make_model(name, plain_o);
  manual_seed(42);
  auto ckpt = make_model(name, ckpt_o);
  manual_seed(7);
  const Tensor loss_plain = step(*plain);
  const uint64_t next_plain = default_generator().next_u64();
  manual_seed(7);
  const Tensor loss_ckpt = step(*ckpt);
  const uint64_t next_ckpt = default_generator().next_u64();
  CHECK(same_bits(loss_plain, loss_ckpt));
  check_same_state(*plain, *ckpt);
  // The recompute rewound the generator and put it back: later draws are the plain run's.
  CHECK(next_plain == next_ckpt);
}

TEST_CASE("checkpoint: transformer gradients are bit for bit those of the plain run") {
  check_identical("transformer", tiny_gpt(""), tiny_gpt("blocks"), gpt_step);
  check_identical("transformer", tiny_gpt(""), tiny_gpt("every-2"), gpt_step);
}

TEST_CASE("checkpoint: resnet18 gradients and BatchNorm running statistics match the plain run") {
  // The running statistics are buffers: check_same_state compares them, so an update made a
  // second time by the recompute (momentum applied twice) fails here.
  // One model, stepped twice from the same state (building two 11.7M-parameter models would
  // take most of this test's time): plain, then with every block checkpointed.
  OneThread one;
  manual_seed(42);
  auto model = make_model("resnet18", tiny_resnet(""));
  auto* resnet = dynamic_cast<ResNet*>(model.get());
  REQUIRE(resnet);
  std::vector<Tensor> start;  // the running statistics before the step
  for (const Tensor& b : model->buffers()) start.push_back(clone(b));

  struct After {
    Tensor loss;
    std::vector<Tensor> grads, buffers;
    uint64_t next_draw;
  };
  auto step = [&] {
    for (size_t i = 0; i < start.size(); ++i) assign(model->buffers()[i], clone(start[i]));
    model->zero_grad();
    manual_seed(7);
    After a;
    a.loss = resnet_step(*model);
    a.next_draw = default_generator().next_u64();
    for (const Tensor& p : model->parameters()) a.grads.push_back(p.grad());
    for (const Tensor& b : model->buffers()) a.buffers.push_back(clone(b));
    return a;
  };
  const After plain = step();
  int blocks = 0;
  for (const auto* stage : {&resnet->layer1, &resnet->layer2, &resnet->layer3, &resnet->layer4}) {
    for (size_t i = 0; i < (*stage)->size(); ++i, ++blocks) (**stage)[i]->set_checkpointed();
  }
  CHECK(blocks == 8);
  const After ckpt = step();
  CHECK(same_bits(plain.loss, ckpt.loss));
  CHECK(plain.next_draw == ckpt.next_draw);
  for (size_t i = 0; i < plain.grads.size(); ++i) CHECK(same_bits(plain.grads[i], ckpt.grads[i]));
  REQUIRE(plain.buffers.size() == 40);  // 20 BatchNorms: running mean and variance
  for (size_t i = 0; i < plain.buffers.size(); ++i) {
    CHECK(same_bits(plain.buffers[i], ckpt.buffers[i]));
  }
  // And the statistics moved in the step (a recompute that updated them again would differ).
  CHECK_FALSE(same_bits(start[0], ckpt.buffers[0]));
}

TEST_CASE("checkpoint: a dropout inside the checkpointed module draws the same mask again") {
  OneThread one;
  auto make = [](bool checkpointed) {
    manual_seed(3);
    auto seq = std::make_shared<Sequential>();
    seq->emplace<Linear>(5, 13);
    seq->emplace<Dropout>(0.5);
    seq->emplace<ReLU>();
    seq->emplace<Linear>(13, 3);
    seq->set_checkpointed(checkpointed);
    return seq;
  };
  auto plain = make(false), ckpt = make(true);
  Tensor x = randn({4, 5});
  Tensor dx[2];
  for (int k = 0; k < 2; ++k) {
    Tensor xi = x.detach();
    xi.set_requires_grad(true);
    manual_seed(11);
    Tensor y = (*(k == 0 ? plain : ckpt))(xi);
    sum(y).backward();
    dx[k] = xi.grad();
  }
  // The mask decides which hidden units pass a gradient: a different mask in the recompute
  // would change both the input's and the first layer's gradients.
  CHECK(same_bits(dx[0], dx[1]));
  check_same_state(*plain, *ckpt);
}

TEST_CASE("checkpoint: an input without grad, nested checkpoints and eval mode") {
  OneThread one;
  auto make = [](bool checkpointed) {
    manual_seed(5);
    auto inner = std::make_shared<Sequential>();
    inner->emplace<Linear>(6, 6);
    inner->emplace<Tanh>();
    auto outer = std::make_shared<Sequential>();
    outer->emplace<Linear>(4, 6);
    outer->push_back(inner);
    outer->emplace<Linear>(6, 2);
    inner->set_checkpointed(checkpointed);  // a checkpoint inside a checkpoint:
    outer->set_checkpointed(checkpointed);  // the engine runs nested two deep
    return outer;
  };
  auto plain = make(false), ckpt = make(true);
  Tensor x = randn({3, 4});  // requires no grad: the node is recorded for the parameters
  sum((*plain)(x)).backward();
  Tensor y = (*ckpt)(x);
  REQUIRE(y.grad_fn());
  CHECK(std::string(y.grad_fn()->op()) == "checkpoint");
  sum(y).backward();
  check_same_state(*plain, *ckpt);

  // A module that returns its input unchanged: no node, and the input's own graph is intact.
  auto identity = std::make_shared<Dropout>(0.0);
  identity->set_checkpointed();
  Tensor h = (*plain)(x);
  CHECK((*identity)(h).grad_fn() == h.grad_fn());

  // Under NoGrad (evaluation) a checkpointed module is a plain call: nothing recorded.
  NoGrad no_grad;
  CHECK_FALSE((*ckpt)(x).requires_grad());
}

TEST_CASE("checkpoint: a parameter changed in place before backward is refused") {
  auto lin = std::make_shared<Linear>(3, 2);
  lin->set_checkpointed();
  Tensor y = sum((*lin)(randn({2, 3})));
  lin->weight.bump_version();  // as an in-place optimizer update would
  CHECK_ERROR("checkpoint", y.backward());
}

// Sums the FLOPs of the recompute's op records, and those of the recompute and of the forward
// inside module `path` (its own ops and its descendants').
struct PhaseFlops {
  int64_t recompute = 0, forward_under_prefix = 0, recompute_under_prefix = 0;
};

PhaseFlops phase_flops(const profiler::Profile& p, const std::string& module) {
  PhaseFlops f;
  const auto& paths = p.recording.scope_paths;
  for (const profiler::OpRecord& r : p.recording.records) {
    if (r.kind != profiler::Kind::op) continue;
    const std::string& path = paths[static_cast<size_t>(r.scope)];
    const bool under = path == module || path.rfind(module + ".", 0) == 0;
    if (r.phase == profiler::Phase::recompute) {
      f.recompute += r.cost.flops;
      if (under) f.recompute_under_prefix += r.cost.flops;
    }
    if (r.phase == profiler::Phase::forward && under) f.forward_under_prefix += r.cost.flops;
  }
  return f;
}

TEST_CASE("checkpoint: the profile shows the recompute, with the blocks' forward FLOPs exactly") {
  OneThread one;
  manual_seed(1);
  auto model = make_model("transformer", tiny_gpt("blocks"));
  profiler::Session session;
  gpt_step(*model);
  const profiler::Profile& p = session.stop();
  const PhaseFlops f = phase_flops(p, "model.blocks");
  // Every block is checkpointed: the recompute is one more forward of each, under its own path.
  CHECK(f.recompute > 0);
  CHECK(f.recompute == f.forward_under_prefix);
  CHECK(f.recompute_under_prefix == f.recompute);

  bool row = false;
  for (const profiler::OpRow& r : profiler::aggregate_ops(p)) {
    row = row || r.phase == profiler::Phase::recompute;
  }
  CHECK(row);
  CHECK(profiler::format_table(p).find("recompute") != std::string::npos);
  const std::string tree = profiler::format_tree(p);
  CHECK(tree.find("rec ") != std::string::npos);
  for (const profiler::ScopeRow& r : profiler::aggregate_scopes(p)) {
    if (r.path == "model.blocks") CHECK(r.cost[3].flops == f.recompute);
  }
  CHECK(profiler::profile_json(p).find("\"rec_flops\"") != std::string::npos);
  CHECK(profiler::trace_json(p).find("recompute") != std::string::npos);
}

TEST_CASE("checkpoint: every-2 recomputes blocks 0 and 2 only") {
  OneThread one;
  manual_seed(1);
  auto model = make_model("transformer", tiny_gpt("every-2"));
  profiler::Session session;
  gpt_step(*model);
  const profiler::Profile& p = session.stop();
  const PhaseFlops b0 = phase_flops(p, "model.blocks.0"), b1 = phase_flops(p, "model.blocks.1"),
                   b2 = phase_flops(p, "model.blocks.2");
  CHECK(b0.recompute_under_prefix == b0.forward_under_prefix);
  CHECK(b1.recompute_under_prefix == 0);
  CHECK(b2.recompute_under_prefix == b2.forward_under_prefix);
  CHECK(b0.recompute_under_prefix + b2.recompute_under_prefix == b0.recompute);
}

TEST_CASE("checkpoint: the peak memory of a step is lower") {
  OneThread one;
  ModelOptions o = tiny_gpt("");
  o.block_size = 32;
  o.depth = 6;
  auto step_on = [&](const std::string& ckpt) {
    o.checkpoint = ckpt;
    manual_seed(1);
    auto model = make_model("transformer", o);
    std::vector<int64_t> ids(64);
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<int64_t>(i * 5 % 11);
    const Tensor idx = from_vector(ids, {2, 32});
    profiler::reset_peak();
    const int64_t before = profiler::memory_stats().live_bytes;
    Tensor logits = (*model)(idx);
    cross_entropy(logits.view({64, 11}), idx.view({64})).backward();
    return profiler::memory_stats().peak_bytes - before;
  };
  const int64_t plain = step_on(""), blocks = step_on("blocks"), every2 = step_on("every-2");
  MESSAGE("peak above the parameters: plain " << plain << " B, every-2 " << every2 << " B, blocks "
                                              << blocks << " B");
  CHECK(blocks < plain);
  CHECK(every2 < plain);
  CHECK(blocks <= every2);
  // Deterministic: the same run gives the same peak, to the byte.
  CHECK(step_on("blocks") == blocks);
}

TEST_CASE("checkpoint: bad values and models without blocks are errors") {
  CHECK(checkpoint_stride("", "t") == 0);
  CHECK(checkpoint_stride("blocks", "t") == 1);
  CHECK(checkpoint_stride("every-3", "t") == 3);
  CHECK_ERROR("accepted: blocks (every block) or every-N", checkpoint_stride("every-0", "t"));
  CHECK_ERROR("unknown checkpoint value 'every-'", checkpoint_stride("every-", "t"));
  CHECK_ERROR("unknown checkpoint value 'every-2x'", checkpoint_stride("every-2x", "t"));
  CHECK_ERROR("unknown checkpoint value 'all'", make_model("transformer", tiny_gpt("all")));
  ModelOptions o;
  o.checkpoint = "blocks";
  CHECK_ERROR("make_model(mlp): checkpoint 'blocks' needs a model made of blocks",
              make_model("mlp", o));
  CHECK_ERROR("needs a model made of blocks", default_input("cnn", o));

  // What the zoo marks: every-2 of 3 blocks is blocks 0 and 2; names are unchanged.
  {
    DefaultDevice meta(Device::meta);
    auto m = make_model("transformer", tiny_gpt("every-2"));
    std::vector<std::string> marked;
    m->walk([&](const std::string& path, const Module& mod, int) {
      if (mod.is_checkpointed()) marked.push_back(path);
    });
    CHECK(marked == std::vector<std::string>{"blocks.0", "blocks.2"});
    CHECK(m->tree().find("[checkpointed]") != std::string::npos);
  }
}

}  // namespace
}  // namespace prism::nn
