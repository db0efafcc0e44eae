#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace netsmith {

/// A failure caused by what a user gave us (a file, a form, a flag), with a message that names
/// the place and what to do. Thrown by core; the CLI prints it, the GUI shows it.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure of the machine rather than of the input: a disk full, a permission denied, a folder
/// that cannot be created. The CLI exits with its own code (3) for it.
class IoError : public Error {
 public:
  using Error::Error;
};

/// `text` with every control character written as an escape (`\n`, `\t`, `\x1b`): a path or
/// name from a file quoted into a message or a log never starts a line of its own or sends a
/// terminal sequence.
std::string printable(const std::string& text);

/// Where the first control character (a newline, a tab, an escape) in `text` is, or
/// std::string::npos when there is none.
std::size_t controlCharacterAt(const std::string& text);

/// "" for plain text; else the problem with a path or name read from a file: `contains a
/// control character (\n) in "..."; paths and names here are plain text` (a newline or a
/// terminal escape in a path would start a line of its own in every message and log naming it).
std::string controlCharacterProblem(const std::string& text);

/// One problem found while validating user input. `path` names the place in the project file
/// (`model.input.channels`) or the node (`node "fc1"`); `fix` is an optional suggestion.
struct Problem {
  std::string path;
  std::string message;
  std::string nodeId;  ///< set when the problem belongs to a model node
  std::string fix;     ///< e.g. `set in_features to 1568 or "auto"`

  /// `node "fc1": Linear expects 3136 inputs but receives 1568; set in_features to 1568 or "auto"`
  std::string toString() const;
};

using Problems = std::vector<Problem>;

/// Joins problems one per line.
std::string formatProblems(const Problems& problems);

}  // namespace netsmith
