// The meta block (how and where a profile was measured) as JSON, shared by the trace's
// otherData and the JSON dump's "meta".
#pragma once

#include <nlohmann/json.hpp>

#include "profiler/session.h"

namespace prism::profiler {

inline nlohmann::ordered_json meta_json(const Profile& p) {
  const Meta& m = p.meta;
  return nlohmann::ordered_json{{"version", m.version},
                                {"threads", m.threads},
                                {"compiler", m.compiler},
                                {"flags", m.flags},
                                {"build_type", m.build_type},
                                {"clock", m.clock},
                                {"clock_resolution_ns", m.clock_resolution_ns},
                                {"overhead_ns_per_op", m.overhead_ns_per_op},
                                {"wall_ns", p.wall_ns()}};
}

}  // namespace prism::profiler
