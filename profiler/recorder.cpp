#include "profiler/recorder.h"

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
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
    case Phase::recompute:
      return "recompute";
    case Phase::communication:
      return "communication";
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

// ---- threads and sessions: the protocol --------------------------------------------------------
//
// Who touches what. Every thread that records owns a ThreadBuffer: two append-only logs (op and
// scope records, memory samples) and the stack of its open records; only that thread, the owner,
// writes them. stop_recording (the collector) reads every buffer from its own thread while the
// owners may still be recording: an OpenMP region or a data loader's thread does not wait for
// Session::stop(). g_epoch numbers the sessions; start_recording bumps it.
//
// The rules that make this race-free with no lock and no read-modify-write per record:
//
//  1. Publication. The owner fills a log slot, then stores the log's length with release. The
//     collector loads the length with acquire and reads only the slots below it, so each was
//     completely written before it is read, and the owner never writes a published slot's
//     OpRecord again (until rule 3 recycles it).
//  2. Closing. What a record learns after it is published (end time, allocation counts, GPU
//     timer slot, a scope's output shape) lives beside the OpRecord in its Slot, and the slot's
//     `closed` flag guards it: the owner writes those fields, then stores `closed` with release;
//     the collector reads them only after loading `closed == true` with acquire. A record that is
//     not closed yet is cut at the stop time, from its open-time fields alone.
//  3. Epochs. A buffer's logs hold one session's items, that of its `epoch`. Before every record
//     the owner compares it with g_epoch (acquire): when a session has started since, the owner
//     empties its logs and its open stack and stores the new epoch (release). The collector of
//     session E skips any buffer whose epoch is not E. Emptying recycles slots the previous
//     collector read, which is safe: the owner saw the new g_epoch, stored by start_recording,
//     which runs after the previous stop_recording returned (Session allows one session at a
//     time), so the collector's reads happen before the owner's rewrites.
//  4. Stale handles. A record opened in session E and closed after E+1 started: its buffer is
//     either still at epoch E (the close completes a slot of E, which E's collector has read as
//     open and cut, and no later collector reads) or has moved to E+1 and emptied its open
//     stack, so close_op finds no matching handle and drops the close. Either way the record
//     never appears in E+1, and an op of E+1 never gets it as a parent.
//  5. Stop time. recording() is read relaxed, so an owner may append after the collector has
//     turned it off. The collector keeps, per thread, the records opened no later than its stop
//     time (a prefix: a thread's records are in start order) and cuts those still open at it, so
//     every record lies within the session's [start, stop].
//  6. Registration. A thread takes a buffer under the registry mutex once, at its first record;
//     when it exits it hands it back under the mutex, and the next new thread continues that
//     buffer's logs (so buffers, and tids, do not pile up with short-lived threads). The
//     collector holds the mutex while it walks the buffers.
//
// What that guarantees: every op that happens after start() and before stop() (in the C++ sense:
// a joined thread, a parallel region that ended, an op handed over through an atomic or a mutex)
// is in the profile; an op concurrent with start() or stop() may be in it or not; no record is
// ever half-written, from another session, or outside the session. The cost: with no session,
// one relaxed load and a branch (the caller's recording()); while recording, an acquire load of
// g_epoch and release stores of a length and a flag, all plain moves on x86-64.

namespace {

// A single-writer, append-only log whose items never move (chunks, never reallocated), so the
// collector can read a published prefix while the owner appends behind it (rule 1).
template <class T, int32_t kChunk>
class Log {
 public:
  Log() = default;
  ~Log() {
    for (Chunk* c = head_; c;) {
      Chunk* next = c->next;
      delete c;
      c = next;
    }
  }
  Log(const Log&) = delete;
  Log& operator=(const Log&) = delete;

