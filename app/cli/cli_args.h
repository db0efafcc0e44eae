#pragma once

#include <exception>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace netsmith::cli {

/// Thrown for bad command lines; main prints the message and the command's usage, then exits 2.
struct UsageError : std::exception {
  explicit UsageError(std::string why) : message(std::move(why)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

/// Thrown when the words hold --help or -h: main prints the command's usage and exits 0.
struct HelpRequested : std::exception {
  const char* what() const noexcept override { return "help requested"; }
};

/// A minimal parser for `command POSITIONAL... [--flag] [--option VALUE]`.
///   Args args(argv + 2, argc - 2, {"--json"}, {"--batch-size"});
///   auto n = args.integer("--batch-size", 64);
class Args {
 public:
  Args(const std::vector<std::string>& words, const std::set<std::string>& flags,
       const std::set<std::string>& options);

  bool has(const std::string& flag) const { return m_flags.count(flag) > 0; }
  std::string option(const std::string& name, const std::string& fallback = {}) const;
  long long integer(const std::string& name, long long fallback, long long min,
                    long long max) const;
  /// A finite real number above `above` (exclusive).
  double real(const std::string& name, double fallback, double above) const;
  const std::vector<std::string>& positional() const { return m_positional; }
  /// The single positional argument `what` (throws UsageError when missing or repeated).
  const std::string& one(const std::string& what) const;

 private:
  std::set<std::string> m_flags;
  std::map<std::string, std::string> m_options;
  std::vector<std::string> m_positional;
};

}  // namespace netsmith::cli
