#include "profiler/recorder.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "profiler/clock.h"
#include "profiler/memory.h"

namespace prism::profiler {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::forward:
      return "forward";
    case Phase::backward:
      return "backward";
    case Phase::optimizer:
      return "optimizer";
  }
  return "?";
}

void ShapeList::add(const int64_t* d, int n) {
  if (count >= kMaxShapes) {
    truncated = true;
    return;
  }
  int kept = std::min(n, kMaxDims);
  if (kept < n) truncated = true;
  for (int i = 0; i < kept; ++i) dims[count][i] = d[i];
  ndim[count] = static_cast<uint8_t>(kept);
  ++count;
}

std::string ShapeList::to_string() const {
  std::string s;
  for (int i = 0; i < count; ++i) {
    if (i) s += ' ';
    s += '[';
    for (int j = 0; j < ndim[i]; ++j) {
      if (j) s += ',';
      s += std::to_string(dims[i][j]);
    }
    s += ']';
  }
  if (truncated) s += " ...";
  return s;
}

namespace {

struct ThreadBuffer {
  int32_t tid = 0;
  std::vector<OpRecord> records;
  std::vector<MemSample> memory;
  std::vector<int32_t> open;  // stack of open record indices
};

// Global registry of thread buffers and interned scope paths.
struct Global {
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;
  // Interned scopes: (parent id, name) -> id; paths[id] is the full dotted path and names[id]
  // the last component. Strings live in unique_ptrs so their c_str() stays valid for records.
  std::map<std::pair<int32_t, std::string>, int32_t> scope_ids;
  std::vector<std::unique_ptr<std::string>> paths;
  std::vector<std::unique_ptr<std::string>> names;
  int64_t start_ns = 0;

  Global() {
    paths.push_back(std::make_unique<std::string>());
    names.push_back(std::make_unique<std::string>());
  }
};

Global& global() {
  static Global* g = new Global();  // never destroyed: records may outlive static teardown
  return *g;
}

struct ThreadContext {
  Phase phase = Phase::forward;
  const char* grad_of = "";
  int32_t scope = 0;
  ThreadBuffer* buffer = nullptr;
};

thread_local ThreadContext t_ctx;

ThreadBuffer& buffer() {
  if (!t_ctx.buffer) {
    Global& g = global();
    std::lock_guard lock(g.mu);
    auto b = std::make_unique<ThreadBuffer>();
    b->tid = static_cast<int32_t>(g.buffers.size());
    b->records.reserve(4096);
    t_ctx.buffer = b.get();
    g.buffers.push_back(std::move(b));
  }
  return *t_ctx.buffer;
}

int32_t intern_scope(int32_t parent, std::string_view name) {
  Global& g = global();
  std::lock_guard lock(g.mu);
  auto key = std::make_pair(parent, std::string(name));
  auto it = g.scope_ids.find(key);
  if (it != g.scope_ids.end()) return it->second;
  int32_t id = static_cast<int32_t>(g.paths.size());
  const std::string& parent_path = *g.paths[parent];
  std::string path =
      parent_path.empty() ? std::string(name) : parent_path + "." + std::string(name);
  g.paths.push_back(std::make_unique<std::string>(std::move(path)));
  g.names.push_back(std::make_unique<std::string>(name));
  g.scope_ids.emplace(std::move(key), id);
  return id;
}

const char* scope_name(int32_t id) {
  Global& g = global();
  std::lock_guard lock(g.mu);
  return g.names[id]->c_str();
}

int32_t open_record(Kind kind, const char* op, const char* variant, const char* device,
                    const Cost& cost, const ShapeList* shapes) {
  ThreadBuffer& b = buffer();
  int32_t idx = static_cast<int32_t>(b.records.size());
  OpRecord& r = b.records.emplace_back();
  r.kind = kind;
  r.op = op;
  r.variant = variant;
  r.device = device;
  r.grad_of = t_ctx.grad_of;
  r.phase = t_ctx.phase;
  r.scope = t_ctx.scope;
  r.parent = b.open.empty() ? -1 : b.open.back();
  r.depth = static_cast<int32_t>(b.open.size());
  r.tid = b.tid;
  r.cost = cost;
  if (shapes) r.shapes = *shapes;
  const ThreadAllocCounter& a = thread_allocs();
  r.allocs = a.count;  // start values; close_op turns them into differences
  r.alloc_bytes = a.bytes;
  b.open.push_back(idx);
  r.start_ns = now_ns();
  return idx;
}

}  // namespace

