// help.h: what the CLI says about itself: the overview (`cutlab --help`), each command's help
// (`cutlab COMMAND --help`), the closest known word to a mistyped one, and the flag that sets a
// config field (so that an error at /workload/global_batch can say "add --global-batch N").
#pragma once
#include <string>
#include <vector>

#include "core/error.h"

namespace cutlab::cli {

std::string usage_text();                                         // every command, both modes, the config flags
bool command_help(const std::string& command, std::string& out);  // false: no such command
const std::vector<std::string>& command_names();
const std::vector<std::string>& option_names();  // every --flag any command reads
// The candidate closest to `word` by edit distance, "" when none is within a third of its length.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);
// "--global-batch N" for "/workload/global_batch"; "" when no flag sets that path.
std::string flag_for_path(const std::string& path);
// One error as the CLI prints it ("/cluster: missing: add --cluster NAME (e.g. --cluster dgx-h100)"):
// a missing model, cluster or global batch names the flag that gives it.
std::string error_line(const Error& e);

}  // namespace cutlab::cli
