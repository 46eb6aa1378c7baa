#include "cli/train_ddp.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "cli/commands.h"
#include "profiler/reports.h"

namespace prism::cli {

namespace {

// The number of ranks on this machine (Open MPI tells each rank), 1 if unknown.
int local_ranks() {
  for (const char* v : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"}) {
    if (const char* s = std::getenv(v)) {
      const int n = std::atoi(s);
      if (n > 0) return n;
    }
  }
  return 1;
}

// The first line of a that differs from b's, or "" when they are equal.
std::string first_difference(const std::string& a, const std::string& b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  while (true) {
    const bool ga = static_cast<bool>(std::getline(sa, la));
    const bool gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb) return "";
    if (!ga || !gb || la != lb) {
      return fmt::format("rank 0 has '{}', this rank '{}'", gb ? lb : "(nothing)",
                         ga ? la : "(nothing)");
    }
  }
}

}  // namespace

dist::Comm& start_ddp(const TrainOptions& o) {
  if (!dist::launched_by_mpi()) {
    throw UsageError(
        "--ddp needs an MPI launcher: run `mpirun -np 2 build/prism train " +
        (o.model.empty() ? std::string("MODEL") : o.model) +
        " --ddp` (Open MPI; as root add --allow-run-as-root)");
  }
  dist::Comm& comm = dist::Comm::world(o.ddp_timeout);
  if (comm.rank() != 0) {
    std::fflush(stdout);
    if (!std::freopen("/dev/null", "w", stdout)) {
      throw Error("--ddp: rank " + std::to_string(comm.rank()) + " could not silence its output");
    }
  }
  // One core per rank by default: N ranks with all cores each would fight over them.
  if (o.threads <= 0 && !std::getenv("PRISM_THREADS")) {
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    set_threads(std::max(1, static_cast<int>(cores) / local_ranks()));
  }
  return comm;
}

std::string ddp_config(const TrainOptions& o, const std::string& data_name, int64_t train_size,
                       int64_t batch, double lr, const std::string& optimizer, int64_t steps,
                       const nn::Module& model) {
  std::string c;
  c += "model: " + o.model + "\n";
  c += fmt::format("data: {} ({} examples)\n", data_name, train_size);
  c += fmt::format("global batch: {}\n", batch);
  c += fmt::format("lr: {}, optimizer: {}, schedule: {}\n", lr, optimizer, o.schedule);
  c += fmt::format("steps: {}, seed: {}\n", steps, o.seed);
  c += "precision: " + o.precision + ", checkpoint: " + o.checkpoint + "\n";
  c += fmt::format("bucket: {} MiB, overlap: {}\n", o.bucket_mb, o.no_overlap ? "off" : "on");
  c += fmt::format("check every: {}\n", o.check_every);
  for (const auto& [name, p] : model.named_parameters()) {
    c += "parameter " + name + ": " + p.shape().str() + "\n";
  }
  return c;
}

void check_same_config(dist::Comm& comm, const std::string& config) {
  const uint64_t h = std::hash<std::string>{}(config);
  // Every rank sends its configuration to rank 0 (so rank 0 can say what differs) and every rank
  // learns every hash (so every rank stops, not rank 0 alone).
  const std::vector<std::string> all = comm.gather_strings(config, 0, "configuration check");
  const std::vector<uint64_t> hashes = comm.allgather(h, "configuration check");
  std::string differ;
  for (size_t r = 1; r < hashes.size(); ++r) {
    if (hashes[r] != hashes[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  }
  if (differ.empty()) return;
  std::string detail;
  if (comm.rank() == 0) {
    for (size_t r = 1; r < all.size(); ++r) {
      if (hashes[r] != hashes[0]) {
        detail = fmt::format(" (rank {}: {})", r, first_difference(all[r], all[0]));
        break;
      }
    }
  }
  throw UsageError("--ddp: rank(s) " + differ +
                   " run a different configuration than rank 0" + detail +
                   "; every rank must run the same command");
}

std::string merged_rank_trace(dist::Comm& comm, const profiler::Profile& profile,
                              const std::string& trace) {
  // Rank 0 gets here after its evaluation and checkpoint, which it runs alone for as long as
  // they take (a transformer's sample, a large test set), while the others wait here: not a
  // dead rank, so not under --ddp-timeout (a rank that dies is still seen by mpirun).
  dist::WithoutDeadline no_deadline(comm);
  // Each rank's session start on the machine's monotonic clock: rank r's offset to rank 0's.
  const std::vector<uint64_t> starts =
      comm.allgather(static_cast<uint64_t>(profile.recording.start_ns), "trace clock");
  const std::vector<std::string> traces = comm.gather_strings(trace, 0, "trace gather");
  if (comm.rank() != 0) return "";
  std::vector<int64_t> offsets;
  for (uint64_t s : starts) offsets.push_back(static_cast<int64_t>(s - starts[0]));
  return profiler::merge_rank_traces(traces, offsets);
}

void maybe_inject_fault(const dist::Comm& comm, int64_t step, nn::Module& model) {
  const char* spec = std::getenv("PRISM_DDP_FAULT");
  if (!spec) return;
  int rank = -1;
  long long at = -1;
  char what[8] = {};
  if (std::sscanf(spec, "%d:%lld:%7s", &rank, &at, what) != 3 || rank != comm.rank() ||
      at != step) {
    return;
  }
  if (std::string(what) == "exit") {
    std::fprintf(stderr, "prism: rank %d: PRISM_DDP_FAULT: leaving at step %lld\n", rank, at);
    std::_Exit(3);
  }
  if (std::string(what) == "perturb") {
    Tensor p = model.parameters().front();
    p.data<float>()[0] += 1e-3f;
    p.bump_version();
    std::fprintf(stderr, "prism: rank %d: PRISM_DDP_FAULT: nudged a weight at step %lld\n", rank,
                 at);
    return;
  }
  if (std::string(what) == "hang") {
    std::fprintf(stderr, "prism: rank %d: PRISM_DDP_FAULT: hanging at step %lld\n", rank, at);
    std::fflush(stderr);
    while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

}  // namespace prism::cli
