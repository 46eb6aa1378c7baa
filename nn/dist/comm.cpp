#include "nn/dist/comm.h"

#include <mpi.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <thread>

#include "tensor/tensor.h"  // prism::Error

namespace prism::dist {

namespace {

bool g_initialised = false;

// The deadline of a blocking MPI call. A blocking collective runs MPI's own algorithms (for an
// allreduce, Open MPI's tuned ones: 154 us for 1 MiB between two ranks here, against 293 us for
// the same allreduce started non-blocking and waited for, which goes through the generic
// non-blocking library), but it cannot be interrupted. So a watchdog thread, which never calls
// MPI, is armed before the call and disarmed after it; if the deadline passes first, it prints
// which call gave up and ends the process with exit code 1, and mpirun then stops every rank.
class Watchdog {
 public:
  Watchdog() : thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void arm(int rank, const char* what, double timeout_s) {
    {
      std::lock_guard lock(mu_);
      rank_ = rank;
      what_ = what;
      timeout_s_ = timeout_s;
      deadline_ = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                      std::chrono::duration<double>(timeout_s));
      armed_ = true;
    }
    cv_.notify_all();
  }
  void disarm() {
    std::lock_guard lock(mu_);
    armed_ = false;
  }

 private:
  void run() {
    std::unique_lock lock(mu_);
    while (!quit_) {
      if (!armed_) {
        cv_.wait(lock);
        continue;
      }
      const auto deadline = deadline_;
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && armed_ &&
          deadline_ == deadline) {
        std::fprintf(stderr,
                     "prism: rank %d: %s: no answer from the other ranks within %g s (a rank died, "
                     "hangs, or runs a different number of steps); stopping\n",
                     rank_, what_, timeout_s_);
        std::fflush(stderr);
        std::_Exit(1);
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, quit_ = false;
  int rank_ = 0;
  const char* what_ = "";
  double timeout_s_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;
};

Watchdog& watchdog() {
  static Watchdog w;
  return w;
}

// Arms the watchdog for the scope of one blocking call (not at all for an infinite timeout).
class Deadline {
 public:
  Deadline(int rank, const char* what, double timeout_s) : armed_(std::isfinite(timeout_s)) {
    if (armed_) watchdog().arm(rank, what, timeout_s);
  }
  ~Deadline() {
    if (armed_) watchdog().disarm();
  }
  Deadline(const Deadline&) = delete;
  Deadline& operator=(const Deadline&) = delete;

 private:
  bool armed_;
};

// The requests in flight, by slot. A slot is freed only when its owner sees it done (poll or
// wait), so a slot is never reused under its owner.
struct Slot {
  MPI_Request req = MPI_REQUEST_NULL;
  bool in_use = false;
};

std::vector<Slot>& slots() {
  static std::vector<Slot> table;
  return table;
}

int take_slot(MPI_Request r) {
  auto& t = slots();
  for (size_t i = 0; i < t.size(); ++i) {
    if (!t[i].in_use) {
      t[i] = {r, true};
      return static_cast<int>(i);
    }
  }
  t.push_back({r, true});
  return static_cast<int>(t.size() - 1);
}

// "0.5", "60": a timeout as the user gave it.
std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

// MPI counts are ints: a message past 2^31 - 1 elements is refused here, not truncated.
int count_of(int64_t n, const char* what) {
  if (n < 0 || n > INT32_MAX) {
    throw Error(std::string(what) + ": " + std::to_string(n) +
                " elements do not fit one MPI message (at most 2^31 - 1)");
  }
  return static_cast<int>(n);
}

}  // namespace

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}) {
    if (std::getenv(v)) return true;
  }
  return false;
}

bool Comm::initialised() {
  return g_initialised;
}

Comm& Comm::world(double timeout_s) {
  static Comm comm;
  if (g_initialised) return comm;
  if (!launched_by_mpi()) {
    throw Error(
        "--ddp: this process was not started by an MPI launcher; run it under one, e.g. "
        "`mpirun -np 2 build/prism train mlp --ddp` (as root add --allow-run-as-root)");
  }
  int provided = 0;
  // FUNNELED: only the thread that called MPI_Init calls MPI (OpenMP's workers never do).
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  // Errors come back as codes (checked below) instead of aborting inside MPI without a word.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &comm.rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &comm.size_);
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  comm.host_.assign(name, static_cast<size_t>(len));
  comm.timeout_s_ = timeout_s;
  g_initialised = true;
  return comm;
}

void Comm::abort(const std::string& message, int code) {
  std::fprintf(stderr, "prism: rank %d: %s\n", rank_, message.c_str());
  std::fflush(stderr);
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; if it did, this rank still stops
}

WithoutDeadline::WithoutDeadline(Comm& comm) : comm_(comm), saved_(comm.timeout_s()) {
  comm_.set_timeout(std::numeric_limits<double>::infinity());
}

WithoutDeadline::~WithoutDeadline() {
  comm_.set_timeout(saved_);
}

void Comm::finalize() {
  if (!g_initialised) return;
  // No deadline (comm.h): the ranks that get here first wait for rank 0's reports.
  MPI_Finalize();
  g_initialised = false;
}

bool Comm::poll(Request& r) {
  if (!r.active()) return true;
  // One MPI_Test runs Open MPI's progress engine, which moves every collective in flight, not
  // only this one: testing the others too would cost k^2 tests for k buckets in flight.
  Slot& mine = slots()[static_cast<size_t>(r.slot_)];
  int done = 0;
  const int rc = MPI_Test(&mine.req, &done, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) {
    abort(std::string(r.what_) + ": MPI reported an error (" + std::to_string(rc) +
          "); another rank may have failed");
  }
  if (!done) return false;
  mine = Slot{};
  r.slot_ = -1;
  return true;
}

