// What the commands' flags share, defined once: one validator per kind of number (a seed is a
// whole number from 0 to 2^62 wherever one is taken), and the flags several model commands take
// with the same name, text and checks. The commands' own flags are in their cmd_<name>.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace prism::cli {

// ---- validators ------------------------------------------------------------------------------
// Their messages say what is expected (CLI11's Range says "not in range" for "abc"); CLI11 puts
// the option's name in front: "--steps: expected a whole number ...". Each checks the whole
// string.

// A whole number from `lo` to `hi`.
CLI::Validator whole_number(long long lo, long long hi);
// Whole numbers from `lo` to `hi`, comma-separated and distinct ("1,2,4"): the whole list is
// checked at once, since a repeated count is an error only beside the others.
CLI::Validator distinct_whole_numbers(long long lo, long long hi);
// "1,2,4", already checked by distinct_whole_numbers, as numbers.
std::vector<int> int_list(const std::string& s);
// A positive finite number, at most `hi` (a learning rate past float32's largest value makes the
// first update infinite; a duration past 1e6 s overflows the nanosecond clock's arithmetic);
// with `allow_zero`, 0 too.
CLI::Validator positive_number(double hi, bool allow_zero = false);
// A finite number from `lo` to `hi`: NaN and infinities are refused (CLI11's Range and
// NonNegativeNumber let "nan" through, every comparison with it being false, and print a bound
// of DBL_MAX as a 300-digit number).
CLI::Validator number_in(double lo, double hi);
// A seed: every command takes the same ones, 0 to 2^62 (the exercise checker's range, which
// `prism check` passes on), so a seed that works for one works for all.
CLI::Validator seed_number();
// A file or directory name: an empty one ("--save ''", or an unset shell variable) is an error,
// not a silent "no output".
CLI::Validator file_name();

// ---- flags several commands share ------------------------------------------------------------
// --rope (train, bench, compare).
void add_rope(CLI::App& cmd, bool& rope);
// The model commands' (bench, compare, models, sweep, bench collectives) --threads, --seed,
// --image-size, --block, --kernel and --no-peak.
void add_model_threads(CLI::App& cmd, int& threads);
void add_model_seed(CLI::App& cmd, uint64_t& seed);
void add_image_size(CLI::App& cmd, int64_t& image_size);
void add_block(CLI::App& cmd, int64_t& block_size);
void add_kernel(CLI::App& cmd, std::vector<std::string>& kernels);
void add_no_peak(CLI::App& cmd, bool& no_peak);

}  // namespace prism::cli
