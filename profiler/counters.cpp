// Opening, reading and scaling perf event counters (counters.h explains what is counted).
#include "profiler/counters.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

#ifdef __linux__
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace prism::profiler {

namespace {

constexpr const char* kNames[kNumCounters] = {"cycles",           "instructions",  "branches",
                                              "branch_misses",    "cache_misses",  "page_faults",
                                              "context_switches", "cpu_migrations"};

// How a report names them in a sentence.
constexpr const char* kWords[kNumCounters] = {"cycles",           "instructions",  "branches",
                                              "branch misses",    "cache misses",  "page faults",
                                              "context switches", "CPU migrations"};

// "a, b and c".
std::string join_words(const std::vector<Counter>& cs) {
  std::string out;
  for (size_t i = 0; i < cs.size(); ++i) {
    if (i > 0) out += i + 1 == cs.size() ? " and " : ", ";
    out += kWords[static_cast<int>(cs[i])];
  }
  return out;
}

const char* errno_name(int e) {
  switch (e) {
    case ENOENT:
      return "ENOENT";
    case EOPNOTSUPP:
      return "EOPNOTSUPP";
    case ENODEV:
      return "ENODEV";
    case EACCES:
      return "EACCES";
    case EPERM:
      return "EPERM";
    case ENOSYS:
      return "ENOSYS";
    case EINVAL:
      return "EINVAL";
    case EMFILE:
      return "EMFILE";
    case EBUSY:
      return "EBUSY";
    default:
      return "";
  }
}

#ifdef __linux__
// The request as the kernel takes it. Counting starts at once (disabled = 0): the recorder only
// ever looks at differences between two readings.
perf_event_attr attr_of(const EventRequest& r) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = r.type;
  a.config = r.config;
  a.read_format =
      PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  a.disabled = 0;
  a.inherit = 0;
  a.exclude_kernel = r.exclude_kernel ? 1 : 0;
  a.exclude_hv = 1;
  return a;
}
#endif

std::vector<EventRequest> hardware_requests() {
#ifdef __linux__
  return {{Counter::cycles, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
          {Counter::instructions, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true},
          {Counter::branches, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true},
          {Counter::branch_misses, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true},
          {Counter::cache_misses, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, true}};
#else
  return {};
#endif
}

std::vector<EventRequest> software_requests() {
#ifdef __linux__
  return {{Counter::page_faults, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false},
          {Counter::context_switches, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
          {Counter::cpu_migrations, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false}};
#else
  return {};
#endif
}

}  // namespace

const char* counter_name(Counter c) {
  return kNames[static_cast<int>(c)];
}

void add_counts(CounterValues& a, const CounterValues& b) {
  for (int i = 0; i < kNumCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    if (b.has(c)) a.set(c, a.get(c) + b.value[i]);
  }
}

void subtract_counts(CounterValues& a, const CounterValues& b) {
  for (int i = 0; i < kNumCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    if (a.has(c) && b.has(c)) a.value[i] -= b.value[i];
  }
}

int64_t scale_count(uint64_t raw, uint64_t enabled, uint64_t running) {
  if (running == 0) return 0;
  if (running >= enabled) return static_cast<int64_t>(raw);
  return static_cast<int64_t>(
      std::llround(static_cast<double>(raw) * static_cast<double>(enabled) / running));
}

CounterValues counts_between(const CounterReading& start, const CounterReading& end) {
  CounterValues out;
  const uint8_t both = start.mask & end.mask;
  for (int i = 0; i < kNumCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    if (!(both & counter_bit(c))) continue;
    const int g = is_hardware(c) ? 0 : 1;
    // Totals only grow; a reading that went backwards is not a count (a reader mix-up).
    if (end.raw[i] < start.raw[i] || end.enabled_ns[g] < start.enabled_ns[g] ||
        end.running_ns[g] < start.running_ns[g]) {
      continue;
    }
    const uint64_t raw = end.raw[i] - start.raw[i];
    const uint64_t enabled = end.enabled_ns[g] - start.enabled_ns[g];
    const uint64_t running = end.running_ns[g] - start.running_ns[g];
    if (running == 0 && enabled > 0) continue;  // never on the PMU in between: unknown
    out.set(c, running == 0 ? static_cast<int64_t>(raw) : scale_count(raw, enabled, running));
  }
  return out;
}

bool decode_group_read(const uint64_t* words, size_t n_words, size_t expected, GroupRead* out) {
  if (expected > static_cast<size_t>(kNumCounters)) return false;
  if (n_words < 3 || words[0] != expected || n_words < 3 + expected) return false;
  out->enabled_ns = words[1];
  out->running_ns = words[2];
  for (size_t i = 0; i < expected; ++i) out->values[i] = words[3 + i];
  out->count = expected;
  return true;
}

int open_perf_event(const EventRequest& request, int group_fd) {
#ifdef __linux__
  perf_event_attr a = attr_of(request);
  // pid 0, cpu -1: the calling thread, on whichever CPU it runs.
  const long fd = syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
  return fd >= 0 ? static_cast<int>(fd) : -errno;
#else
  (void)request;
  (void)group_fd;
  return -ENOSYS;
#endif
}

int read_perf_event_paranoid() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  int v = 0;
  if (in >> v) return v;
  return INT_MIN;
}

std::string open_failure_reason(int error, int paranoid) {
  const char* name = errno_name(error);
  std::string out =
      fmt::format("{}{}", std::strerror(error), *name ? fmt::format(" ({})", name) : std::string());
  switch (error) {
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return out +
             ": not supported: a virtual machine without a virtual PMU, or a CPU whose PMU this "
             "kernel does not know";
    case EACCES:
    case EPERM: {
      std::string why = paranoid == INT_MIN
                            ? std::string("perf_event_paranoid could not be read")
                            : fmt::format("/proc/sys/kernel/perf_event_paranoid is {}", paranoid);
      if (paranoid == 2) {
        why +=
            " (2 allows unprivileged users to count user space only; context switches and "
            "migrations happen in the kernel)";
      } else if (paranoid >= 3 && paranoid != INT_MIN) {
        why +=
            " (3 and above forbid perf events to unprivileged users; 2 allows counting your "
            "own user-space code)";
      }
      return out + ": not permitted: " + why +
             "; a container's seccomp filter can also block perf_event_open";
    }
    case ENOSYS:
      return out + ": this kernel has no perf events, or a seccomp filter hides the system call";
    case EMFILE:
    case ENFILE:
      return out + ": too many open files";
    case EBUSY:
      return out + ": another program holds the PMU exclusively";
    case EINVAL:
      return out + ": the kernel refused the event's settings";
    default:
      return out;
  }
}

CounterSet::CounterSet(const EventOpener& opener, int paranoid) {
  open_group(opener, hardware_requests(), groups_[0]);
  open_group(opener, software_requests(), groups_[1]);

  // The notice: one sentence per errno among the events that failed, hardware and software apart.
  std::string notice;
  for (const bool hw : {true, false}) {
    std::vector<int> errors;
    for (const CounterStatus& s : status_) {
      if (s.open || is_hardware(s.counter) != hw) continue;
      bool seen = false;
      for (int e : errors) seen = seen || e == s.error;
      if (!seen) errors.push_back(s.error);
    }
    for (int e : errors) {
      std::vector<Counter> failed;
      for (const CounterStatus& s : status_) {
        if (!s.open && is_hardware(s.counter) == hw && s.error == e) failed.push_back(s.counter);
      }
      notice += fmt::format("{} counters unavailable: perf_event_open refused {}: {}.\n",
                            hw ? "hardware" : "software", join_words(failed),
                            open_failure_reason(e, paranoid));
    }
  }
  if (!notice.empty()) {
    std::vector<Counter> counted;
    for (const CounterStatus& s : status_) {
      if (s.open) counted.push_back(s.counter);
    }
    notice += counted.empty() ? "No counters could be opened: only the times are shown.\n"
                              : "Counting only " + join_words(counted) + ".\n";
  }
  notice_ = std::move(notice);
}

void CounterSet::open_group(const EventOpener& opener, const std::vector<EventRequest>& requests,
                            Group& g) {
  // Room first, so an fd that opened is always stored (and closed by ~Group) without a throw.
  g.fds.reserve(requests.size());
  g.counters.reserve(requests.size());
  status_.reserve(status_.size() + requests.size());
  for (EventRequest r : requests) {
    CounterStatus s;
    s.counter = r.counter;
    int fd = opener(r, g.leader);
    // perf_event_paranoid 2 allows user-space counting only: a page fault taken in user code is
    // still counted there. Context switches and migrations happen in the kernel and would read
    // 0 in user space, so they are reported missing instead.
    if ((fd == -EACCES || fd == -EPERM) && !r.exclude_kernel && r.counter == Counter::page_faults) {
      r.exclude_kernel = true;
      fd = opener(r, g.leader);
    }
    s.user_only = r.exclude_kernel;
    if (fd < 0) {
      s.error = -fd;
    } else {
      s.open = true;
      if (g.leader < 0) g.leader = fd;  // the first to open leads; the rest join its group
      g.fds.push_back(fd);
      g.counters.push_back(r.counter);
      mask_ |= counter_bit(r.counter);
    }
    status_.push_back(s);
  }
}

CounterSet::Group::~Group() {
#ifdef __linux__
  // Members first, then the leader (closing a leader first would leave the members orphaned
  // until they close too; harmless, but in order is clearer).
  for (auto it = fds.rbegin(); it != fds.rend(); ++it) ::close(*it);
#endif
}

void CounterSet::read(CounterReading& out) {
  out.mask = 0;
#ifdef __linux__
  for (int gi = 0; gi < 2; ++gi) {
    const Group& g = groups_[gi];
    if (g.leader < 0) continue;
    uint64_t buf[3 + kNumCounters];
    const ssize_t n = ::read(g.leader, buf, sizeof buf);
    GroupRead gr;
    if (n <= 0 || !decode_group_read(buf, static_cast<size_t>(n) / sizeof(uint64_t),
                                     g.counters.size(), &gr)) {
      continue;
    }
    out.enabled_ns[gi] = gr.enabled_ns;
    out.running_ns[gi] = gr.running_ns;
    for (size_t i = 0; i < g.counters.size(); ++i) {
      out.raw[static_cast<int>(g.counters[i])] = gr.values[i];
      out.mask |= counter_bit(g.counters[i]);
    }
  }
#endif
}

double measure_read_ns(CounterReader& reader) {
  using clock = std::chrono::steady_clock;
  constexpr int kReads = 32;
  double runs[5];
  CounterReading r;
  for (double& run : runs) {
    const auto t0 = clock::now();
    for (int i = 0; i < kReads; ++i) reader.read(r);
    run = std::chrono::duration<double, std::nano>(clock::now() - t0).count() / kReads;
  }
  std::sort(runs, runs + 5);
  return runs[2];
}

std::string counters_line(const CounterInfo& info) {
  if (!info.enabled) return "";
  std::vector<Counter> counted;
  for (int i = 0; i < kNumCounters; ++i) {
    if (info.mask & counter_bit(static_cast<Counter>(i)))
      counted.push_back(static_cast<Counter>(i));
  }
  std::string out = counted.empty()
                        ? std::string("counters: none could be opened\n")
                        : fmt::format("counters: {}; {}; counted on {}\n", join_words(counted),
                                      info.attribution, info.scope);
  if (info.read_ns > 0 && !counted.empty()) {
    out += fmt::format(
        "counting costs two reads of {:.0f} ns per op record, inside the profiled op times: time "
        "ops "
        "without --counters\n",
        info.read_ns);
  }
  return out + info.notice;
}

}  // namespace prism::profiler