  // ---- the owner thread only
  int32_t size() const { return size_; }
  // The slot publish() makes visible next; no reader sees it before, so the owner fills it freely.
  T& next() {
    if (!cur_ || used_ == kChunk) advance();
    return cur_->items[used_];
  }
  void publish() {
    ++used_;
    ++size_;
    published_.store(size_, std::memory_order_release);
  }
  // Forgets every item, keeping the chunks (no allocation once grown). Only when no reader can
  // be reading them (rule 3).
  void clear() {
    cur_ = nullptr;
    used_ = 0;
    size_ = 0;
    published_.store(0, std::memory_order_relaxed);
  }

  // ---- readers
  int32_t published() const { return published_.load(std::memory_order_acquire); }
  // Calls f on the first n items in order (n from published()), until f returns false.
  template <class F>
  void read(int32_t n, F&& f) const {
    if (n <= 0) return;  // before the first publish the owner may be writing head_
    const Chunk* c = head_;
    for (int32_t i = 0; i < n; ++i) {
      const int32_t k = i % kChunk;
      if (i > 0 && k == 0) c = c->next;  // written before the item at i was published
      if (!f(c->items[k])) return;
    }
  }

 private:
  struct Chunk {
    T items[kChunk];
    Chunk* next = nullptr;
  };
  void advance() {
    Chunk*& link = cur_ ? cur_->next : head_;
    if (!link) link = new Chunk();  // value-initialised: no indeterminate bytes are ever copied
    cur_ = link;
    used_ = 0;
  }

