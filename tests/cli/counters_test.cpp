// `--counters` on train, bench and lab: each runs to the end (exit 0) whatever the machine allows,
// writes the counters into its JSON, and prints the notice about refused events exactly once
// (on a virtual machine without a PMU: the hardware events; on a machine with one: no notice).
#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>

#include "tests/cli/cli_run.h"
#include "tests/test_util.h"

using namespace prism::cli_test;
using nlohmann::json;

namespace {

constexpr const char* kEvents[] = {"cycles",           "instructions",  "branches",
                                   "branch_misses",    "cache_misses",  "page_faults",
                                   "context_switches", "cpu_migrations"};

size_t occurrences(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The info block says what was counted; the notice is printed once exactly when something was
// refused, and each of its lines appears once in everything the command printed.
void check_info_and_notice(const json& info, const RunResult& r) {
  REQUIRE(info.contains("counted"));
  REQUIRE(info.contains("unavailable"));
  CHECK(info["counted"].size() + info["unavailable"].size() == std::size(kEvents));
  const std::string notice = info["notice"].get<std::string>();
  const std::string printed = r.out + r.err;
  if (info["unavailable"].empty()) {
    CHECK(notice.empty());
    CHECK(occurrences(printed, "counters unavailable") == 0);
    return;
  }
  REQUIRE_FALSE(notice.empty());
  const std::string first_line = notice.substr(0, notice.find('\n'));
  CHECK(occurrences(printed, first_line) == 1);
  CHECK(contains(first_line, "perf_event_open refused"));
  // This machine class: a VM without a virtual PMU refuses the hardware events with ENOENT.
  if (contains(first_line, "(ENOENT)")) CHECK(contains(first_line, "virtual PMU"));
}

// An events object names every counter, each a number or null (not counted).
void check_events(const json& events) {
  for (const char* e : kEvents) {
    REQUIRE_MESSAGE(events.contains(e), e);
    CHECK_MESSAGE((events[e].is_null() || events[e].is_number()), e);
  }
}

// Runs `args` in `dir`, which must exit 0 and write `json_name`; checks the document's counter
// info block `info_key` and the notice against what was printed, and returns the document.
json run_counting(const std::string& args, const TempDir& dir, const std::string& json_name,
                  const char* info_key, RunResult& r) {
  r = run_prism(args, dir.path());
  INFO(prism::testing::info_text(r.out, r.err));
  REQUIRE(r.exited);
  REQUIRE(r.code == 0);
  const json doc = json::parse(read_file(dir / json_name));
  REQUIRE(doc.contains(info_key));
  check_info_and_notice(doc[info_key], r);
  return doc;
}

}  // namespace

TEST_CASE("prism train --counters profiles, counts per op and says what it could not count") {
  TempDir dir;
  RunResult r;
  const json doc = run_counting(
      "train mlp --data spirals --steps 6 --threads 1 --counters --profile-steps 2 --json p.json",
      dir, "p.json", "counters", r);
  INFO(prism::testing::info_text(r.out, r.err));
  CHECK(contains(r.out, "counters: "));  // --counters implies --profile: the table is printed
  REQUIRE_FALSE(doc["ops"].empty());
  int64_t counted = 0;
  for (const auto& op : doc["ops"]) {
    REQUIRE(op.contains("counters"));
    check_events(op["counters"]);
    counted += op["counters"]["counted_calls"].get<int64_t>();
  }
  CHECK(counted > 0);  // the step's ops run on the thread that started the session
  // Whatever opened has a column in the table.
  for (const auto& name : doc["counters"]["counted"]) {
    if (name == "page_faults") CHECK(contains(r.out, "page faults"));
    if (name == "cycles") CHECK(contains(r.out, "IPC"));
  }
}

TEST_CASE("prism bench --counters adds event counts per call to each batch and its ops") {
  TempDir dir;
  RunResult r;
  const json doc = run_counting(
      "bench mlp --batch 2 --duration 0.05 --warmup 1 --no-peak --counters --json b.json", dir,
      "b.json", "event_counters", r);
  INFO(prism::testing::info_text(r.out, r.err));
  CHECK(contains(r.out, "event counters per call"));
  const json& batch = doc["batches"].at(0);
  REQUIRE(batch.contains("events"));
  check_events(batch["events"]);
  REQUIRE_FALSE(batch["ops"].empty());
  check_events(batch["ops"].at(0)["events"]);

  // The server scenario has no profiled window to count.
  const RunResult qps = run_prism("bench mlp --qps 10 --counters --no-peak", dir.path());
  CHECK(qps.code == 2);
  CHECK(contains(qps.err, "--counters"));
}

TEST_CASE("prism lab --counters reports event counts per call for every timed variant") {
  TempDir dir;
  RunResult r;
  const json doc = run_counting(
      "lab matmul --sizes 24x16x8 --reps 3 --min-sample-ms 0.2 --no-peak --counters --json l.json",
      dir, "l.json", "event_counters", r);
  INFO(prism::testing::info_text(r.out, r.err));
  CHECK(contains(r.out, "event counters per call"));
  for (const auto& row : doc["rows"]) {
    if (!row["timed"].get<bool>()) continue;
    REQUIRE(row.contains("events_per_call"));
    check_events(row["events_per_call"]);
    CHECK(row["counted_calls"].get<int64_t>() >= 3);  // every sample has at least one call
  }
  // Without --counters the rows carry none.
  const RunResult plain = run_prism(
      "lab matmul --sizes 8x8x8 --reps 2 --min-sample-ms 0.1 --no-peak --json p.json", dir.path());
  REQUIRE(plain.code == 0);
  const json p = json::parse(read_file(dir / "p.json"));
  CHECK_FALSE(p.contains("event_counters"));
  CHECK_FALSE(p["rows"].at(0).contains("events_per_call"));
  CHECK_FALSE(contains(plain.out, "event counters"));
}
