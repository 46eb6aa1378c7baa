#include "nn/data/loader.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "profiler/recorder.h"
#include "tensor/random.h"

namespace prism::nn::data {

namespace {

// The scope every wait for a batch runs in (loader.h, "Profiling").
constexpr const char* kWaitScope = "data";

uint64_t mix64(uint64_t z) {  // splitmix64's finaliser: every input bit moves every output bit
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias: reject the few draws below 2^64 mod bound.
uint64_t below(Generator& gen, uint64_t bound) {
  const uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    uint64_t r = gen.next_u64();
    if (r >= threshold) return r % bound;
  }
}

}  // namespace

DataLoader::DataLoader(const Dataset& dataset, LoaderOptions options)
    : dataset_(dataset), opts_(options) {
  if (opts_.batch_size <= 0) {
    throw Error("DataLoader: batch_size must be positive, got " + std::to_string(opts_.batch_size));
  }
  if (opts_.shard_count < 1 || opts_.shard_rank < 0 || opts_.shard_rank >= opts_.shard_count) {
    throw Error("DataLoader: shard " + std::to_string(opts_.shard_rank) + " of " +
                std::to_string(opts_.shard_count) + " does not exist");
  }
  if (opts_.batch_size % opts_.shard_count != 0) {
    throw Error("DataLoader: the global batch " + std::to_string(opts_.batch_size) +
                " does not split into " + std::to_string(opts_.shard_count) + " equal shards");
  }
  if (opts_.shard_count > 1 && !opts_.drop_last) {
    throw Error("DataLoader: shards need drop_last (a short last batch has no equal parts)");
  }
}

DataLoader::DataLoader(const Dataset& dataset, int64_t batch_size, bool shuffle, uint64_t seed,
                       bool drop_last, bool prefetch)
    : DataLoader(dataset, LoaderOptions{batch_size, shuffle, seed, drop_last, prefetch}) {}

DataLoader::~DataLoader() {
  stop();
}

int64_t DataLoader::num_batches() const {
  const int64_t n = dataset_.size();
  return opts_.drop_last ? n / opts_.batch_size : (n + opts_.batch_size - 1) / opts_.batch_size;
}

int64_t DataLoader::batch_length(int64_t k) const {
  return std::min(opts_.batch_size / opts_.shard_count, n_ - batch_start(k));
}

std::vector<int64_t> DataLoader::order_for_epoch(int64_t e) const {
  std::vector<int64_t> order(static_cast<size_t>(dataset_.size()));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (opts_.shuffle) {
    // The epoch number goes into the seed, so each epoch of a run has its own order and the
    // whole run is a function of `seed`.
    Generator gen(mix64(opts_.seed + 0x9e3779b97f4a7c15ULL) ^
                  mix64(static_cast<uint64_t>(e) + 0x632be59bd9b4e019ULL));
    for (size_t i = order.size(); i > 1; --i) {  // Fisher-Yates
      const size_t j = static_cast<size_t>(below(gen, i));
      std::swap(order[i - 1], order[j]);
    }
  }
  return order;
}

Batch DataLoader::allocate_batch(int64_t k) const {
  const int64_t b = batch_length(k);
  return Batch{make_data_tensor(spec_.batch_input_shape(b), spec_.input_dtype),
               make_data_tensor(spec_.batch_target_shape(b), spec_.target_dtype)};
}

void DataLoader::start_epoch() {
  profiler::Scope scope(kWaitScope);
  start_epoch_impl();
}

void DataLoader::start_epoch_impl() {
  stop();
  n_ = dataset_.size();
  if (n_ > 0) spec_ = dataset_.spec();
  epoch_ = next_epoch_++;
  order_ = order_for_epoch(epoch_);
  batches_ = num_batches();
  next_batch_ = 0;
  in_epoch_ = true;
  ++generation_;
  if (opts_.prefetch && batches_ > 0) {
    stop_ = false;
    for (Slot& s : slots_) s = Slot{};
    for (int64_t k = 0; k < kPrefetchDepth && k < batches_; ++k) request(k);
    worker_ = std::thread([this] { worker_loop(); });
  }
}

void DataLoader::request(int64_t k) {
  Batch b = allocate_batch(k);  // on the caller's thread: tracked, attributed to its scope
  std::lock_guard lock(mu_);
  Slot& s = slots_[k % kPrefetchDepth];
  s.input = b.input.storage()->data();
  s.target = b.target.storage()->data();
  s.tensors = std::move(b);
  s.batch = k;
  s.error = nullptr;
  s.state = SlotState::requested;
  to_worker_.notify_one();
}

void DataLoader::worker_loop() {
  // Anything a user's data set allocates here is data too.
  AllocRole role(MemRole::data);
  for (int64_t k = 0; k < batches_; ++k) {
    Slot& s = slots_[k % kPrefetchDepth];
    void* input;
    void* target;
    {
      std::unique_lock lock(mu_);
      to_worker_.wait(lock,
                      [&] { return stop_ || (s.state == SlotState::requested && s.batch == k); });
      if (stop_) return;
      input = s.input;
      target = s.target;
    }
    std::exception_ptr error;
    try {
      const auto first = order_.begin() + batch_start(k);
      dataset_.fill_batch(std::span<const int64_t>(first, static_cast<size_t>(batch_length(k))),
                          input, target);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard lock(mu_);
      s.state = error ? SlotState::failed : SlotState::ready;
      s.error = error;
    }
    to_caller_.notify_one();
    if (error) return;
  }
}

Batch DataLoader::take_prefetched(int64_t k) {
  Slot& s = slots_[k % kPrefetchDepth];
  std::exception_ptr error;
  Batch out;
  {
    std::unique_lock lock(mu_);
    to_caller_.wait(lock, [&] {
      return s.batch == k && (s.state == SlotState::ready || s.state == SlotState::failed);
    });
    if (s.state == SlotState::failed) {
      error = s.error;
    } else {
      out = std::move(s.tensors);
      s.tensors = Batch{};
      s.state = SlotState::idle;
    }
  }
  if (error) {
    stop();  // the worker has returned; join it and end the epoch
    std::rethrow_exception(error);
  }
  if (k + kPrefetchDepth < batches_) request(k + kPrefetchDepth);
  return out;
}

std::optional<Batch> DataLoader::next() {
  profiler::Scope scope(kWaitScope);
  return next_impl();
}

std::optional<Batch> DataLoader::next_impl() {
  if (!in_epoch_) start_epoch_impl();
  if (next_batch_ >= batches_) {
    stop();  // the worker has finished; join it
    return std::nullopt;
  }
  const int64_t k = next_batch_;
  if (opts_.prefetch) {
    Batch b = take_prefetched(k);
    ++next_batch_;
    return b;
  }
  try {
    Batch b = allocate_batch(k);
    const auto first = order_.begin() + batch_start(k);
    dataset_.fill_batch(std::span<const int64_t>(first, static_cast<size_t>(batch_length(k))),
                        b.input.storage()->data(), b.target.storage()->data());
    ++next_batch_;
    return b;
  } catch (...) {
    in_epoch_ = false;
    throw;
  }
}

void DataLoader::stop() {
  if (worker_.joinable()) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    to_worker_.notify_all();
    worker_.join();
    for (Slot& s : slots_) s = Slot{};  // frees prefetched batches on this thread
  }
  in_epoch_ = false;
}

// ---- range-for ----------------------------------------------------------------------------------

DataLoader::Iterator DataLoader::begin() {
  profiler::Scope scope(kWaitScope);
  start_epoch_impl();
  uint64_t gen = generation_;
  return Iterator(this, gen, next_impl());
}

DataLoader::Iterator::Iterator(DataLoader* loader, uint64_t generation, std::optional<Batch> first)
    : loader_(loader), generation_(generation), current_(std::move(first)) {}

DataLoader::Iterator::Iterator(Iterator&& other) noexcept
    : loader_(std::exchange(other.loader_, nullptr)),
      generation_(other.generation_),
      current_(std::move(other.current_)) {}

DataLoader::Iterator::~Iterator() {
  if (loader_ && loader_->generation_ == generation_ && loader_->in_epoch_) loader_->stop();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  current_.reset();  // let the batch go before asking for the next one
  // A loop whose epoch was stopped or replaced (stop(), start_epoch() in the body) just ends.
  if (loader_->generation_ == generation_ && loader_->in_epoch_) current_ = loader_->next();
  return *this;
}

}  // namespace prism::nn::data
