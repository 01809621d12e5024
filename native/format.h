// format.h: plain-text tables and human units for the CLI.
#pragma once
#include <string>
#include <vector>

#include "core/choices.h"

namespace cutlab::cli {

std::string gib(double bytes);          // "71.34"
std::string human_bytes(double bytes);  // "1.50 GiB", "12.0 MiB"
std::string human_time(double s);       // "14.2 s", "3.10 ms", "12.5 µs"
std::string fixed(double v, int digits);
std::string signed_fixed(double v, int digits);   // "+3.2", "−15.1" (a minus sign, U+2212), "0.0" unsigned
std::string signed_percent(double percent);       // "+3.2%", "−15.1%"
std::string count(double v);                      // "405.9B", "37.4M"
std::string with_commas(double v);                // "16,384"
std::string xml_escape(const std::string& text);  // & < > for SVG text

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::string render() const;  // first column left-aligned, the rest right-aligned
};

}  // namespace cutlab::cli
