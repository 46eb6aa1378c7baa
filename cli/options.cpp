#include "cli/options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <optional>
#include <sstream>

#include <fmt/format.h>

namespace prism::cli {

namespace {

// The whole of `s` as a finite number; nullopt for anything else ("abc", "1x", "nan", "inf",
// "1e400").
std::optional<double> finite_number(const std::string& s) {
  // strtod, not stod: stod throws on a value that underflows (1e-320, a denormal, is a number in
  // range) as it does on one that overflows (1e400 comes back infinite here).
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

constexpr long long kMaxSeed = 1LL << 62;

}  // namespace

CLI::Validator whole_number(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        size_t used = 0;
        long long v = 0;
        try {
          v = std::stoll(s, &used);
        } catch (const std::exception&) {
          used = 0;
        }
        if (used == 0 || used != s.size() || v < lo || v > hi) {
          return fmt::format("expected a whole number from {} to {}, got '{}'", lo, hi, s);
        }
        return "";
      },
      "");  // the range is in the option's help text
}

CLI::Validator distinct_whole_numbers(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const std::string expected = fmt::format(
            "expected distinct whole numbers from {} to {}, comma-separated, got '{}'", lo, hi, s);
        std::vector<long long> seen;
        std::string::size_type start = 0;
        while (true) {
          const auto comma = s.find(',', start);
          std::string item = s.substr(start, comma - start);
          if (!whole_number(lo, hi)(item).empty()) {
            return expected + (s.find(',') == std::string::npos ? "" : " ('" + item + "')");
          }
          const long long v = std::stoll(item);
          if (std::find(seen.begin(), seen.end(), v) != seen.end()) {
            return expected + " (" + item + " twice)";
          }
          seen.push_back(v);
          if (comma == std::string::npos) return "";
          start = comma + 1;
        }
      },
      "");
}

std::vector<int> int_list(const std::string& s) {
  std::vector<int> out;
  std::istringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoi(item));
  return out;
}

CLI::Validator positive_number(double hi, bool allow_zero) {
  return CLI::Validator(
      [hi, allow_zero](std::string& s) -> std::string {
        const std::optional<double> v = finite_number(s);
        if (!v || !(*v > 0 || (allow_zero && *v == 0))) {
          if (allow_zero) return fmt::format("expected a number >= 0, got '{}'", s);
          return fmt::format("expected a positive number, got '{}'", s);
        }
        if (*v > hi) return fmt::format("expected a positive number up to {:g}, got '{}'", hi, s);
        return "";
      },
      "");
}

CLI::Validator number_in(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        const std::optional<double> v = finite_number(s);
        if (!v || *v < lo || *v > hi) {
          return fmt::format("expected a number from {:g} to {:g}, got '{}'", lo, hi, s);
        }
        return "";
      },
      "");
}

CLI::Validator seed_number() {
  return whole_number(0, kMaxSeed);
}

CLI::Validator file_name() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return s.empty() ? std::string("expected a file name, got an empty string") : "";
      },
      "");
}

void add_rope(CLI::App& cmd, bool& rope) {
  cmd.add_flag("--rope", rope,
               "transformers: rotary position embeddings in every attention layer, no learned "
               "position table");
}

void add_model_threads(CLI::App& cmd, int& threads) {
  cmd.add_option("--threads", threads, "OpenMP threads (default: PRISM_THREADS, else all cores)")
      ->check(whole_number(1, 1024));
}
void add_model_seed(CLI::App& cmd, uint64_t& seed) {
  cmd.add_option("--seed", seed, "seed for the weights and the synthetic inputs")
      ->check(seed_number())
      ->capture_default_str();
}
void add_image_size(CLI::App& cmd, int64_t& image_size) {
  cmd.add_option("--image-size", image_size,
                 "image models: square input size (default the model's)")
      ->check(whole_number(1, 4096));
}
void add_block(CLI::App& cmd, int64_t& block_size) {
  cmd.add_option("--block", block_size, "transformers: context length (default the model's)")
      ->check(whole_number(1, 1'000'000));
}
void add_kernel(CLI::App& cmd, std::vector<std::string>& kernels) {
  cmd.add_option("--kernel", kernels, "run a kernel variant for an op, e.g. matmul=naive")
      ->type_name("OP=VARIANT")
      ->allow_extra_args(false);
}
void add_no_peak(CLI::App& cmd, bool& no_peak) {
  cmd.add_flag("--no-peak", no_peak, "do not look up or measure the machine's peak FLOP/s");
}

}  // namespace prism::cli