  Chunk* head_ = nullptr;  // set by the owner before the first publish, then never changed
  Chunk* cur_ = nullptr;   // owner only: the chunk next() fills
  int32_t used_ = 0;       // owner only: items of cur_ in use
  int32_t size_ = 0;       // owner only
  std::atomic<int32_t> published_{0};
};

// A counted record's two readings (set_thread_counters).
struct CounterPair {
  CounterReading start, end;
};

// A record in its thread's log (rule 2).
struct Slot {
  OpRecord rec;  // written before publishing; allocs/alloc_bytes hold the counts at open
  // Written after publishing, read by the collector only once `closed` is set:
  int64_t end_ns = 0;
  int64_t end_allocs = 0;
  int64_t end_alloc_bytes = 0;
  int32_t gpu_slot = -1;
  int32_t threads = 1;  // note_threads
  // The record's two counter readings (set_thread_counters), in its buffer's counter log; null
  // when the record is not counted. Written before publishing; the pair's `end` at close, before
  // `closed`. A pointer and not the readings themselves: they are 200 bytes, and every slot
  // would carry them while only counted records, on one thread, ever use them.
  CounterPair* counted = nullptr;
  bool has_output = false;
  ShapeList output;  // a scope's output shape (note_scope_output)
  std::atomic<bool> closed{false};
};

struct OpenRecord {
  int32_t handle;  // index in the records log, what open_op returned
  Slot* slot;
};

struct ThreadBuffer {
  int32_t tid = 0;                 // fixed when the buffer is made
  std::atomic<uint64_t> epoch{0};  // the session the logs' items belong to (rule 3)
  Log<Slot, 256> records;          // about 140 KiB a chunk
  Log<MemSample, 1024> memory;     // 48 KiB a chunk
  // Collective spans (record_collective), 10 KiB a chunk: complete when appended (rule 1 only).
  Log<CollectiveSpan, 256> collectives;
  // Only for a counting session's thread. Its items never move, so a Slot points at one; the
  // collector reaches them only through published slots (rules 1 and 2), never by its length.
  Log<CounterPair, 256> counter_readings;  // 52 KiB a chunk
  // The owner's own state; it moves with the buffer when a thread exits and another takes over.
  uint64_t owner_epoch = 0;
  std::vector<OpenRecord> open;  // the open records, innermost last
};

// Numbers the sessions (rule 3). Written by start_recording under the registry mutex.
std::atomic<uint64_t> g_epoch{0};

// The registry of thread buffers and interned scope paths.
struct Global {
  std::mutex mu;
  std::vector<std::unique_ptr<ThreadBuffer>> buffers;  // every buffer ever made; tid = index
  std::vector<ThreadBuffer*> free_buffers;             // handed back by threads that exited
  // Interned scopes: (parent id, name) -> id; paths[id] is the full dotted path and names[id]
  // the last component. Strings live in unique_ptrs so their c_str() stays valid for records.
  std::map<std::pair<int32_t, std::string>, int32_t> scope_ids;
  std::vector<std::unique_ptr<std::string>> paths;
  std::vector<std::unique_ptr<std::string>> names;
  int64_t start_ns = 0;
  // Live bytes per device and role when the session started (Recording::start_live_by_role).
  std::array<std::array<int64_t, kNumRoles>, kNumDevices> start_live_by_role{};

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
  bool exited = false;  // the buffer was handed back at thread exit: record nothing more
  CounterReader* counters = nullptr;  // set_thread_counters; owned by t_counters below
};

thread_local ThreadContext t_ctx;

// Keeps this thread's counter reader alive (set_thread_counters). Apart from t_ctx, which must
// stay trivially destructible for the hot path; clears t_ctx's pointer when the thread exits.
struct CounterOwner {
  std::shared_ptr<CounterReader> reader;
  ~CounterOwner() { t_ctx.counters = nullptr; }
};
thread_local CounterOwner t_counters;

// Hands the thread's buffer back when the thread exits (rule 6). Records it left open stay
// open, and a session cuts them at its stop. A separate thread_local from t_ctx so the hot path
// reads t_ctx without the guard a destructor would add.
void release_buffer() {
  ThreadBuffer* b = t_ctx.buffer;
  t_ctx.exited = true;
  if (!b) return;
  t_ctx.buffer = nullptr;
  b->open.clear();
  Global& g = global();
  std::lock_guard lock(g.mu);
  g.free_buffers.push_back(b);
}

struct ThreadExit {
  bool armed = false;
  ~ThreadExit() {
    if (armed) release_buffer();
  }
};
thread_local ThreadExit t_exit;

ThreadBuffer* register_thread() {
  // Another thread_local's destructor, run after ours at thread exit, may still free memory.
  if (t_ctx.exited) return nullptr;
  ThreadBuffer* b = nullptr;
  {
    Global& g = global();
    std::lock_guard lock(g.mu);
    if (!g.free_buffers.empty()) {
      b = g.free_buffers.back();
      g.free_buffers.pop_back();
    } else {
      auto nb = std::make_unique<ThreadBuffer>();
      nb->tid = static_cast<int32_t>(g.buffers.size());
      b = nb.get();
      g.buffers.push_back(std::move(nb));
    }
  }
  t_exit.armed = true;
  t_ctx.buffer = b;
  return b;
}

// A session has started since this buffer last recorded: drop the older session's items.
void begin_epoch(ThreadBuffer& b, uint64_t epoch) {
  b.records.clear();
  b.memory.clear();
  b.collectives.clear();
  b.counter_readings.clear();
  b.open.clear();
  b.owner_epoch = epoch;
  b.epoch.store(epoch, std::memory_order_release);
}

// This thread's buffer, at the current session's epoch; null after the thread's exit.
ThreadBuffer* current_buffer() {
  ThreadBuffer* b = t_ctx.buffer;
  if (!b && !(b = register_thread())) return nullptr;
  const uint64_t epoch = g_epoch.load(std::memory_order_acquire);
  if (b->owner_epoch != epoch) [[unlikely]]
    begin_epoch(*b, epoch);
  return b;
}

// The id of the scope `name` inside `parent`, and its name as a string that is never freed.
int32_t intern_scope(int32_t parent, std::string_view name, const char** name_out) {
  Global& g = global();
  std::lock_guard lock(g.mu);
  auto key = std::make_pair(parent, std::string(name));
  auto it = g.scope_ids.find(key);
  if (it != g.scope_ids.end()) {
    *name_out = g.names[static_cast<size_t>(it->second)]->c_str();
    return it->second;
  }
  int32_t id = static_cast<int32_t>(g.paths.size());
  const std::string& parent_path = *g.paths[static_cast<size_t>(parent)];
  std::string path =
      parent_path.empty() ? std::string(name) : parent_path + "." + std::string(name);
  g.paths.push_back(std::make_unique<std::string>(std::move(path)));
  g.names.push_back(std::make_unique<std::string>(name));
  g.scope_ids.emplace(std::move(key), id);
  *name_out = g.names.back()->c_str();
  return id;
}

int32_t open_record(Kind kind, const char* op, const char* variant, const char* device,
                    const Cost& cost, const ShapeList* shapes) {
  ThreadBuffer* b = current_buffer();
  if (!b) return -1;
  const int32_t idx = b->records.size();
  Slot& s = b->records.next();
  OpRecord& r = s.rec;
  r.kind = kind;
  r.op = op;
  r.variant = variant;
  r.grad_of = t_ctx.grad_of;
  r.device = device;
  r.phase = t_ctx.phase;
  r.scope = t_ctx.scope;
  r.parent = b->open.empty() ? -1 : b->open.back().handle;
  r.depth = static_cast<int32_t>(b->open.size());
  r.tid = b->tid;
  r.dur_ns = 0;
  r.gpu_start_ns = -1;
  r.gpu_ns = -1;
  r.gpu_slot = -1;
  r.threads = 1;
  r.cost = cost;
  if (shapes) {
    r.shapes = *shapes;
  } else {
    r.shapes.count = 0;
    r.shapes.truncated = false;
  }
  const ThreadAllocCounter& a = thread_allocs();
  r.allocs = a.count;  // start values; the collector turns them into differences
  r.alloc_bytes = a.bytes;
  s.gpu_slot = -1;
  s.threads = 1;
  s.has_output = false;
  s.closed.store(false, std::memory_order_relaxed);  // ordered by the publish below
  b->open.push_back(OpenRecord{idx, &s});
  // Scopes are not counted: only ops are attributed, and a read costs a system call. Read
  // before the clock (and after it at close), so the counted stretch holds the timed one.
  // r.counters is never written here: the collector fills it from the pair.
  s.counted = nullptr;
  if (kind == Kind::op && t_ctx.counters) [[unlikely]] {
    CounterPair& c = b->counter_readings.next();
    b->counter_readings.publish();  // only advances: no reader uses this log's length
    t_ctx.counters->read(c.start);
    c.end.mask = 0;
    s.counted = &c;
  }
  r.start_ns = now_ns();
  b->records.publish();
  return idx;
}

// The open record `handle` of this thread, or null (a stale handle, rule 4).
Slot* open_slot(int32_t handle) {
  ThreadBuffer* b = t_ctx.buffer;
  if (!b) return nullptr;
  for (auto it = b->open.rbegin(); it != b->open.rend(); ++it) {
    if (it->handle == handle) return it->slot;
  }
  return nullptr;
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
  const char* last_name = "";
  int32_t id = intern_scope(saved_scope_, name, &last_name);
  t_ctx.scope = id;
  if (recording()) record_ = open_record(Kind::scope, last_name, "", "", Cost{}, nullptr);
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
  Slot& s = *t_ctx.buffer->open.back().slot;
  if (s.rec.kind != Kind::scope) return;
  // Published already: into the close-time fields, which the collector reads once closed.
  s.output.count = 0;
  s.output.truncated = false;
  s.output.add(dims, ndim);
  s.has_output = true;
}

void note_threads(int threads) {
  if (!recording() || !t_ctx.buffer) return;
  // The innermost open op: a kernel runs inside its op's record, perhaps inside scopes too.
  for (auto it = t_ctx.buffer->open.rbegin(); it != t_ctx.buffer->open.rend(); ++it) {
    Slot& s = *it->slot;
    if (s.rec.kind != Kind::op) continue;
    s.threads = std::max<int32_t>(s.threads, threads);  // a close-time field, read once closed
    return;
  }
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
  const int64_t t = now_ns();
  ThreadBuffer* b = t_ctx.buffer;
  // A session may have started since this op opened: then this thread's buffer began a new
  // epoch and emptied its open stack, the handle is stale, and the close is dropped (rule 4).
  if (!b || b->open.empty() || b->open.back().handle != handle) return;
  Slot& s = *b->open.back().slot;
  b->open.pop_back();
  // No reader any more (the thread's session stopped from another thread, recorder.h): the
  // pair's end stays empty and the record uncounted.
  if (s.counted && t_ctx.counters) [[unlikely]]
    t_ctx.counters->read(s.counted->end);
  const ThreadAllocCounter& a = thread_allocs();
  s.end_ns = t;
  s.end_allocs = a.count;
  s.end_alloc_bytes = a.bytes;
  s.closed.store(true, std::memory_order_release);  // rule 2: the fields above, then the flag
}

void record_memory_sample(int device, int64_t live_bytes, int role, int64_t role_bytes) {
  ThreadBuffer* b = current_buffer();
  if (!b) return;
  // The op that made or dropped the buffer: the innermost open op record of this thread (scopes
  // are modules, not ops), so a report can name the op that reached the peak.
  const char* op = "";
  for (auto it = b->open.rbegin(); it != b->open.rend(); ++it) {
    if (it->slot->rec.kind == Kind::op) {
      op = it->slot->rec.op;
      break;
    }
  }
  b->memory.next() = MemSample{now_ns(), live_bytes, device, b->tid, role, role_bytes, op};
  b->memory.publish();
}

void record_collective(const char* op, int64_t start_ns, int64_t end_ns, int64_t bytes,
                       int world_size) {
  // Checked even when not recording: a bad call is a bug whether or not a session is watching.
  if (!op || !*op) throw std::invalid_argument("record_collective: the op name is empty");
  const std::string what = std::string("record_collective(\"") + op + "\"): ";
  if (end_ns < start_ns) {
    throw std::invalid_argument(what + "end_ns " + std::to_string(end_ns) + " is before start_ns " +
                                std::to_string(start_ns));
  }
  if (bytes < 0) throw std::invalid_argument(what + "bytes " + std::to_string(bytes) + " < 0");
  if (world_size < 1) {
    throw std::invalid_argument(what + "world_size " + std::to_string(world_size) + " < 1");
  }
  if (!recording()) return;
  ThreadBuffer* b = current_buffer();
  if (!b) return;
  b->collectives.next() = CollectiveSpan{op, start_ns, end_ns, bytes, world_size, b->tid};
  b->collectives.publish();
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

void set_thread_counters(std::shared_ptr<CounterReader> reader) {
  t_ctx.counters = reader.get();
  t_counters.reader = std::move(reader);  // the previous reader, if any, goes after the switch
}

void set_gpu_timer_hooks(const GpuTimerHooks* hooks) {
  g_gpu_hooks.store(hooks);
}

void attach_gpu_slot(int32_t handle, int32_t slot) {
  if (Slot* s = open_slot(handle)) s->gpu_slot = slot;
}

namespace {
// Appends what buffer `b` recorded in session `epoch` to `out` (rules 1, 2, 3 and 5). Called
// under the registry mutex, while b's owner may still be appending.
void collect(const ThreadBuffer& b, uint64_t epoch, Recording& out) {
  if (b.epoch.load(std::memory_order_acquire) != epoch) return;  // nothing in this session
  const int64_t stop = out.stop_ns;
  const int32_t base = static_cast<int32_t>(out.records.size());
  b.records.read(b.records.published(), [&](const Slot& s) {
    if (s.rec.start_ns > stop) return false;  // opened after the stop, and so are the rest
    OpRecord r = s.rec;  // r.counters empty: open_record never writes it; the pair fills it
    if (r.parent >= 0) r.parent += base;
    const bool closed = s.closed.load(std::memory_order_acquire);
    if (closed) r.gpu_slot = s.gpu_slot;
    if (closed && s.end_ns <= stop) {
      r.dur_ns = s.end_ns - r.start_ns;
      r.allocs = s.end_allocs - r.allocs;
      r.alloc_bytes = s.end_alloc_bytes - r.alloc_bytes;
      r.threads = s.threads;
      if (s.has_output) r.shapes = s.output;
      if (s.counted) r.counters = counts_between(s.counted->start, s.counted->end);
    } else {
      // Open at the stop (a session stopped inside an op, or while another thread was in one):
      // cut at the stop time. What it allocated so far is unknown.
      r.dur_ns = stop - r.start_ns;
      r.allocs = 0;
      r.alloc_bytes = 0;
    }
    out.records.push_back(r);
    return true;
  });
  b.memory.read(b.memory.published(), [&](const MemSample& m) {
    if (m.t_ns > stop) return false;
    out.memory.push_back(m);
    return true;
  });
  // Spans are appended when they end, not in start order, so each is judged alone (rule 5):
  // kept when it overlaps [start, stop], cut to it like a record open at the stop. A cut span
  // keeps its bytes, so its bandwidth reads high; a session that encloses whole steps cuts none.
  b.collectives.read(b.collectives.published(), [&](const CollectiveSpan& c) {
    if (c.start_ns <= stop && c.end_ns >= out.start_ns) {
      CollectiveSpan kept = c;
      kept.start_ns = std::max(c.start_ns, out.start_ns);
      kept.end_ns = std::min(c.end_ns, stop);
      out.collectives.push_back(kept);
    }
    return true;
  });
}
}  // namespace

void start_recording() {
  Global& g = global();
  record_overhead_ns();  // calibrate before the session clock starts, never inside it
  {
    std::lock_guard lock(g.mu);
    for (int d = 0; d < kNumDevices; ++d) g.start_live_by_role[d] = memory_stats(d).live_by_role;
    g.start_ns = now_ns();
    // Release: a thread that sees the new epoch also sees everything before it here, and
    // everything the previous session's collector did (rule 3).
    g_epoch.store(g_epoch.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }
  if (const GpuTimerHooks* hooks = g_gpu_hooks.load()) hooks->reset();
  detail::g_recording.store(true, std::memory_order_release);
}

Recording stop_recording() {
  // Relaxed is enough: an op that still sees `true` lands in its buffer after the stop time and
  // is left out (rule 5), or in a buffer the next session empties first (rule 3).
  detail::g_recording.store(false, std::memory_order_relaxed);
  Recording out;
  out.stop_ns = now_ns();
  Global& g = global();
  {
    std::lock_guard lock(g.mu);
    out.start_ns = g.start_ns;
    out.start_live_by_role = g.start_live_by_role;
    const uint64_t epoch = g_epoch.load(std::memory_order_relaxed);
    for (const auto& b : g.buffers) collect(*b, epoch, out);
    out.scope_paths.reserve(g.paths.size());
    for (const auto& p : g.paths) out.scope_paths.push_back(*p);
  }
  resolve_gpu_times(out.records);
  return out;
}

double record_overhead_ns() {
  static const double cached = [] {
    // Time kReps open/close pairs, five times; keep the median run. On a scratch buffer put in
    // place of this thread's own: calibration records must never reach a session, and one may
    // be recording on another thread right now.
    constexpr int kReps = 4000;
    ThreadBuffer scratch;
    ThreadBuffer* const own = t_ctx.buffer;
    CounterReader* const counters = t_ctx.counters;  // the cost without counters is calibrated
    t_ctx.buffer = &scratch;
    t_ctx.counters = nullptr;
    ShapeList shapes;
    const int64_t dims[2] = {64, 64};
    shapes.add(dims, 2);
    shapes.add(dims, 2);
    double runs[5];
    for (double& run : runs) {
      int64_t t0 = now_ns();
      for (int i = 0; i < kReps; ++i) {
        close_op(open_op("calibrate", "naive", "cpu", Cost{1, 1, 1}, shapes));
      }
      run = static_cast<double>(now_ns() - t0) / kReps;
      scratch.records.clear();  // keeps its chunks: only the first run allocates
    }
    t_ctx.buffer = own;
    t_ctx.counters = counters;
    std::sort(runs, runs + 5);
    return runs[2];
  }();
  return cached;
}

}  // namespace prism::profiler
