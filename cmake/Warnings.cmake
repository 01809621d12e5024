# One place for compiler warnings: every cutlab target (core, native, wasm, tests, bench) links
# cutlab_warnings, an INTERFACE target that only carries compile options. Third-party headers
# (nlohmann, GLM, Catch2, Google Benchmark, Emscripten) come in through imported targets or the
# compiler's own include paths, so they are system headers and raise nothing.
# -Wconversion: lossy implicit conversions (64 → 32 bits, integer ↔ floating point); Clang's
# also counts signed ↔ unsigned, hundreds of size_t/int mixes that are intended, so not that part.
option(CUTLAB_WERROR "Treat compiler warnings as errors" ON)

add_library(cutlab_warnings INTERFACE)
if(CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")   # em++ is Clang
  target_compile_options(cutlab_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                         $<$<CXX_COMPILER_ID:Clang,AppleClang>:-Wno-sign-conversion>
                         $<$<BOOL:${CUTLAB_WERROR}>:-Werror>
                         # GCC 12 false positive on "literal" + std::string&& at -O2 (GCC bug 105329)
                         $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
elseif(MSVC)
  target_compile_options(cutlab_warnings INTERFACE /W4 $<$<BOOL:${CUTLAB_WERROR}>:/WX>)
endif()