Phase current_phase() {
  return t_ctx.phase;
}
const char* current_grad_of() {
  return t_ctx.grad_of;
}
int32_t current_scope() {
  return t_ctx.scope;
}

PhaseGuard::PhaseGuard(Phase p) : saved_(t_ctx.phase) {
  t_ctx.phase = p;
}
PhaseGuard::~PhaseGuard() {
  t_ctx.phase = saved_;
}

GradOfGuard::GradOfGuard(const char* label) : saved_(t_ctx.grad_of) {
  t_ctx.grad_of = label;
}
GradOfGuard::~GradOfGuard() {
  t_ctx.grad_of = saved_;
}

Scope::Scope(std::string_view name) : saved_scope_(t_ctx.scope) {
  int32_t id = intern_scope(saved_scope_, name);
  t_ctx.scope = id;
  if (recording()) {
    record_ = open_record(Kind::scope, scope_name(id), "", "", Cost{}, nullptr);
  }
}

Scope::~Scope() {
  if (record_ >= 0) close_op(record_);
  t_ctx.scope = saved_scope_;
}

ScopeRestore::ScopeRestore(int32_t scope_id) : saved_(t_ctx.scope) {
  t_ctx.scope = scope_id;
}
ScopeRestore::~ScopeRestore() {
  t_ctx.scope = saved_;
}

void note_scope_output(const int64_t* dims, int ndim) {
  if (!recording() || !t_ctx.buffer || t_ctx.buffer->open.empty()) return;
  OpRecord& r = t_ctx.buffer->records[static_cast<size_t>(t_ctx.buffer->open.back())];
  if (r.kind != Kind::scope) return;
  r.shapes = ShapeList{};
  r.shapes.add(dims, ndim);
}

const std::string& scope_path(int32_t id) {
  Global& g = global();
  std::lock_guard lock(g.mu);
  return *g.paths.at(static_cast<size_t>(id));
}

std::vector<std::string> scope_paths() {
  Global& g = global();
  std::lock_guard lock(g.mu);
  std::vector<std::string> out;
  out.reserve(g.paths.size());
  for (const auto& p : g.paths) out.push_back(*p);
  return out;
}

int32_t open_op(const char* op, const char* variant, const char* device, const Cost& cost,
                const ShapeList& shapes) {
  return open_record(Kind::op, op, variant, device, cost, &shapes);
}

void close_op(int32_t handle) {
  int64_t t = now_ns();
  ThreadBuffer& b = *t_ctx.buffer;
  // A session may have stopped and restarted while this op was open; then the buffer was
  // cleared and the handle is stale. Drop the record rather than write out of bounds.
  if (b.open.empty() || b.open.back() != handle) return;
  b.open.pop_back();
  OpRecord& r = b.records[static_cast<size_t>(handle)];
  r.dur_ns = t - r.start_ns;
  const ThreadAllocCounter& a = thread_allocs();
  r.allocs = a.count - r.allocs;
  r.alloc_bytes = a.bytes - r.alloc_bytes;
}

void record_memory_sample(int device, int64_t live_bytes) {
  ThreadBuffer& b = buffer();
  b.memory.push_back(MemSample{now_ns(), live_bytes, device, b.tid});
}

