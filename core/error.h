// error.h: the one error type of cutlab, for malformed input only.
// A plan that does not fit in memory is not an error: it is a result (memory.h).
// Errors are values: validation returns every broken rule at once, each with a
// JSON-pointer path ("/plan/tp") and a sentence. No exception crosses the API.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace cutlab {

enum class ErrorCode { ParseError, MissingKey, UnknownKey, WrongType, OutOfRange, Incompatible };

const char* error_code_name(ErrorCode code);

struct Error {
  ErrorCode code = ErrorCode::OutOfRange;
  std::string path;     // JSON pointer, e.g. "/plan/tp"
  std::string message;  // a sentence naming the rule, e.g. "tp = 3 does not divide heads = 64"
};

using Errors = std::vector<Error>;

// A value or the list of errors that prevented it.
template <class T>
struct Result {
  T value{};
  Errors errors;
  bool ok() const { return errors.empty(); }
};

}  // namespace cutlab
