// validate.h: the `validate` and `calibrate` commands of the cutlab CLI (core/validation.h does the work).
//   cutlab validate [CASES.json] [--json] [--svg OUT.svg] [--check]
//   cutlab calibrate [CASES.json] [--family F]... [--fit key,key,...] [--max-evaluations N] [--json]
// `args` are the arguments after the command name. Exit codes as main.cpp: 0 ok, 1 usage or I/O,
// 2 invalid cases file; validate --check: 4 when the errors (in-sample and leave-one-source-out) exceed the
// limits of tests/test_validation.cpp (core/validation.h ValidationLimits).
#pragma once
#include <string>
#include <vector>

namespace cutlab::cli {

int run_validate(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);

}  // namespace cutlab::cli
