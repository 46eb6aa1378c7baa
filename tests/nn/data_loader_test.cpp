// DataLoader (nn/data/loader.h): batch counts, every index once per epoch, seeded shuffles,
// prefetch giving exactly the batches of no prefetch, early exits, exceptions from the worker,
// and what the profiler and the memory tracker see.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nn/data/loader.h"
#include "nn/data/text.h"
#include "profiler/memory.h"
#include "profiler/session.h"
#include "tensor/ops.h"

using prism::Dims;
using prism::DType;
using prism::Tensor;
using namespace prism::nn::data;

namespace {

// Example i: input [2] = {i, -i} float32, target i (int64).
TensorDataset numbered(int64_t n) {
  std::vector<float> in;
  std::vector<int64_t> tg;
  for (int64_t i = 0; i < n; ++i) {
    in.push_back(static_cast<float>(i));
    in.push_back(static_cast<float>(-i));
    tg.push_back(i);
  }
  return TensorDataset(prism::from_vector(in, {n, 2}), prism::from_vector(tg, {n}));
}

// Every target, batch by batch, of one epoch (a range-for over the loader).
std::vector<std::vector<int64_t>> one_epoch(DataLoader& loader) {
  std::vector<std::vector<int64_t>> out;
  for (Batch& b : loader) out.push_back(b.target.to_vector<int64_t>());
  return out;
}

std::vector<int64_t> flat(const std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> all;
  for (const auto& b : batches) all.insert(all.end(), b.begin(), b.end());
  return all;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

// A data set with only get(): it goes through Dataset's default fill_batch. Throws at
// `bad_index` (if >= 0) with a std::runtime_error or a prism::Error. Notes the threads that
// called it.
class GetOnlyDataset : public Dataset {
 public:
  GetOnlyDataset(int64_t n, int64_t bad_index = -1, bool std_error = false)
      : bad_(bad_index), std_error_(std_error) {
    TensorDataset d = numbered(n);
    cols_ = d.inputs().t().contiguous();  // [2, n]: example i is column i, a strided view
    targets_ = d.targets();
  }
  int64_t size() const override { return targets_.size(0); }
  Example get(int64_t i) const override {
    {
      std::lock_guard lock(mu_);
      threads_.insert(std::this_thread::get_id());
    }
    if (i == bad_) {
      if (std_error_) throw std::runtime_error("plain failure at " + std::to_string(i));
      throw prism::Error("GetOnlyDataset: example " + std::to_string(i) + " is broken");
    }
    // A non-contiguous input (stride n) exercises the default fill_batch's strided copy.
    return Example{cols_.select(1, i), targets_.select(0, i)};
  }
  std::set<std::thread::id> threads() const {
    std::lock_guard lock(mu_);
    return threads_;
  }

 private:
  Tensor cols_, targets_;
  int64_t bad_;
  bool std_error_;
  mutable std::mutex mu_;
  mutable std::set<std::thread::id> threads_;
};

}  // namespace

TEST_CASE("loader: batch count and sizes with and without drop_last") {
  TensorDataset ds = numbered(10);
  for (bool prefetch : {false, true}) {
    CAPTURE(prefetch);
    DataLoader keep(ds, {.batch_size = 3, .prefetch = prefetch});
    CHECK(keep.num_batches() == 4);
    auto batches = one_epoch(keep);
    REQUIRE(batches.size() == 4);
    CHECK(batches[3] == std::vector<int64_t>{9});
    CHECK(flat(batches) == iota(10));

    DataLoader drop(ds, {.batch_size = 3, .drop_last = true, .prefetch = prefetch});
    CHECK(drop.num_batches() == 3);
    CHECK(flat(one_epoch(drop)) == iota(9));

    DataLoader exact(ds, 5, false, 0, true, prefetch);
    CHECK(exact.num_batches() == 2);
    CHECK(one_epoch(exact).size() == 2);

    DataLoader big(ds, {.batch_size = 64, .drop_last = true, .prefetch = prefetch});
    CHECK(big.num_batches() == 0);
    CHECK(one_epoch(big).empty());
  }
  TensorDataset empty = numbered(0);
  DataLoader none(empty, {.batch_size = 4, .prefetch = true});
  CHECK(none.num_batches() == 0);
  CHECK(one_epoch(none).empty());
  CHECK_THROWS_AS(DataLoader(ds, 0), prism::Error);
}

TEST_CASE("loader: batch tensors are stacked, contiguous and tagged data") {
  TensorDataset ds = numbered(7);
  DataLoader loader(ds, {.batch_size = 4, .shuffle = true, .seed = 3, .prefetch = true});
  for (Batch& b : loader) {
    CHECK(b.input.dim() == 2);
    CHECK(b.input.size(1) == 2);
    CHECK(b.input.dtype() == DType::f32);
    CHECK(b.target.dtype() == DType::i64);
    CHECK(b.target.dim() == 1);
    CHECK(b.size() == b.target.size(0));
    CHECK(b.input.is_contiguous());
    CHECK(b.input.storage()->role() == prism::MemRole::data);
    CHECK(b.target.storage()->role() == prism::MemRole::data);
    for (int64_t r = 0; r < b.size(); ++r) {
      const double i = static_cast<double>(b.target.at({r}));
      CHECK(b.input.at({r, 0}) == i);
      CHECK(b.input.at({r, 1}) == -i);
    }
  }
}

TEST_CASE("loader: shuffled epochs visit every index exactly once") {
  TensorDataset ds = numbered(103);
  for (bool prefetch : {false, true}) {
    CAPTURE(prefetch);
    DataLoader loader(ds, {.batch_size = 8, .shuffle = true, .seed = 42, .prefetch = prefetch});
    for (int e = 0; e < 4; ++e) {
      std::vector<int64_t> seen = flat(one_epoch(loader));
      CHECK(loader.epoch() == e);
      CHECK(seen != iota(103));  // shuffled
      std::sort(seen.begin(), seen.end());
      CHECK(seen == iota(103));
    }
  }
}

TEST_CASE("loader: shuffles are reproducible from the seed, and differ by epoch and seed") {
  TensorDataset ds = numbered(50);
  DataLoader a(ds, {.batch_size = 7, .shuffle = true, .seed = 9});
  DataLoader b(ds, {.batch_size = 7, .shuffle = true, .seed = 9, .prefetch = true});
  DataLoader c(ds, {.batch_size = 7, .shuffle = true, .seed = 10});
  auto a0 = one_epoch(a), a1 = one_epoch(a);
  auto b0 = one_epoch(b), b1 = one_epoch(b);
  auto c0 = one_epoch(c);
  CHECK(a0 == b0);
  CHECK(a1 == b1);
  CHECK(a0 != a1);
  CHECK(a0 != c0);
  CHECK(flat(a0) == a.order_for_epoch(0));
  CHECK(flat(a1) == a.order_for_epoch(1));

  // set_epoch replays an epoch, e.g. to resume a run.
  DataLoader d(ds, {.batch_size = 7, .shuffle = true, .seed = 9});
  d.set_epoch(1);
  CHECK(one_epoch(d) == a1);
  CHECK(d.epoch() == 1);

  // No shuffle: the same natural order every epoch.
  DataLoader plain(ds, 16);
  CHECK(flat(one_epoch(plain)) == iota(50));
  CHECK(flat(one_epoch(plain)) == iota(50));
}

TEST_CASE("loader: prefetch yields exactly the batches of no prefetch") {
  TensorDataset ds = numbered(61);
  GetOnlyDataset slow(61);  // through the default fill_batch
  for (const Dataset* d : {static_cast<const Dataset*>(&ds), static_cast<const Dataset*>(&slow)}) {
    DataLoader plain(*d, {.batch_size = 5, .shuffle = true, .seed = 1});
    DataLoader pre(*d, {.batch_size = 5, .shuffle = true, .seed = 1, .prefetch = true});
    for (int e = 0; e < 3; ++e) {
      std::vector<std::vector<float>> xs, ys;
      std::vector<std::vector<int64_t>> ts, us;
      for (Batch& b : plain) {
        xs.push_back(b.input.to_vector<float>());
        ts.push_back(b.target.to_vector<int64_t>());
      }
      for (Batch& b : pre) {
        ys.push_back(b.input.to_vector<float>());
        us.push_back(b.target.to_vector<int64_t>());
      }
      CHECK(xs == ys);
      CHECK(ts == us);
      CHECK(ts.size() == 13);
    }
  }
}

TEST_CASE("loader: next() walks one epoch, then starts the next") {
  TensorDataset ds = numbered(10);
  for (bool prefetch : {false, true}) {
    DataLoader loader(ds, {.batch_size = 4, .shuffle = true, .prefetch = prefetch});
    CHECK(loader.epoch() == -1);
    int n = 0;
    std::vector<int64_t> seen;
    while (auto b = loader.next()) {
      ++n;
      for (int64_t t : b->target.to_vector<int64_t>()) seen.push_back(t);
    }
    CHECK(n == 3);
    CHECK(loader.epoch() == 0);
    CHECK_FALSE(loader.in_epoch());
    CHECK_FALSE(loader.worker_running());
    std::sort(seen.begin(), seen.end());
    CHECK(seen == iota(10));
    REQUIRE(loader.next().has_value());
    CHECK(loader.epoch() == 1);
  }
}

TEST_CASE("loader: the prefetch worker runs on its own thread") {
  GetOnlyDataset ds(40);
  DataLoader loader(ds, {.batch_size = 4, .prefetch = true});
  // The loader asked for spec() on this thread; every fill_batch ran on the worker.
  int batches = 0;
  for (Batch& b : loader) batches += b.size() > 0;
  CHECK(batches == 10);
  std::set<std::thread::id> threads = ds.threads();
  threads.erase(std::this_thread::get_id());
  CHECK(threads.size() == 1);
}

TEST_CASE("loader: leaving a loop early stops the worker, and the next loop starts afresh") {
  TensorDataset ds = numbered(100);
  DataLoader loader(ds, {.batch_size = 3, .shuffle = true, .seed = 5, .prefetch = true});
  int n = 0;
  for (Batch& b : loader) {
    CHECK(b.size() == 3);
    if (++n == 2) break;
  }
  CHECK_FALSE(loader.worker_running());
  CHECK_FALSE(loader.in_epoch());
  // The next loop is epoch 1, complete.
  std::vector<int64_t> seen = flat(one_epoch(loader));
  CHECK(loader.epoch() == 1);
  CHECK(seen == loader.order_for_epoch(1));

  // An exception out of the loop body stops it too.
  CHECK_THROWS_AS(
      [&] {
        for (Batch& b : loader) {
          if (b.size() > 0) throw std::runtime_error("body failed");
        }
      }(),
      std::runtime_error);
  CHECK_FALSE(loader.worker_running());

  // stop() in the body ends the loop instead of restarting an epoch.
  n = 0;
  for (Batch& b : loader) {
    (void)b;
    ++n;
    loader.stop();
  }
  CHECK(n == 1);

  // Destroying a loader in the middle of an epoch, worker still filling, joins it cleanly.
  for (int i = 0; i < 20; ++i) {
    DataLoader l(ds, {.batch_size = 1, .prefetch = true});
    REQUIRE(l.next().has_value());
    CHECK(l.worker_running());
  }
}

TEST_CASE("loader: an exception in the data set reaches the caller, with or without prefetch") {
  for (bool prefetch : {false, true}) {
    for (bool std_error : {false, true}) {
      CAPTURE(prefetch);
      CAPTURE(std_error);
      GetOnlyDataset ds(20, 9, std_error);
      DataLoader loader(ds, {.batch_size = 4, .prefetch = prefetch});
      int ok = 0;
      std::string msg;
      try {
        for (Batch& b : loader) ok += static_cast<int>(b.size());
      } catch (const prism::Error& e) {
        msg = std::string("prism::Error: ") + e.what();
      } catch (const std::runtime_error& e) {
        msg = std::string("runtime_error: ") + e.what();
      }
      CHECK(ok == 8);  // batches 0 and 1 arrived; batch 2 holds example 9
      CHECK(msg == (std_error ? "runtime_error: plain failure at 9"
                              : "prism::Error: GetOnlyDataset: example 9 is broken"));
      CHECK_FALSE(loader.worker_running());
      CHECK_FALSE(loader.in_epoch());
      // The loader is still usable: the next epoch fails at the same place.
      auto b0 = loader.next();
      REQUIRE(b0.has_value());
      CHECK(b0->target.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 2, 3});
      CHECK(loader.epoch() == 1);
    }
  }
}

