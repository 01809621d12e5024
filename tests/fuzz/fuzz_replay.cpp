// fuzz_replay FILE…: runs each file of the fuzz corpus (tests/fuzz/corpus, the seeds and every input
// a fuzzing run found worth keeping) through fuzz_check.h without libFuzzer, so ctest keeps every
// case green on any compiler. Exit 1 naming the first file whose answers break a rule.
#include <fstream>
#include <iostream>
#include <sstream>

#include "tests/fuzz/fuzz_check.h"

int main(int argc, char** argv) {
  int failed = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::cerr << "fuzz_replay: cannot read " << argv[i] << "\n";
      return 1;
    }
    std::ostringstream text;
    text << in.rdbuf();
    const std::string broke = cutlab::fuzz::check_input(text.str());
    if (!broke.empty()) {
      std::cerr << argv[i] << ": " << broke << "\n";
      ++failed;
    }
  }
  std::cout << (argc - 1) << " inputs, " << failed << " broke a rule\n";
  return failed ? 1 : 0;
}