void Comm::wait(Request& r) {
  // (An infinite timeout is never compared, and its time_point is not formed: it would overflow.)
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::duration<double>(std::isfinite(timeout_s_) ? timeout_s_ : 0));
  int spins = 0;
  while (!poll(r)) {
    if (std::isfinite(timeout_s_) && std::chrono::steady_clock::now() > deadline) {
      abort(std::string(r.what_) + ": no answer from the other ranks within " +
            seconds_text(timeout_s_) +
            " s (a rank died, hangs, or runs a different number of steps); stopping every rank");
    }
    // Spin a little (a collective on one machine completes in microseconds), then yield the
    // core: with one core per rank, the rank being waited for may need this one.
    if (++spins > 1000) std::this_thread::yield();
  }
}

Request Comm::start_allreduce_sum(float* data, int64_t n, const char* what) {
  MPI_Request q = MPI_REQUEST_NULL;
  const int rc = MPI_Iallreduce(MPI_IN_PLACE, data, count_of(n, what), MPI_FLOAT, MPI_SUM,
                                MPI_COMM_WORLD, &q);
  if (rc != MPI_SUCCESS) abort(std::string(what) + ": MPI_Iallreduce failed (" +
                               std::to_string(rc) + ")");
  Request r;
  r.slot_ = take_slot(q);
  r.what_ = what;
  return r;
}

namespace {

template <class T>
MPI_Datatype mpi_type();
template <>
MPI_Datatype mpi_type<float>() {
  return MPI_FLOAT;
}
template <>
MPI_Datatype mpi_type<double>() {
  return MPI_DOUBLE;
}
template <>
MPI_Datatype mpi_type<int64_t>() {
  return MPI_INT64_T;
}
template <>
MPI_Datatype mpi_type<uint64_t>() {
  return MPI_UINT64_T;
}

}  // namespace

// The blocking collectives: MPI's blocking calls, under the watchdog's deadline.
#define PRISM_DIST_CALL(call, what)                                           \
  do {                                                                        \
    Deadline deadline_(rank_, what, timeout_s_);                              \
    const int rc_ = (call);                                                   \
    if (rc_ != MPI_SUCCESS) {                                                 \
      abort(std::string(what) + ": MPI call failed (" + std::to_string(rc_) + \
            "); another rank may have failed");                               \
    }                                                                         \
  } while (0)

void Comm::barrier(const char* what) {
  PRISM_DIST_CALL(MPI_Barrier(MPI_COMM_WORLD), what);
}

void Comm::allreduce_sum(float* data, int64_t n, const char* what) {
  PRISM_DIST_CALL(MPI_Allreduce(MPI_IN_PLACE, data, count_of(n, what), mpi_type<float>(), MPI_SUM,
                                MPI_COMM_WORLD),
                  what);
}

void Comm::allreduce_sum(double* data, int64_t n, const char* what) {
  PRISM_DIST_CALL(MPI_Allreduce(MPI_IN_PLACE, data, count_of(n, what), mpi_type<double>(), MPI_SUM,
                                MPI_COMM_WORLD),
                  what);
}

void Comm::allreduce_sum(int64_t* data, int64_t n, const char* what) {
  PRISM_DIST_CALL(MPI_Allreduce(MPI_IN_PLACE, data, count_of(n, what), mpi_type<int64_t>(), MPI_SUM,
                                MPI_COMM_WORLD),
                  what);
}

void Comm::broadcast(float* data, int64_t n, int root, const char* what) {
  PRISM_DIST_CALL(MPI_Bcast(data, count_of(n, what), MPI_FLOAT, root, MPI_COMM_WORLD), what);
}

std::vector<uint64_t> Comm::allgather(uint64_t value, const char* what) {
  std::vector<uint64_t> all(static_cast<size_t>(size_));
  PRISM_DIST_CALL(MPI_Allgather(&value, 1, mpi_type<uint64_t>(), all.data(), 1,
                                mpi_type<uint64_t>(), MPI_COMM_WORLD),
                  what);
  return all;
}

std::vector<std::string> Comm::gather_strings(const std::string& s, int root, const char* what) {
  const int len = count_of(static_cast<int64_t>(s.size()), what);
  std::vector<int> lens(static_cast<size_t>(size_));
  PRISM_DIST_CALL(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, root, MPI_COMM_WORLD),
                  what);
  std::vector<int> offsets(static_cast<size_t>(size_), 0);
  int64_t total = 0;
  for (int i = 0; i < size_; ++i) {
    offsets[static_cast<size_t>(i)] = static_cast<int>(total);
    total += lens[static_cast<size_t>(i)];
  }
  std::string all(rank_ == root ? static_cast<size_t>(count_of(total, what)) : 0, '\0');
  PRISM_DIST_CALL(MPI_Gatherv(s.data(), len, MPI_CHAR, all.data(), lens.data(), offsets.data(),
                              MPI_CHAR, root, MPI_COMM_WORLD),
                  what);
  std::vector<std::string> out;
  if (rank_ != root) return out;
  for (int i = 0; i < size_; ++i) {
    out.push_back(all.substr(static_cast<size_t>(offsets[static_cast<size_t>(i)]),
                             static_cast<size_t>(lens[static_cast<size_t>(i)])));
  }
  return out;
}

#undef PRISM_DIST_CALL

}  // namespace prism::dist
