// Storage: one buffer of bytes on one device, shared by every tensor that views it.
//
// All buffers come from `Storage::allocate`, which reports to the profiler's memory tracker
// (live bytes, peak, count, role, and the op that was open when it happened). Buffers are
// 64-byte aligned: a cache line, and the width of an AVX-512 register.
#pragma once

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

 private:
  Storage(void* data, int64_t nbytes, Device device, MemRole role)
      : data_(data), nbytes_(nbytes), device_(device), role_(role) {}
  void* data_;
  int64_t nbytes_;
  Device device_;
  MemRole role_;
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
