// The lab's allocator (case_memory.h): host memory on the cpu, CUDA managed memory on cuda.
//
// Which kind a block is: live managed blocks are kept in a table (pointer -> bytes); anything
// else came from the aligned host operator new. The table also lets prefetch_case_buffers move
// every buffer of the case about to be timed to the GPU without the adapters listing them.
#include "kernels/opinfo/case_memory.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <string>
#include <unordered_map>

#include "kernels/gpu_runtime.h"

namespace prism::opinfo {
namespace {

constexpr std::align_val_t kHostAlign{64};

std::atomic<Device>& device_setting() {
  static std::atomic<Device> d{Device::cpu};
  return d;
}

struct ManagedTable {
  std::mutex mu;
  std::unordered_map<const void*, size_t> blocks;  // live managed blocks and their sizes
  int64_t bytes = 0;
};

ManagedTable& managed() {
  // Never destroyed: a thread_local CaseVector may be freed during static destruction.
  static ManagedTable* t = new ManagedTable;
  return *t;
}

// MemAvailable from /proc/meminfo (the kernel's estimate of what can be allocated without
// swapping), in bytes; -1 where it cannot be read.
int64_t available_host_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit) {
    if (key == "MemAvailable:") return kib * 1024;
  }
  return -1;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / double(int64_t{1} << 30));
  return buf;
}

// A lab size the machine cannot hold is refused before the allocation, with the figures: with
// Linux's overcommit an allocation larger than memory can succeed and the process is then
// killed as it fills the buffer, which is far worse than an error.
void* host_allocate(size_t n) {
  // Only a large buffer can fail this way; a small one (the validation sizes make many) skips
  // reading /proc/meminfo.
  constexpr size_t kCheckFrom = size_t{64} << 20;
  const int64_t available = n >= kCheckFrom ? available_host_bytes() : -1;
  if (available >= 0 && static_cast<int64_t>(n) > available) {
    throw Error("this size needs a buffer of " + gib(static_cast<double>(n)) + ", more than the " +
                gib(static_cast<double>(available)) +
                " of memory this machine has available: choose a smaller size");
  }
  try {
    return ::operator new(n, kHostAlign);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating a buffer of " + gib(static_cast<double>(n)) +
                ": choose a smaller size");
  }
}

}  // namespace

Device case_device() {
  return device_setting().load(std::memory_order_relaxed);
}

void set_case_device(Device d) {
  device_setting().store(d, std::memory_order_relaxed);
}

void* case_allocate(size_t nbytes) {
  const size_t n = std::max<size_t>(nbytes, 1);
  if (case_device() != Device::cuda) return host_allocate(n);
  void* p = kernels::gpu::allocate_managed(n);  // 256-byte aligned; throws when it cannot
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  t.blocks.emplace(p, n);
  t.bytes += static_cast<int64_t>(n);
  return p;
}

void case_deallocate(void* p, size_t /*nbytes*/) noexcept {
  if (!p) return;
  size_t managed_bytes = 0;
  {
    ManagedTable& t = managed();
    std::lock_guard lock(t.mu);
    auto it = t.blocks.find(p);
    if (it != t.blocks.end()) {
      managed_bytes = it->second;
      t.bytes -= static_cast<int64_t>(managed_bytes);
      t.blocks.erase(it);
    }
  }
  if (managed_bytes > 0)
    kernels::gpu::release_managed(p, managed_bytes);  // waits for the device; never throws
  else
    ::operator delete(p, kHostAlign);
}

bool case_is_managed(const void* p) {
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  return t.blocks.count(p) != 0;
}

int64_t case_managed_bytes() {
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  return t.bytes;
}

void prefetch_case_buffers() {
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  for (const auto& [p, n] : t.blocks) kernels::gpu::prefetch_to_device(p, n);
}

}  // namespace prism::opinfo
