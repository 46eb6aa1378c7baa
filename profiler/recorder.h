// The recorder: where op calls and scopes become OpRecords.
//
// Hot path. When no session is recording, an op pays one relaxed atomic load and a branch
// (`recording()`); bench/profiler_overhead.cpp measures it. When recording, opening and closing
// a record costs two clock reads and a write into this thread's own buffer: no lock, no heap
// allocation once the buffer has grown.
//
// Each thread records into its own buffer; a Session (session.h) gathers them when it stops.
// Other threads may go on recording while a session starts or stops (an OpenMP region, a data
// loader's thread): every op that happened between start and stop, as ordered by the threads'
// synchronisation (a join, the end of a parallel region), is in the profile; an op racing the
// stop may or may not be, and a record still open at the stop is cut at the stop time. A record
// never leaks into the next session. recorder.cpp explains the protocol and why it is
// race-free; tests/profiler/threads_test.cpp checks it, under ThreadSanitizer in `make tsan`.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "profiler/collective.h"
#include "profiler/cost.h"
#include "profiler/memory.h"
#include "profiler/record.h"

namespace prism::profiler {

namespace detail {
inline std::atomic<bool> g_recording{false};
}

inline bool recording() {
  return detail::g_recording.load(std::memory_order_relaxed);
}

// ---- thread-local context consulted by every record ----------------------------------------

Phase current_phase();
const char* current_grad_of();
int32_t current_scope();

// Marks everything run inside as backward / optimizer work (the autograd engine and optimizers
// use it; user code rarely needs to).
class PhaseGuard {
 public:
  explicit PhaseGuard(Phase p);
  ~PhaseGuard();
  PhaseGuard(const PhaseGuard&) = delete;
  PhaseGuard& operator=(const PhaseGuard&) = delete;

 private:
  Phase saved_;
};

// Labels the ops run inside as computing one gradient of a forward op, e.g. "matmul.dA".
class GradOfGuard {
 public:
  explicit GradOfGuard(const char* label);
  ~GradOfGuard();
  GradOfGuard(const GradOfGuard&) = delete;
  GradOfGuard& operator=(const GradOfGuard&) = delete;

 private:
  const char* saved_;
};

// A named scope: nests ("model" > "fc1" gives the path "model.fc1"), tags every op record
// opened inside with that path, and, when recording, is itself a record (a span in the trace,
// a node in the module tree).
class Scope {
 public:
  explicit Scope(std::string_view name);
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

 private:
  int32_t saved_scope_;
  int32_t record_ = -1;
};

// Notes the shape a scope produced (a module's output) on the innermost open scope record of
// this thread; nothing happens when not recording. Summaries print it per module.
void note_scope_output(const int64_t* dims, int ndim);

// Re-enters an existing scope path without recording a span: the autograd engine runs each
// backward node under the scope its forward op ran in, so backward ops land on the same module.
class ScopeRestore {
 public:
  explicit ScopeRestore(int32_t scope_id);
  ~ScopeRestore();
  ScopeRestore(const ScopeRestore&) = delete;
  ScopeRestore& operator=(const ScopeRestore&) = delete;

 private:
  int32_t saved_;
};

// Interned scope paths: id 0 is "" (top level).
const std::string& scope_path(int32_t id);
std::vector<std::string> scope_paths();

// ---- op records ------------------------------------------------------------------------------

// Opens a record for an op call and returns its handle (-1 when the thread can no longer
// record: it is exiting); only call while recording().
int32_t open_op(const char* op, const char* variant, const char* device, const Cost& cost,
                const ShapeList& shapes);
// Closes the record opened by open_op (records close in LIFO order on each thread).
void close_op(int32_t handle);
// Notes that the innermost open op record of this thread ran a parallel loop on `threads`
// threads (its threads become the largest count noted); nothing happens when not recording or
// when no op is open. The CPU kernels call it through kernels/cpu/parallel.h.
void note_threads(int threads);

// ---- event counters (counters.h) ---------------------------------------------------------------
// Makes every op record this thread opens from now on read `reader` at its start and end (before
// the start clock read and after the end one, so the counted stretch holds the timed one: the
// reads' own cost lands in the enclosing op's time, not in this one's); null stops it. Counts
// cover this thread only, never the OpenMP workers of a parallel kernel (counters.h). The
// thread keeps `reader` alive until it is replaced or the thread exits, so a record closing late
// never reads a freed one. A Session with counters calls it on its own thread; with no reader
// an op pays one thread-local load and a branch.
void set_thread_counters(std::shared_ptr<CounterReader> reader);

// ---- GPU time ----------------------------------------------------------------------------------
// The profiler knows no CUDA: the tensor layer hands it these hooks (kernels/gpu_runtime.h's
// timer) the first time a GPU op is recorded. A session resets the timer when it starts and
// reads every slot once when it stops, so no op waits for the GPU while recording.
struct GpuTimerHooks {
  void (*reset)();
  bool (*read)(int32_t slot, int64_t* start_ns, int64_t* dur_ns);
};
void set_gpu_timer_hooks(const GpuTimerHooks* hooks);
// Ties GPU timer slot `slot` to the open record `handle` of this thread.
void attach_gpu_slot(int32_t handle, int32_t slot);

// ---- what a finished recording holds ---------------------------------------------------------

struct MemSample {
  int64_t t_ns;
  int64_t live_bytes;  // the device's live bytes after this alloc or free
  int32_t device;
  int32_t tid;
  int32_t role;        // the MemRole of the buffer allocated or freed
  int64_t role_bytes;  // that role's live bytes on the device after it
  const char* op;      // the innermost op open on the thread ("" outside every op)
};

struct Recording {
  std::vector<OpRecord> records;  // all threads, each thread's records in start order
  std::vector<MemSample> memory;  // live bytes after every alloc / free, in time order per thread
  // Collectives in flight during the session (record_collective), per thread in the order they
  // were recorded; a span that began before the start or ended after the stop is cut to them.
  std::vector<CollectiveSpan> collectives;
  std::vector<std::string> scope_paths;
  int64_t start_ns = 0;
  int64_t stop_ns = 0;
  // Live bytes per device and role (MemRole's order) when the session started: with the
  // samples' role_bytes, every role's level at every sample.
  std::array<std::array<int64_t, kNumRoles>, kNumDevices> start_live_by_role{};
};

// Low level: Session (session.h) is the interface to use.
void start_recording();
Recording stop_recording();

// Called by the memory tracker on every alloc/free while recording: the device's live bytes and
// the role's after the change.
void record_memory_sample(int device, int64_t live_bytes, int role, int64_t role_bytes);

// Measured cost of one open_op + close_op pair on this machine, in ns (median of several runs,
// measured once per process and cached). Reported in every profile's meta block.
double record_overhead_ns();

}  // namespace prism::profiler
