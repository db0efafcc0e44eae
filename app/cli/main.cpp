// netsmith-cli: the headless twin of the studio. Thin: parse the command, run it, map errors
// to exit codes (0 ok, 1 runtime failure, 2 invalid input, 3 input/output failure).
#include <iostream>
#include <string>
#include <vector>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "netsmith/version.h"
#include "registries/registries.h"
#include "schema/param_schema.h"

using namespace netsmith::cli;
using netsmith::kExitFailure;
using netsmith::kExitInvalid;
using netsmith::kExitIo;
using netsmith::kExitOk;

namespace {

/// A message as the terminal shows it: its own lines kept, every other control character (a
/// terminal escape from a file name) written as an escape.
std::string shownMessage(const std::string& text) {
  std::string out;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find('\n', start);
    out += netsmith::printable(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return out;
    out += '\n';
    start = end + 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) {
    std::cerr << usageText();
    return kExitInvalid;
  }
  const std::string command = words.front();
  words.erase(words.begin());
  try {
    if (command == "--help" || command == "-h" || command == "help") {
      if (words.size() == 1 && words[0] == "--markdown") {
        std::cout << referenceMarkdown();
        return kExitOk;
      }
      if (!words.empty()) throw UsageError{"help takes --markdown or nothing"};
      std::cout << usageText();
      return kExitOk;
    }
    if (command == "--version") {
      std::cout << "netsmith-cli " << NETSMITH_VERSION << '\n';
      return kExitOk;
    }
    // Every registry this program knows, built here once and handed to the command.
    if (const auto* c = findCommand(command))
      return c->run(words, netsmith::Registries::builtins());
    const std::string guess = netsmith::schema::closestName(command, commandNames());
    throw UsageError{"unknown command \"" + command + "\"" +
                     (guess.empty() ? std::string() : "; did you mean \"" + guess + "\"?")};
  } catch (const HelpRequested&) {
    const std::string help = commandHelp(command);
    std::cout << (help.empty() ? usageText() : help);
    return kExitOk;
  } catch (const UsageError& e) {
    const std::string help = commandHelp(command);
    std::cerr << "netsmith-cli: " << e.message << "\n\n" << (help.empty() ? usageText() : help);
    return kExitInvalid;
  } catch (const netsmith::IoError& e) {
    std::cerr << "netsmith-cli: input/output failure: " << shownMessage(e.what()) << '\n';
    return kExitIo;
  } catch (const netsmith::Error& e) {
    std::cerr << "netsmith-cli: " << shownMessage(e.what()) << '\n';
    return kExitInvalid;
  } catch (const std::exception& e) {
    std::cerr << "netsmith-cli: failed: " << shownMessage(e.what()) << '\n';
    return kExitFailure;
  }
}
