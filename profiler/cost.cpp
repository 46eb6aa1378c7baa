#include "profiler/cost.h"

#include <ostream>

namespace prism::profiler {

std::ostream& operator<<(std::ostream& os, const Cost& c) {
  return os << "{flops " << c.flops << ", macs " << c.macs << ", bytes " << c.bytes << "}";
}

}  // namespace prism::profiler
