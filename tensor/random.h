// The seeded random generator behind rand() and randn().
//
// xoshiro256** (Blackman and Vigna, 2018): 256 bits of state, period 2^256 - 1, passes BigCrush,
// and a few instructions per number. We write it out (rather than use std::mt19937 and the
// standard distributions) so that a seed gives the same numbers with every compiler and
// standard library: the distributions in <random> are implementation-defined.
#pragma once

#include <cstdint>

namespace prism {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0x5eed) { seed_with(seed); }
  void seed_with(uint64_t seed);
  uint64_t next_u64();
  double uniform();  // [0, 1) with 53 random bits
  double normal();   // standard normal (Box-Muller, both values used)

 private:
  uint64_t s_[4];
  bool have_spare_ = false;
  double spare_ = 0;
};

// The process-wide generator used by the factories. Like any Generator it is not locked: a
// thread that draws numbers concurrently with others (a data-loading thread) owns its own.
Generator& default_generator();
void manual_seed(uint64_t seed);

}  // namespace prism