namespace {
std::atomic<const GpuTimerHooks*> g_gpu_hooks{nullptr};

// Turns GPU timer slots into times. The GPU clock starts at the reference event recorded just
// before the first GPU op's start event, so that op's host start time is the GPU origin on the
// session clock (exact when the device was idle then; otherwise GPU spans are drawn early by
// however long the queue ahead of it took).
void resolve_gpu_times(std::vector<OpRecord>& records) {
  const GpuTimerHooks* hooks = g_gpu_hooks.load();
  if (!hooks) return;
  // Slots increase within a session: the smallest is the session's first GPU op.
  int64_t origin = -1;
  int32_t first = -1;
  for (const OpRecord& r : records) {
    if (r.gpu_slot >= 0 && (first < 0 || r.gpu_slot < first)) {
      first = r.gpu_slot;
      origin = r.start_ns;
    }
  }
  for (OpRecord& r : records) {
    if (r.gpu_slot < 0) continue;
    int64_t start = 0, dur = 0;
    if (origin >= 0 && hooks->read(r.gpu_slot, &start, &dur)) {
      r.gpu_start_ns = origin + start;
      r.gpu_ns = dur;
    }
    r.gpu_slot = -1;
  }
}
}  // namespace

void set_gpu_timer_hooks(const GpuTimerHooks* hooks) {
  g_gpu_hooks.store(hooks);
}

void attach_gpu_slot(int32_t handle, int32_t slot) {
  ThreadBuffer& b = *t_ctx.buffer;
  if (handle < 0 || static_cast<size_t>(handle) >= b.records.size()) return;
  b.records[static_cast<size_t>(handle)].gpu_slot = slot;
}

void start_recording() {
  Global& g = global();
  record_overhead_ns();  // calibrate before the session clock starts, never inside it
  {
    std::lock_guard lock(g.mu);
    for (auto& b : g.buffers) {
      b->records.clear();
      b->memory.clear();
      b->open.clear();
    }
    g.start_ns = now_ns();
  }
  if (const GpuTimerHooks* hooks = g_gpu_hooks.load()) hooks->reset();
  detail::g_recording.store(true, std::memory_order_relaxed);
}

Recording stop_recording() {
  detail::g_recording.store(false, std::memory_order_relaxed);
  Recording out;
  out.stop_ns = now_ns();
  Global& g = global();
  {
    std::lock_guard lock(g.mu);
    out.start_ns = g.start_ns;
    for (auto& b : g.buffers) {
      int32_t base = static_cast<int32_t>(out.records.size());
      // Records still open (a session stopped inside an op) are closed at the stop time.
      for (int32_t idx : b->open) {
        OpRecord& r = b->records[static_cast<size_t>(idx)];
        r.dur_ns = out.stop_ns - r.start_ns;
        r.allocs = 0;
        r.alloc_bytes = 0;
      }
      b->open.clear();
      for (OpRecord& r : b->records) {
        if (r.parent >= 0) r.parent += base;
        out.records.push_back(r);
      }
      out.memory.insert(out.memory.end(), b->memory.begin(), b->memory.end());
      b->records.clear();
      b->memory.clear();
    }
    out.scope_paths.reserve(g.paths.size());
    for (const auto& p : g.paths) out.scope_paths.push_back(*p);
  }
  resolve_gpu_times(out.records);
  return out;
}

double record_overhead_ns() {
  static const double cached = [] {
    // Time kReps open/close pairs on a scratch buffer, five times; keep the median run.
    constexpr int kReps = 4000;
    ThreadBuffer& b = buffer();
    ShapeList shapes;
    const int64_t dims[2] = {64, 64};
    shapes.add(dims, 2);
    shapes.add(dims, 2);
    double runs[5];
    for (double& run : runs) {
      size_t mark = b.records.size();
      int64_t t0 = now_ns();
      for (int i = 0; i < kReps; ++i) {
        close_op(open_op("calibrate", "naive", "cpu", Cost{1, 1, 1}, shapes));
      }
      run = static_cast<double>(now_ns() - t0) / kReps;
      b.records.resize(mark);
    }
    std::sort(runs, runs + 5);
    return runs[2];
  }();
  return cached;
}

}  // namespace prism::profiler
