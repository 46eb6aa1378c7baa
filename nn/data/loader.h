// DataLoader: a data set served as shuffled batches, optionally prepared on a second thread.
//
//   DataLoader loader(train, {.batch_size = 64, .shuffle = true, .seed = 1, .prefetch = true});
//   for (int epoch = 0; epoch < 10; ++epoch) {
//     for (Batch& b : loader) {           // each range-for is one epoch
//       Tensor loss = cross_entropy(model(b.input), b.target);
//       ...
//     }
//   }
//
// or, without range-for:  while (auto b = loader.next()) { ... }  (one epoch; the next call
// after the end starts another).
//
// Order. Without shuffle the indices go 0, 1, ..., N-1. With shuffle, epoch e is a
// permutation drawn from Generator(seed mixed with e) (Fisher-Yates), so a run is reproducible
// from its seed, and every epoch is a different order. Epochs count from 0 and advance each
// time one starts; `set_epoch` picks the number of the next one (resume a run at epoch 7).
// The last batch is short (N mod batch_size examples) unless drop_last drops it.
//
// Profiling. The time the caller spends getting a batch, from asking to having it, runs inside
// profiler::Scope("data"), so data stalls show as "data" spans in the trace and as a "data"
// node in the scope tree. Without prefetch the whole batch assembly is in that span; with
// prefetch only the wait for the worker is (near zero when the worker keeps up). Batch tensors
// are tagged MemRole::data in the memory tracker.
//
// Prefetch. A worker thread fills the next batches while the caller trains on the current one,
// through a ring of 2 slots (one being consumed, at most 2 being filled or waiting). The
// caller's thread allocates every batch tensor and hands the worker raw pointers, so the worker
// never allocates tracked memory, records nothing in a profiling session and never frees a
// tensor; it only copies bytes (Dataset::fill_batch). Batches come out in the same order and
// with the same contents as without prefetch. An exception thrown in the worker is rethrown in
// the caller when it reaches that batch; the epoch then ends. Leaving a range-for early, starting
// a new epoch, stop() and the destructor all stop and join the worker.
//
// A data set whose get() runs tensor ops (default fill_batch) would run them on the worker
// thread: they would be recorded on that thread, which a profiling session can only stop safely
// once the loader is done. Data sets in this library never do; give yours a fill_batch override.
//
// The data set must outlive the loader. A loader is used from one thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "nn/data/dataset.h"

namespace prism::nn::data {

// Shards (data parallelism, nn/dist/ddp.h): with shard_count = N, batch_size is the global
// batch and this loader yields part shard_rank of N equal parts of each global batch, from the
// same epoch order on every rank: the N ranks' batch k together are exactly the one process's
// batch k, so N ranks see the examples a single process would, step by step. batch_size must
// divide by N; the epoch has the global batch's count of batches.
struct LoaderOptions {
  int64_t batch_size = 32;
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_last = false;
  bool prefetch = false;
  int shard_rank = 0;
  int shard_count = 1;
};

class DataLoader {
 public:
  static constexpr int kPrefetchDepth = 2;  // batches prepared ahead of the one in use

  DataLoader(const Dataset& dataset, LoaderOptions options);
  DataLoader(const Dataset& dataset, int64_t batch_size, bool shuffle = false, uint64_t seed = 0,
             bool drop_last = false, bool prefetch = false);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  const LoaderOptions& options() const { return opts_; }
  const Dataset& dataset() const { return dataset_; }
  // Batches per epoch: ceil(N / batch_size), or floor with drop_last.
  int64_t num_batches() const;
  int64_t size() const { return num_batches(); }

  // The number of the epoch in progress (or last started); -1 before the first.
  int64_t epoch() const { return epoch_; }
  // The next epoch to start gets number e (and so epoch e's order).
  void set_epoch(int64_t e) { next_epoch_ = e; }
  // The index order of the epoch with number e (what iterating that epoch yields, batch by
  // batch), without starting it.
  std::vector<int64_t> order_for_epoch(int64_t e) const;

  // Starts the next epoch, abandoning (and stopping the worker of) any epoch in progress.
  void start_epoch();
  // The next batch of the epoch in progress, starting one if none is; nullopt once the epoch
  // has no batches left (and the epoch ends: the next call starts a new one).
  std::optional<Batch> next();
  // Abandons the epoch in progress, if any, and joins the worker thread.
  void stop();
  bool in_epoch() const { return in_epoch_; }
  bool worker_running() const { return worker_.joinable(); }

  // ---- range-for: each begin() starts a new epoch --------------------------------------------
  struct Sentinel {};
  class Iterator {
   public:
    Iterator(DataLoader* loader, uint64_t generation, std::optional<Batch> first);
    Iterator(Iterator&& other) noexcept;
    Iterator& operator=(Iterator&&) = delete;
    Iterator(const Iterator&) = delete;
    ~Iterator();  // leaving the loop early stops the worker
    Batch& operator*() { return *current_; }
    Batch* operator->() { return &*current_; }
    Iterator& operator++();
    bool operator==(Sentinel) const { return !current_.has_value(); }

   private:
    DataLoader* loader_;
    uint64_t generation_;
    std::optional<Batch> current_;
  };
  Iterator begin();
  Sentinel end() { return {}; }

 private:
  enum class SlotState { idle, requested, ready, failed };
  struct Slot {
    SlotState state = SlotState::idle;
    int64_t batch = -1;
    Batch tensors;          // owned and touched by the caller's thread only
    void* input = nullptr;  // the worker writes through these
    void* target = nullptr;
    std::exception_ptr error;
  };

  // Batch k's first position in the epoch order: its global batch's start, plus this shard's.
  int64_t batch_start(int64_t k) const {
    return k * opts_.batch_size + opts_.shard_rank * (opts_.batch_size / opts_.shard_count);
  }
  int64_t batch_length(int64_t k) const;
  Batch allocate_batch(int64_t k) const;
  void start_epoch_impl();
  std::optional<Batch> next_impl();
  void request(int64_t k);  // allocates batch k's tensors into its slot and wakes the worker
  void worker_loop();
  Batch take_prefetched(int64_t k);

  const Dataset& dataset_;
  LoaderOptions opts_;
  ExampleSpec spec_;
  int64_t n_ = 0;

  int64_t next_epoch_ = 0;
  int64_t epoch_ = -1;
  bool in_epoch_ = false;
  uint64_t generation_ = 0;  // bumped by every start_epoch, so a stale iterator stops nothing
  std::vector<int64_t> order_;
  int64_t batches_ = 0;
  int64_t next_batch_ = 0;

  // Prefetch state: slots_[k % kPrefetchDepth] holds batch k. mu_ guards slot states and stop_.
  std::thread worker_;
  std::mutex mu_;
  std::condition_variable to_worker_;
  std::condition_variable to_caller_;
  Slot slots_[kPrefetchDepth];
  bool stop_ = false;
};

}  // namespace prism::nn::data
