// launch_cli.h: `cutlab export` and `cutlab import` (core/launch.h), given the config text the
// other commands read (a file and flags) or the launch file to read.
#pragma once
#include <string>

#include "core/launch.h"

namespace cutlab::cli {

// Prints the launch configuration of the config (the text on stdout, notes on stderr; --json: one
// JSON answer). Returns the exit code: 0, 1 (a format that does not fit the mode), 2 (invalid input).
int export_launch_text(const std::string& config_text, LaunchFormat format, bool as_json);

// Reads a launch file into a cutlab config. `apply` puts the command line's flags (--model,
// --cluster, --gpus, …) over the imported config; the result is validated as a config is.
int import_launch_file(const std::string& path, LaunchFormat format, bool as_json, bool (*apply)(nlohmann::json&, void*), void* ctx);

}  // namespace cutlab::cli
