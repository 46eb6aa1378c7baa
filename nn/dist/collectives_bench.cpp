#include "nn/dist/collectives_bench.h"

#include <algorithm>
#include <cctype>

#include "nn/dist/comm.h"
#include "profiler/clock.h"
#include "profiler/collective.h"
#include "tensor/tensor.h"  // prism::Error

namespace prism::dist {

std::vector<int64_t> default_message_sizes() {
  std::vector<int64_t> s;
  for (int64_t b = 4; b <= (int64_t{64} << 20); b *= 4) s.push_back(b);
  return s;
}

int64_t parse_message_size(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return Error("message size '" + text + "': " + why);
  };
  size_t i = 0;
  int64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    // Past the limit the digits are still read (so the unit is found), the value capped.
    value = std::min(value * 10 + (text[i] - '0'), kMaxMessageBytes + 1);
    ++i;
  }
  if (i == 0) throw bad("expected bytes, e.g. 4096, 64K or 1M");
  std::string suffix = text.substr(i);
  for (char& c : suffix) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (suffix.empty() || suffix == "B") {
    shift = 0;
  } else if (suffix == "K" || suffix == "KIB") {
    shift = 10;
  } else if (suffix == "M" || suffix == "MIB") {
    shift = 20;
  } else if (suffix == "G" || suffix == "GIB") {
    shift = 30;
  } else {
    throw bad("unknown unit '" + text.substr(i) + "' (bytes, K, M or G)");
  }
  if (value > (kMaxMessageBytes >> shift)) throw bad("larger than the 1 GiB this bench allows");
  value <<= shift;
  if (value < 4) throw bad("at least 4 bytes (one float32)");
  if (value % 4 != 0) throw bad("not a whole number of float32 elements (a multiple of 4 bytes)");
  return value;
}

void check_collectives_options(const CollectivesOptions& o) {
  for (int64_t b : o.sizes) {
    if (b < 4 || b > kMaxMessageBytes || b % 4 != 0) {
      throw Error("bench collectives: message size " + std::to_string(b) +
                  " bytes: expected a multiple of 4 from 4 B to 1 GiB");
    }
  }
  for (size_t i = 0; i < o.sizes.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (o.sizes[i] == o.sizes[j]) {
        throw Error("bench collectives: message size " + std::to_string(o.sizes[i]) +
                    " bytes is given twice");
      }
    }
  }
  if (o.reps < 1) throw Error("bench collectives: --reps must be at least 1");
  if (o.warmup < 0) throw Error("bench collectives: --warmup must be at least 0");
}

// Which time a repetition gets. Each rank times its own call, from leaving the barrier to
// having the sum. The ranks leave the barrier microseconds apart, so the first out waits for the
// last inside the allreduce and measures more than the last one does; and the job can go on only
// when every rank has its result. So a repetition's time is the maximum over the ranks: what the
// slowest rank spent, what a synchronous training step waits for. (Rank 0's alone would depend
// on whether it happened to leave the barrier first or last; NCCL-tests averages over ranks by
// default, which hides the straggler this is meant to show.) The per-rank times travel in one
// extra allreduce per size, after the timed repetitions: each rank fills its own row of a
// ranks x reps table of zeros, and the sum is every rank's row.
CollectivesResult measure_allreduce(Comm& comm, const CollectivesOptions& opts) {
  check_collectives_options(opts);
  CollectivesOptions o = opts;
  if (o.sizes.empty()) o.sizes = default_message_sizes();
  CollectivesResult res;
  res.ranks = comm.size();
  res.reps = o.reps;
  res.warmup = o.warmup;
  const double bus = profiler::bus_bandwidth_factor("allreduce", comm.size());

  // One buffer for every size, of zeros: sums of zeros stay zero (no overflow to inf over many
  // repetitions), and allocating (and touching) it here keeps page faults out of the timed calls.
  const int64_t largest = *std::max_element(o.sizes.begin(), o.sizes.end());
  std::vector<float> buffer(static_cast<size_t>(largest / 4), 0.0f);
  const size_t ranks = static_cast<size_t>(comm.size()), reps = static_cast<size_t>(o.reps);
  std::vector<double> table(ranks * reps);

  for (int64_t bytes : o.sizes) {
    const int64_t n = bytes / 4;
    for (int i = 0; i < o.warmup; ++i) comm.allreduce_sum(buffer.data(), n, "collectives: warm-up");
    std::fill(table.begin(), table.end(), 0.0);
    double* mine = table.data() + static_cast<size_t>(comm.rank()) * reps;
    for (size_t r = 0; r < reps; ++r) {
      comm.barrier("collectives: barrier");
      const int64_t t0 = profiler::now_ns();
      comm.allreduce_sum(buffer.data(), n, "collectives: allreduce");
      mine[r] = static_cast<double>(profiler::now_ns() - t0) * 1e-9;
    }
    comm.allreduce_sum(table.data(), static_cast<int64_t>(table.size()), "collectives: times");

    SizeResult s;
    s.bytes = bytes;
    s.seconds.assign(reps, 0.0);
    for (size_t r = 0; r < reps; ++r) {
      // At least 1 ns: a clock that read the same twice would give a time the fit refuses.
      for (size_t k = 0; k < ranks; ++k) s.seconds[r] = std::max(s.seconds[r], table[k * reps + r]);
      s.seconds[r] = std::max(s.seconds[r], 1e-9);
    }
    s.summary = profiler::stats::summarize(s.seconds);
    s.algbw_gbs = static_cast<double>(bytes) / s.summary.median * 1e-9;
    s.busbw_gbs = s.algbw_gbs * bus;
    res.sizes.push_back(std::move(s));
  }

  std::vector<double> xs, ts;
  for (const SizeResult& s : res.sizes) {
    xs.push_back(static_cast<double>(s.bytes));
    ts.push_back(s.summary.median);
  }
  if (xs.size() >= 2) res.fit = fit_alpha_beta(xs, ts);
  return res;
}

}  // namespace prism::dist
