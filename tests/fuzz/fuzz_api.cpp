// libFuzzer target (scripts/fuzz builds it with clang, -fsanitize=fuzzer,address,undefined): every
// input is a config text; a broken rule of fuzz_check.h aborts, which libFuzzer reports with the input.
#include <cstdio>
#include <cstdlib>

#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string broke = cutlab::fuzz::check_input(std::string(reinterpret_cast<const char*>(data), size));
  if (!broke.empty()) {
    std::fprintf(stderr, "cutlab fuzz: %s\n", broke.c_str());
    std::abort();
  }
  return 0;
}
