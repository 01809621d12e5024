// golden_dump: the façade's JSON for every config of the golden corpus (tests/golden/corpus.mjs),
// one line per call: "<line> <function> <json>". Reads the corpus on stdin. A refactor that must
// not change numbers compares this output before and after (tests/golden/record).
// golden_dump --evaluate: evaluate_json of each line alone, one answer per line (the native side of
// tests/js/corpus-parity.test.mjs, which holds the WASM module to the same text, errors included).
#include <iostream>
#include <string>

#include "core/api.h"

int main(int argc, char** argv) {
  using namespace cutlab::api;
  std::string line;
  if (argc > 1 && std::string(argv[1]) == "--evaluate") {
    while (std::getline(std::cin, line)) std::cout << evaluate_json(line) << "\n";
    return 0;
  }
  int n = 0;
  while (std::getline(std::cin, line)) {
    ++n;
    std::cout << n << " evaluate " << evaluate_json(line) << "\n";
    std::cout << n << " schedule " << schedule_json(line) << "\n";
    std::cout << n << " timeline " << timeline_json(line, 960, 0) << "\n";
    std::cout << n << " gpus " << gpus_json(line, 0, 32) << "\n";
    std::cout << n << " gpu " << gpu_json(line, 5) << "\n";
    std::cout << n << " options " << options_json(line) << "\n";
    if (n % 8 == 0) std::cout << n << " search " << search_json(line, 3) << "\n";
  }
  std::cout << "presets " << presets_json() << "\n";
  return 0;
}
