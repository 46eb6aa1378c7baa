// The communicator of data-parallel training: a thin layer over MPI (Open MPI's C API), the one
// place prism calls MPI.
//
// Processes, not threads. `mpirun -np N build/prism train mlp --ddp` starts N copies of prism;
// MPI numbers them 0 .. N-1 (their rank) and moves bytes between them: through shared memory on
// one machine, over the network between machines. Everything a rank knows of the others comes
// through the calls below.
//
// Never a hang. MPI itself waits forever for a rank that died or hangs. A blocking call here
// (barrier, allreduce_sum, ...) is MPI's own blocking call, which runs MPI's best algorithms,
// under a deadline: a watchdog thread that never calls MPI ends the process with an error
// naming the call if it has not returned within `timeout_s`, and mpirun then stops every rank.
// A non-blocking collective is polled (MPI_Test) until done or past the deadline, then the job
// is aborted (MPI_Abort) with the same kind of message. A rank that crashes is seen by mpirun
// itself, which stops the others.
//
// Progress. Open MPI moves a non-blocking collective's bytes only while some MPI call runs on
// the rank (there is no progress thread by default), so a collective started during backward
// advances only when the rank pokes it: Comm::poll() does, and the gradient buckets call it each
// time a gradient is ready (nn/dist/ddp.h). That is why an "overlapped" allreduce on a CPU is
// not free: its copying is done by the same core, between the backward ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace prism::dist {

// True when this process was started by an MPI launcher (mpirun / mpiexec set OMPI_COMM_WORLD_*,
// PMIx or PMI variables in each rank's environment), checked before MPI is initialised.
bool launched_by_mpi();

// A collective in flight: a slot in comm.cpp's table of MPI requests (so that only comm.cpp
// sees mpi.h). Inactive once waited for.
class Request {
 public:
  Request() = default;
  bool active() const { return slot_ >= 0; }

 private:
  friend class Comm;
  int slot_ = -1;
  const char* what_ = "";
};

class Comm;

// Lifts the deadline of `comm` for its lifetime: for collectives that wait on one rank's solo
// work of unbounded length (rank 0's evaluation and checkpoint before the trace is gathered),
// which is not a sign of a dead or hung rank. The previous deadline is back afterwards.
class WithoutDeadline {
 public:
  explicit WithoutDeadline(Comm& comm);
  ~WithoutDeadline();
  WithoutDeadline(const WithoutDeadline&) = delete;
  WithoutDeadline& operator=(const WithoutDeadline&) = delete;

 private:
  Comm& comm_;
  double saved_;
};

class Comm {
 public:
  // The communicator of all ranks (MPI_COMM_WORLD), initialising MPI on the first call. Throws a
  // prism::Error when the process was not started by an MPI launcher (launched_by_mpi()).
  // `timeout_s` bounds every wait on the other ranks (default 60 s; infinity: no deadline).
  static Comm& world(double timeout_s = 60);
  // Whether world() has initialised MPI in this process.
  static bool initialised();

  int rank() const { return rank_; }
  int size() const { return size_; }
  double timeout_s() const { return timeout_s_; }
  void set_timeout(double seconds) { timeout_s_ = seconds; }
  // The machine this rank runs on (MPI_Get_processor_name).
  const std::string& host() const { return host_; }

  // Blocking collectives under the deadline. `what` names the call in a timeout's message.
  void barrier(const char* what = "barrier");
  void allreduce_sum(float* data, int64_t n, const char* what = "allreduce");
  void allreduce_sum(double* data, int64_t n, const char* what = "allreduce");
  void allreduce_sum(int64_t* data, int64_t n, const char* what = "allreduce");
  void broadcast(float* data, int64_t n, int root, const char* what = "broadcast");
  // Every rank's value, in rank order.
  std::vector<uint64_t> allgather(uint64_t value, const char* what = "allgather");
  // Every rank's string at `root` (in rank order; empty elsewhere).
  std::vector<std::string> gather_strings(const std::string& s, int root,
                                          const char* what = "gather");

  // Non-blocking allreduce (sum, in place) of n floats: start it, then poll() or wait().
  Request start_allreduce_sum(float* data, int64_t n, const char* what = "allreduce");
  // Moves every started collective along (one MPI_Test runs MPI's progress engine for all of
  // them); true when `r` has completed.
  bool poll(Request& r);
  // Waits for `r` with the deadline.
  void wait(Request& r);

  // Prints "prism: rank R: message" to stderr and stops every rank (MPI_Abort), exit `code`.
  [[noreturn]] void abort(const std::string& message, int code = 1);
  // Ends MPI in this process (MPI_Finalize); world() may not be called again. Open MPI's
  // finalize waits for every rank to get there, and ranks get there when their own work is done:
  // rank 0 of a training run first evaluates, saves and writes its reports alone, for as long as
  // that takes. So this wait has no deadline (a rank that dies meanwhile is seen by mpirun,
  // which stops the others).
  void finalize();

 private:
  Comm() = default;
  int rank_ = 0, size_ = 1;
  double timeout_s_ = 60;
  std::string host_;
};

}  // namespace prism::dist
