#include "flag_checks.h"

#include <sched.h>

#include <cstdio>
#include <optional>
#include <string>
#include <thread>

#include "eagle2/parse_number.h"

namespace eagle2::cli {

CLI::Validator integer_in(int64_t min, int64_t max) {
  const std::string range = "[" + std::to_string(min) + ", " + std::to_string(max) + "]";
  return CLI::Validator(
      [min, max, range](std::string& text) -> std::string {
        std::string problem;
        const std::optional<int64_t> v = parse_number<int64_t>(text, &problem);
        if (!v) return problem + " (expected an integer in " + range + ")";
        if (*v < min || *v > max) return "'" + text + "' is out of range " + range;
        return {};
      },
      "INT in " + range);
}

CLI::Validator seed_value() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::string problem;
        if (!parse_number<uint64_t>(text, &problem))
          return problem + " (a seed is an integer in [0, 18446744073709551615])";
        return {};
      },
      "UINT64");
}

CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::string problem;
        return parse_number<double>(text, &problem) ? std::string() : problem;
      },
      "NUMBER");
}

CLI::Validator number_in(double min, double max, bool min_exclusive) {
  char text[96];
  std::snprintf(text, sizeof text, "%s%g, %g]", min_exclusive ? "(" : "[", min, max);
  const std::string range = text;
  return CLI::Validator(
      [min, max, min_exclusive, range](std::string& text) -> std::string {
        std::string problem;
        const std::optional<double> v = parse_number<double>(text, &problem);
        if (!v) return problem;
        if (*v < min || (min_exclusive && *v == min) || *v > max)
          return "'" + text + "' is out of range " + range;
        return {};
      },
      "NUMBER in " + range);
}

int available_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  const unsigned logical = std::thread::hardware_concurrency();
  return logical > 0 ? static_cast<int>(logical) : 1;
}

CLI::Validator thread_count() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        const int cpus = available_cpus();
        std::string problem;
        const std::optional<int64_t> v = parse_number<int64_t>(text, &problem);
        if (!v) return problem + " (expected a thread count in [1, " + std::to_string(cpus) + "])";
        if (*v < 1) return "'" + text + "' is out of range [1, " + std::to_string(cpus) + "]";
        if (*v > cpus)
          return "'" + text + "' is more than the " + std::to_string(cpus) +
                 " CPUs this process may use";
        return {};
      },
      "INT in [1, CPUs]");
}

}  // namespace eagle2::cli
