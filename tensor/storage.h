// Storage: one buffer of bytes on one device, shared by every tensor that views it.
//
// All buffers come from `Storage::allocate`, which reports to the profiler's memory tracker
// (live bytes, peak, count, role, and the op that was open when it happened). Buffers are
// 64-byte aligned: a cache line, and the width of an AVX-512 register.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "kernels/types.h"
#include "profiler/memory.h"

namespace prism {

using profiler::MemRole;

class Storage {
 public:
  static std::shared_ptr<Storage> allocate(int64_t nbytes, Device device, MemRole role);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  int64_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  MemRole role() const { return role_; }
  // Re-tags the buffer (a tensor created as an activation that becomes a parameter).
  void set_role(MemRole role);

  // The version counter: how many times this buffer was modified in place (0 when allocated).
  // Every view of the buffer shares it. Autograd records it when an op saves a tensor for
  // backward and refuses the backward if it moved (tensor/autograd/saved.h).
  uint64_t version() const { return version_.load(std::memory_order_relaxed); }
  // Counts one in-place modification. Every in-place op calls it (through Tensor::bump_version).
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // A number no other Storage of this process has (never reused, unlike an address): lets
  // autograd tell that a saved tensor's buffer was swapped for another one.
  uint64_t id() const { return id_; }

 private:
  Storage(void* data, int64_t nbytes, Device device, MemRole role);
  void* data_;
  int64_t nbytes_;
  Device device_;
  MemRole role_;
  uint64_t id_;
  std::atomic<uint64_t> version_{0};
};

// The role new buffers get on this thread (default: activation). The autograd engine sets
// gradient, optimizers set optimizer, data loaders set data.
MemRole current_alloc_role();
class AllocRole {
 public:
  explicit AllocRole(MemRole role);
  ~AllocRole();
  AllocRole(const AllocRole&) = delete;
  AllocRole& operator=(const AllocRole&) = delete;

 private:
  MemRole saved_;
};

// The device factories (zeros, randn, ...) create tensors on when not told otherwise; cpu by
// default. `prism summary` builds and runs a model under DefaultDevice(Device::meta).
Device default_device();
class DefaultDevice {
 public:
  explicit DefaultDevice(Device device);
  ~DefaultDevice();
  DefaultDevice(const DefaultDevice&) = delete;
  DefaultDevice& operator=(const DefaultDevice&) = delete;

 private:
  Device saved_;
};

}  // namespace prism
