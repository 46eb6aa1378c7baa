// The lab's allocator (lab_memory.h): host memory on the cpu, CUDA managed memory on cuda.
//
// Which kind a block is: live managed blocks are kept in a table (pointer -> bytes); anything
// else came from the aligned host operator new. The table also lets prefetch_lab_buffers move
// every buffer of the case about to be timed to the GPU without the adapters listing them.
#include "kernels/lab/lab_memory.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <unordered_map>

#include "kernels/gpu_runtime.h"

namespace prism::lab {
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
  // Never destroyed: a thread_local LabVector may be freed during static destruction.
  static ManagedTable* t = new ManagedTable;
  return *t;
}

}  // namespace

Device lab_device() {
  return device_setting().load(std::memory_order_relaxed);
}

void set_lab_device(Device d) {
  device_setting().store(d, std::memory_order_relaxed);
}

void* lab_allocate(size_t nbytes) {
  const size_t n = std::max<size_t>(nbytes, 1);
  if (lab_device() != Device::cuda) return ::operator new(n, kHostAlign);
  void* p = kernels::gpu::allocate_managed(n);  // 256-byte aligned; throws when it cannot
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  t.blocks.emplace(p, n);
  t.bytes += static_cast<int64_t>(n);
  return p;
}

void lab_deallocate(void* p, size_t /*nbytes*/) noexcept {
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

bool lab_is_managed(const void* p) {
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  return t.blocks.count(p) != 0;
}

int64_t lab_managed_bytes() {
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  return t.bytes;
}

void prefetch_lab_buffers() {
  ManagedTable& t = managed();
  std::lock_guard lock(t.mu);
  for (const auto& [p, n] : t.blocks) kernels::gpu::prefetch_to_device(p, n);
}

}  // namespace prism::lab
