#include "profiler/memory.h"

#include <atomic>

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
};

DeviceCounters g_dev[kNumDevices];
thread_local ThreadAllocCounter t_allocs;

int clamp_device(int d) {
  return (d >= 0 && d < kNumDevices) ? d : 0;
}

}  // namespace

void note_alloc(int device, MemRole role, int64_t bytes) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  int64_t live = c.live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t peak = c.peak.load(std::memory_order_relaxed);
  while (live > peak && !c.peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  c.alloc_count.fetch_add(1, std::memory_order_relaxed);
  c.alloc_bytes.fetch_add(bytes, std::memory_order_relaxed);
  c.live_by_role[static_cast<int>(role)].fetch_add(bytes, std::memory_order_relaxed);
  ++t_allocs.count;
  t_allocs.bytes += bytes;
  if (recording()) record_memory_sample(device, live);
}

void note_free(int device, MemRole role, int64_t bytes) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  int64_t live = c.live.fetch_sub(bytes, std::memory_order_relaxed) - bytes;
  c.free_count.fetch_add(1, std::memory_order_relaxed);
  c.live_by_role[static_cast<int>(role)].fetch_sub(bytes, std::memory_order_relaxed);
  if (recording()) record_memory_sample(device, live);
}

void note_retag(int device, MemRole from, MemRole to, int64_t bytes) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  c.live_by_role[static_cast<int>(from)].fetch_sub(bytes, std::memory_order_relaxed);
  c.live_by_role[static_cast<int>(to)].fetch_add(bytes, std::memory_order_relaxed);
}

MemoryStats memory_stats(int device) {
  const DeviceCounters& c = g_dev[clamp_device(device)];
  MemoryStats s;
  s.live_bytes = c.live.load();
  s.peak_bytes = c.peak.load();
  s.alloc_count = c.alloc_count.load();
  s.alloc_bytes = c.alloc_bytes.load();
  s.free_count = c.free_count.load();
  for (int i = 0; i < kNumRoles; ++i)
    s.live_by_role[static_cast<size_t>(i)] = c.live_by_role[i].load();
  return s;
}

void reset_peak(int device) {
  DeviceCounters& c = g_dev[clamp_device(device)];
  c.peak.store(c.live.load());
}

const ThreadAllocCounter& thread_allocs() {
  return t_allocs;
}

}  // namespace prism::profiler
