#include "profiler/memory.h"

#include <atomic>
#include <mutex>

#include "profiler/recorder.h"

namespace prism::profiler {

const char* role_name(MemRole r) {
  switch (r) {
    case MemRole::activation:
      return "activation";
    case MemRole::temporary:
      return "temporary";
    case MemRole::parameter:
      return "parameter";
    case MemRole::gradient:
      return "gradient";
    case MemRole::optimizer:
      return "optimizer";
    case MemRole::data:
      return "data";
    case MemRole::kv_cache:
      return "kv_cache";
  }
  return "?";
}

namespace {

struct DeviceCounters {
  std::atomic<int64_t> live{0};
  std::atomic<int64_t> peak{0};
  std::atomic<int64_t> alloc_count{0};
  std::atomic<int64_t> alloc_bytes{0};
  std::atomic<int64_t> free_count{0};
  std::atomic<int64_t> live_by_role[kNumRoles] = {};
  // Composition of the live bytes at the peak. Written only when a new peak is set, which after
  // the first steps of a run is rare, so a mutex there costs nothing on the hot path.
  std::mutex peak_mutex;
  int64_t peak_by_role[kNumRoles] = {};
};

DeviceCounters g_dev[kNumDevices];
thread_local ThreadAllocCounter t_allocs;

int clamp_device(int d) {
  return (d >= 0 && d < kNumDevices) ? d : 0;
}

}  // namespace

namespace {
// Copies the live bytes by role into the peak's composition; called after `live` became a new
// peak. A later, higher peak may have been recorded meanwhile by another thread: keep that one.
void snapshot_peak_roles(DeviceCounters& c, int64_t live) {
  std::lock_guard<std::mutex> lock(c.peak_mutex);
  if (c.peak.load(std::memory_order_relaxed) != live) return;
  for (int i = 0; i < kNumRoles; ++i) {
    c.peak_by_role[i] = c.live_by_role[i].load(std::memory_order_relaxed);
  }
}
}  // namespace

// The peak and reset_peak. An allocation adds to `live`, then reads `peak` and raises it if
// lower; reset_peak stores `live` into `peak`, then reads `live` again and raises `peak` to it.
// With those four accesses sequentially consistent, an allocation that races a reset cannot be
// lost: either the reset's second read sees the allocation's bytes, or the allocation's read of
// `peak` sees the reset's store and raises it (the store-load pattern of Dekker's algorithm).
// Relaxed, the allocation could read the old, higher peak, skip its update, and the reset then
// store a peak below a buffer still live. On x86-64 the seq_cst fetch_add and load compile to
// the same instructions as relaxed ones (lock xadd, mov): the hot path pays nothing for it.
void note_alloc(int device, MemRole role, int64_t bytes) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  // The role first, so that a peak snapshot taken below already includes this buffer.
  const int64_t role_live =
      c.live_by_role[static_cast<int>(role)].fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t live = c.live.fetch_add(bytes, std::memory_order_seq_cst) + bytes;
  int64_t peak = c.peak.load(std::memory_order_seq_cst);
  bool new_peak = false;
  while (live > peak) {
    if (c.peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
      new_peak = true;
      break;
    }
  }
  if (new_peak) snapshot_peak_roles(c, live);
  c.alloc_count.fetch_add(1, std::memory_order_relaxed);
  c.alloc_bytes.fetch_add(bytes, std::memory_order_relaxed);
  ++t_allocs.count;
  t_allocs.bytes += bytes;
  if (recording()) record_memory_sample(device, live, static_cast<int>(role), role_live);
}

void note_free(int device, MemRole role, int64_t bytes) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  int64_t live = c.live.fetch_sub(bytes, std::memory_order_relaxed) - bytes;
  c.free_count.fetch_add(1, std::memory_order_relaxed);
  const int64_t role_live =
      c.live_by_role[static_cast<int>(role)].fetch_sub(bytes, std::memory_order_relaxed) - bytes;
  if (recording()) record_memory_sample(device, live, static_cast<int>(role), role_live);
}

void note_retag(int device, MemRole from, MemRole to, int64_t bytes) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  const int64_t from_live =
      c.live_by_role[static_cast<int>(from)].fetch_sub(bytes, std::memory_order_relaxed) - bytes;
  const int64_t to_live =
      c.live_by_role[static_cast<int>(to)].fetch_add(bytes, std::memory_order_relaxed) + bytes;
  if (recording()) {
    // Two samples at the same total, so a timeline stacked by role moves the bytes across.
    const int64_t live = c.live.load(std::memory_order_relaxed);
    record_memory_sample(device, live, static_cast<int>(from), from_live);
    record_memory_sample(device, live, static_cast<int>(to), to_live);
  }
}

MemoryStats memory_stats(int device) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  MemoryStats s;
  s.live_bytes = c.live.load();
  s.alloc_count = c.alloc_count.load();
  s.alloc_bytes = c.alloc_bytes.load();
  s.free_count = c.free_count.load();
  for (int i = 0; i < kNumRoles; ++i)
    s.live_by_role[static_cast<size_t>(i)] = c.live_by_role[i].load();
  {
    // Under the mutex, so a reset_peak in progress (lowered, not yet raised again) is never seen.
    std::lock_guard<std::mutex> lock(c.peak_mutex);
    s.peak_bytes = c.peak.load();
    for (int i = 0; i < kNumRoles; ++i) s.peak_by_role[static_cast<size_t>(i)] = c.peak_by_role[i];
  }
  return s;
}

void reset_peak(int device) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  std::lock_guard<std::mutex> lock(c.peak_mutex);
  c.peak.store(c.live.load(), std::memory_order_seq_cst);
  // An allocation that raced the store may have read the old peak and skipped its update (see
  // note_alloc): read `live` again and raise the peak to it.
  const int64_t live = c.live.load(std::memory_order_seq_cst);
  int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (live > peak && !c.peak.compare_exchange_weak(peak, live)) {
  }
  for (int i = 0; i < kNumRoles; ++i) {
    c.peak_by_role[i] = c.live_by_role[i].load(std::memory_order_relaxed);
  }
}

const ThreadAllocCounter& thread_allocs() {
  return t_allocs;
}

}  // namespace prism::profiler
