#include "cli/cli_args.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "schema/param_schema.h"

namespace netsmith::cli {

namespace {

/// "unknown option --epoch; did you mean --epochs?"
UsageError unknownOption(const std::string& w, const std::set<std::string>& flags,
                         const std::set<std::string>& options) {
  std::vector<std::string> known(flags.begin(), flags.end());
  known.insert(known.end(), options.begin(), options.end());
  const std::string guess = schema::closestName(w, known);
  return UsageError{"unknown option " + w +
                    (guess.empty() ? std::string() : "; did you mean " + guess + "?")};
}

}  // namespace

Args::Args(const std::vector<std::string>& words, const std::set<std::string>& flags,
           const std::set<std::string>& options) {
  for (const auto& w : words)
    if (w == "--help" || w == "-h") throw HelpRequested{};
  for (std::size_t i = 0; i < words.size(); ++i) {
    std::string w = words[i];
    if (w.size() > 2 && w.compare(0, 2, "--") == 0) {
      std::string value;
      bool inlineValue = false;
      if (const auto eq = w.find('='); eq != std::string::npos) {
        value = w.substr(eq + 1);
        w = w.substr(0, eq);
        inlineValue = true;
      }
      if (flags.count(w)) {
        if (inlineValue) throw UsageError{w + " takes no value"};
        m_flags.insert(w);
      } else if (options.count(w)) {
        if (!inlineValue) {
          if (i + 1 >= words.size()) throw UsageError{w + " needs a value"};
          value = words[++i];
        }
        // `--predictions ""` (an unset shell variable) names nothing: said, not ignored.
        if (value.empty()) throw UsageError{w + " needs a value; \"\" names nothing"};
        m_options[w] = value;
      } else {
        throw unknownOption(w, flags, options);
      }
    } else if (w.size() > 1 && w[0] == '-' && !(w[1] >= '0' && w[1] <= '9')) {
      throw unknownOption(w, flags, options);
    } else {
      m_positional.push_back(w);
    }
  }
}

std::string Args::option(const std::string& name, const std::string& fallback) const {
  auto it = m_options.find(name);
  return it == m_options.end() ? fallback : it->second;
}

long long Args::integer(const std::string& name, long long fallback, long long min,
                        long long max) const {
  auto it = m_options.find(name);
  if (it == m_options.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE) {
    throw UsageError{name + " expects a whole number, got \"" + text + "\""};
  }
  if (v < min || v > max) {
    throw UsageError{name + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + text};
  }
  return v;
}

double Args::real(const std::string& name, double fallback, double above) const {
  auto it = m_options.find(name);
  if (it == m_options.end()) return fallback;
  const std::string& text = it->second;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(v)) {
    throw UsageError{name + " expects a number, got \"" + text + "\""};
  }
  if (!(v > above)) {
    throw UsageError{name + " must be greater than " + std::to_string(above) + ", got " + text};
  }
  return v;
}

const std::string& Args::one(const std::string& what) const {
  if (m_positional.empty()) throw UsageError{"missing " + what};
  if (m_positional.size() > 1) throw UsageError{"unexpected argument \"" + m_positional[1] + "\""};
  return m_positional[0];
}

}  // namespace netsmith::cli