TEST_CASE("loader: the wait for each batch is a \"data\" scope in the profile") {
  TensorDataset ds = numbered(40);
  for (bool prefetch : {false, true}) {
    CAPTURE(prefetch);
    DataLoader loader(ds, {.batch_size = 8, .shuffle = true, .prefetch = prefetch});
    const int64_t data_before =
        prism::profiler::memory_stats().live_by_role[static_cast<size_t>(prism::MemRole::data)];
    int64_t data_during = 0;
    prism::profiler::Session session;
    int n = 0;
    for (Batch& b : loader) {
      Tensor y = prism::sum(b.input);  // an op of the training step, outside the data scope
      (void)y;
      data_during =
          prism::profiler::memory_stats().live_by_role[static_cast<size_t>(prism::MemRole::data)];
      ++n;
    }
    const auto& rec = session.stop().recording;
    CHECK(n == 5);
    CHECK(data_during > data_before);
    int scopes = 0, sums = 0;
    std::set<int32_t> tids;
    for (const auto& r : rec.records) {
      tids.insert(r.tid);
      if (r.kind == prism::profiler::Kind::scope && std::strcmp(r.op, "data") == 0) {
        ++scopes;
        CHECK(rec.scope_paths[static_cast<size_t>(r.scope)] == "data");
        CHECK(r.allocs >= 0);
      }
      if (r.kind == prism::profiler::Kind::op && std::strcmp(r.op, "sum") == 0) {
        ++sums;
        CHECK(rec.scope_paths[static_cast<size_t>(r.scope)] == "");
      }
    }
    // One scope per batch handed out, and one for the call that found the epoch's end.
    CHECK(scopes == 6);
    CHECK(sums == 5);
    // The worker recorded nothing: every record is from this thread.
    CHECK(tids.size() == 1);
    // Its memory samples too: batch tensors are allocated here, and freed here.
    std::set<int32_t> mem_tids;
    for (const auto& m : rec.memory) mem_tids.insert(m.tid);
    CHECK(mem_tids.size() <= 1);
  }
}

TEST_CASE("loader: character windows batch as x and y [B, T]") {
  CharDataset text(default_text(), 16);
  DataLoader loader(text, {.batch_size = 8, .shuffle = true, .seed = 2, .prefetch = true});
  int n = 0;
  for (Batch& b : loader) {
    CHECK(b.input.shape() == Dims{8, 16});
    CHECK(b.target.shape() == Dims{8, 16});
    CHECK(b.input.dtype() == DType::i64);
    // y is x shifted by one character.
    CHECK(text.decode(b.input.select(0, 0).narrow(0, 1, 15).contiguous()) ==
          text.decode(b.target.select(0, 0).narrow(0, 0, 15).contiguous()));
    if (++n == 5) break;
  }
  CHECK(loader.num_batches() == (text.size() + 7) / 8);
}
