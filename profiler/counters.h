// Event counters per op: what `perf stat` counts, attributed to ops (`--counters`).
//
// A CounterSet opens two groups of perf events (perf_event_open(2), Linux) for the calling thread
// (pid 0, cpu -1, inherit 0):
//   hardware: cycles, instructions, branches, branch misses, cache misses (the generic
//             PERF_COUNT_HW_CACHE_MISSES: last-level cache misses on most x86 CPUs), counted in
//             user space only (exclude_kernel), so an op is charged for its own code and not for
//             the kernel's work on its behalf, nor for the counter reads around it;
//   software: page faults, context switches, CPU migrations (the kernel's own counts, kernel
//             included where perf_event_paranoid allows it).
// Each group is read with one read() (PERF_FORMAT_GROUP | TOTAL_TIME_ENABLED |
// TOTAL_TIME_RUNNING). A group shares the PMU's counters with every other user; when there are
// more events than counters the kernel multiplexes (time-slices) them, and a count read over a
// stretch is scaled up by enabled / running time, as perf stat does (counts_between).
//
// Honesty about scope: the counters count THE CALLING THREAD ONLY. An op whose kernel runs an
// OpenMP parallel loop does part of its work on worker threads, and their cycles and misses are
// not in the op's counts (the op table's `threads` column tells which ops that is). Counting the
// process instead (inherit = 1) would not help: inherit follows only threads created after the
// events are opened, and OpenMP's pool already exists by then; and a process-wide count would
// mix in whatever another thread (a data loader) does during the op. So for exact per-op figures
// of a parallel kernel, run it at one thread (`--threads 1`), where the calling thread does all
// the work.
//
// Where the kernel or a virtual machine refuses an event (no virtual PMU: ENOENT; a
// perf_event_paranoid setting or a container's seccomp filter: EACCES / EPERM), the set says so
// once, in notice(), and counts what it could open: the software events work almost everywhere.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace prism::profiler {

// The events, hardware first. The order is the column order of every report.
enum class Counter : uint8_t {
  cycles,
  instructions,
  branches,
  branch_misses,
  cache_misses,
  page_faults,
  context_switches,
  cpu_migrations,
};
inline constexpr int kNumCounters = 8;
inline constexpr int kNumHardwareCounters = 5;  // cycles .. cache_misses

// "cycles", "instructions", "branches", "branch_misses", "cache_misses", "page_faults",
// "context_switches", "cpu_migrations": the JSON keys.
const char* counter_name(Counter c);
inline bool is_hardware(Counter c) {
  return static_cast<int>(c) < kNumHardwareCounters;
}
inline uint8_t counter_bit(Counter c) {
  return static_cast<uint8_t>(1u << static_cast<int>(c));
}

// Counts of a stretch of execution (one op call, or a sum of them): one value per Counter and
// the set of counters that were counted. A counter not in `mask` was not counted and reads 0:
// never a garbage value.
struct CounterValues {
  int64_t value[kNumCounters] = {};
  uint8_t mask = 0;

  bool has(Counter c) const { return (mask & counter_bit(c)) != 0; }
  int64_t get(Counter c) const { return has(c) ? value[static_cast<int>(c)] : 0; }
  void set(Counter c, int64_t v) {
    value[static_cast<int>(c)] = v;
    mask |= counter_bit(c);
  }
  bool any() const { return mask != 0; }
};

// Adds `b`'s counts into `a` (the counters either has).
void add_counts(CounterValues& a, const CounterValues& b);
// Subtracts `b`'s counts from `a` on the counters `a` has: a parent op minus its children.
void subtract_counts(CounterValues& a, const CounterValues& b);

// One raw reading of a CounterSet: the running totals as the kernel returned them, and each
// group's enabled and running times (group 0: hardware, group 1: software). Two readings give
// the counts between them (counts_between).
struct CounterReading {
  uint64_t raw[kNumCounters] = {};
  uint64_t enabled_ns[2] = {};
  uint64_t running_ns[2] = {};
  uint8_t mask = 0;  // the counters this reading has
};

// A count corrected for multiplexing: the event counted `raw` events while it was on the PMU for
// `running` of the `enabled` nanoseconds, so over the whole stretch it would have counted about
// raw x enabled / running. Exact (raw) when running == enabled; 0 when running == 0 (the event
// never got a counter: unknown, and counts_between leaves it out).
int64_t scale_count(uint64_t raw, uint64_t enabled, uint64_t running);

// The counts between two readings of one set: per counter, (raw delta) scaled by the group's
// (enabled delta) / (running delta), which is how perf stat scales an interval (scaling each
// running total first and subtracting would charge one stretch with another's multiplexing).
// A counter missing from either reading, or whose group never ran in between, is left out.
CounterValues counts_between(const CounterReading& start, const CounterReading& end);

