// Event counts (counters.h) as JSON, shared by the profile's JSON, the trace, the bench record
// and the lab's rows. A counter that was not counted is null, never 0: 0 is a count.
#pragma once

#include <nlohmann/json.hpp>

#include "profiler/counters.h"

namespace prism::profiler {

// {"cycles": n | null, "instructions": ..., ...}: every counter, null where `mask` lacks it.
// Json is nlohmann::json or nlohmann::ordered_json.
template <class Json>
Json counter_values_json(const CounterValues& v, uint8_t mask) {
  Json j = Json::object();
  for (int i = 0; i < kNumCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    j[counter_name(c)] = (mask & counter_bit(c)) && v.has(c) ? Json(v.get(c)) : Json(nullptr);
  }
  return j;
}

// What was counted and, where something was refused, the notice saying why.
template <class Json>
Json counter_info_json(const CounterInfo& info) {
  Json counted = Json::array(), missing = Json::array();
  for (int i = 0; i < kNumCounters; ++i) {
    const Counter c = static_cast<Counter>(i);
    (info.mask & counter_bit(c) ? counted : missing).push_back(counter_name(c));
  }
  Json j = Json::object();
  j["counted"] = std::move(counted);
  j["unavailable"] = std::move(missing);
  j["attribution"] = info.attribution;
  j["scope"] = info.scope;
  j["read_ns"] = info.read_ns;
  j["notice"] = info.notice;
  return j;
}

}  // namespace prism::profiler
