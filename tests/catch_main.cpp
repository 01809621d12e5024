// Catch2's main, in its own translation unit so that it is compiled once.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
