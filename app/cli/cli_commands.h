#pragma once

#include <string>
#include <vector>

namespace netsmith::cli {

/// Exit codes: 0 success, 1 runtime failure, 2 invalid input (flags, project, data).
constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitInvalid = 2;

int runValidate(const std::vector<std::string>& words);
int runSummary(const std::vector<std::string>& words);
int runEnv(const std::vector<std::string>& words);
int runOps(const std::vector<std::string>& words);

/// The text `netsmith-cli --help` prints.
std::string usageText();

}  // namespace netsmith::cli