// Decodes the buffer one read() of a group returns with read_format PERF_FORMAT_GROUP |
// PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING:
//   { u64 nr; u64 time_enabled; u64 time_running; u64 value[nr]; }
// False when the buffer is shorter than that, or nr differs from `expected` or exceeds
// kNumCounters. No allocation: it runs at every op's start and end.
struct GroupRead {
  uint64_t enabled_ns = 0, running_ns = 0;
  uint64_t values[kNumCounters] = {};
  size_t count = 0;
};
bool decode_group_read(const uint64_t* words, size_t n_words, size_t expected, GroupRead* out);

// Where the counts come from. The recorder reads one at every op's start and end on the thread
// it was given to (recorder.h, set_thread_counters); tests give it synthetic readings.
class CounterReader {
 public:
  virtual ~CounterReader() = default;
  virtual void read(CounterReading& out) = 0;
};

// One event the set asks the kernel for (what perf_event_attr gets).
struct EventRequest {
  Counter counter;
  uint32_t type;    // PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE
  uint64_t config;  // PERF_COUNT_HW_* or PERF_COUNT_SW_*
  bool exclude_kernel;
};
// Opens one event for the calling thread in group `group_fd` (-1: as a group leader); returns
// the file descriptor, or -errno. open_perf_event is the real one (the perf_event_open system
// call); tests pass their own to force a failure or to stand software events in for hardware
// ones.
using EventOpener = std::function<int(const EventRequest&, int group_fd)>;
int open_perf_event(const EventRequest& request, int group_fd);

// /proc/sys/kernel/perf_event_paranoid, or INT32_MIN when it cannot be read.
int read_perf_event_paranoid();

// Why an event could not be opened, for a learner: the errno's text and name, and the likely
// cause (no PMU in a virtual machine, a perf_event_paranoid setting, a seccomp filter).
std::string open_failure_reason(int error, int paranoid);

// What one event of a set came to.
struct CounterStatus {
  Counter counter;
  bool open = false;
  bool user_only = false;  // counted in user space only (hardware; software where paranoid asks)
  int error = 0;           // errno of the failed open; 0 when open
};

class CounterSet final : public CounterReader {
 public:
  // Opens the events for the calling thread; never throws for an event the machine refuses (see
  // status() and notice()). `paranoid` is only used to explain a refusal.
  explicit CounterSet(const EventOpener& opener = open_perf_event,
                      int paranoid = read_perf_event_paranoid());
  ~CounterSet() override = default;  // the groups close their events
  CounterSet(const CounterSet&) = delete;
  CounterSet& operator=(const CounterSet&) = delete;

  // One read() per open group. A read that fails leaves that group's counters out.
  void read(CounterReading& out) override;

  uint8_t mask() const { return mask_; }  // the counters that opened
  const std::vector<CounterStatus>& status() const { return status_; }
  // "" when every event opened; else one paragraph: which events are missing, the errno text,
  // the likely reason, and what is counted instead.
  const std::string& notice() const { return notice_; }

 private:
  // Owns its file descriptors: closed when the group goes, also when the constructor throws
  // after some events opened.
  struct Group {
    int leader = -1;
    std::vector<Counter> counters;  // in the order the kernel returns their values
    std::vector<int> fds;
    Group() = default;
    ~Group();
    Group(const Group&) = delete;
    Group& operator=(const Group&) = delete;
  };
  void open_group(const EventOpener& opener, const std::vector<EventRequest>& requests, Group& g);

  Group groups_[2];  // 0: hardware, 1: software
  uint8_t mask_ = 0;
  std::vector<CounterStatus> status_;
  std::string notice_;
};

// What a profile says about its counters (Profile::counters; every report prints it).
struct CounterInfo {
  bool enabled = false;  // asked for (--counters)
  uint8_t mask = 0;      // the counters that opened
  std::string notice;    // CounterSet::notice(): "" when all opened
  // What one reading costs (measure_read_ns); an op record takes two, and they land in the
  // profile's times. 0: not measured (the lab reads outside its clock).
  double read_ns = 0;
  // How the counts are attributed, for the report's line.
  std::string attribution = "per op, self (the counts of nested ops subtracted, as self time)";
  // What is counted: the thread that started the session, the only one whose counters it reads.
  std::string scope =
      "the thread that started the session only (OpenMP worker threads and other threads are not "
      "counted)";
};

// The median time of one read of `reader`, in ns (5 runs of 32 reads): what counting adds to
// every op record, twice.
double measure_read_ns(CounterReader& reader);

// The counters of `info` for a report: "counters: <events>; <attribution>; counted on <scope>",
// then the notice; "" when counters were not asked for.
std::string counters_line(const CounterInfo& info);

}  // namespace prism::profiler
