#include "tensor/storage.h"

#include "kernels/gpu_runtime.h"
#include "tensor/host_allocator.h"

#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

namespace prism {

namespace {
thread_local MemRole t_role = MemRole::activation;
std::atomic<uint64_t> g_next_storage_id{1};  // Storage::id(): never reused
}  // namespace

thread_local Device t_device = Device::cpu;

MemRole current_alloc_role() {
  return t_role;
}
Device default_device() {
  return t_device;
}
DefaultDevice::DefaultDevice(Device device) : saved_(t_device) {
  t_device = device;
}
DefaultDevice::~DefaultDevice() {
  t_device = saved_;
}
AllocRole::AllocRole(MemRole role) : saved_(t_role) {
  t_role = role;
}
AllocRole::~AllocRole() {
  t_role = saved_;
}

Storage::Storage(void* data, int64_t nbytes, Device device, MemRole role)
    : data_(data),
      nbytes_(nbytes),
      device_(device),
      role_(role),
      id_(g_next_storage_id.fetch_add(1, std::memory_order_relaxed)) {}

std::shared_ptr<Storage> Storage::allocate(int64_t nbytes, Device device, MemRole role) {
  if (nbytes < 0) throw Error("allocate: negative size " + std::to_string(nbytes));
  if (device == Device::meta) {  // bytes counted, nothing allocated
    profiler::note_alloc(static_cast<int>(device), role, nbytes);
    return std::shared_ptr<Storage>(new Storage(nullptr, nbytes, device, role));
  }
  if (device == Device::cuda) {  // the caching device allocator; an Error when out of memory
    void* p = nbytes > 0 ? kernels::gpu::allocate(static_cast<size_t>(nbytes)) : nullptr;
    profiler::note_alloc(static_cast<int>(device), role, nbytes);
    return std::shared_ptr<Storage>(new Storage(p, nbytes, device, role));
  }
  void* p = nullptr;
  if (nbytes > 0) {
    p = host_allocator::allocate(static_cast<size_t>(nbytes));
    if (!p) {
      throw Error("allocate: out of memory asking for " + std::to_string(nbytes) + " bytes on " +
                  device_name(device));
    }
  }
  profiler::note_alloc(static_cast<int>(device), role, nbytes);
  return std::shared_ptr<Storage>(new Storage(p, nbytes, device, role));
}

Storage::~Storage() {
  if (device_ == Device::cpu) host_allocator::release(data_, static_cast<size_t>(nbytes_));
  if (device_ == Device::cuda) kernels::gpu::release(data_, static_cast<size_t>(nbytes_));
  profiler::note_free(static_cast<int>(device_), role_, nbytes_);
}

void Storage::set_role(MemRole role) {
  if (role == role_) return;
  // Move the bytes between role counters without counting an allocation.
  profiler::note_retag(static_cast<int>(device_), role_, role, nbytes_);
  role_ = role;
}

}  // namespace prism
