// The engine's logger: spdlog's default logger, shared by C++ modules (spdlog::info) and
// scripts (engine.log), writing to stderr and, while a run is open, to its log file.
#pragma once

#include <string>

namespace host {

void log_setup();                          // idempotent
void log_to_file(const std::string& path);  // replaces the previous file, if any
void log_close_file();

}  // namespace host
