#include "core/error.h"

namespace cutlab {

const char* error_code_name(ErrorCode code) {
  switch (code) {
    case ErrorCode::ParseError: return "parse_error";
    case ErrorCode::MissingKey: return "missing_key";
    case ErrorCode::UnknownKey: return "unknown_key";
    case ErrorCode::WrongType: return "wrong_type";
    case ErrorCode::OutOfRange: return "out_of_range";
    case ErrorCode::Incompatible: return "incompatible";
  }
  return "error";
}

}  // namespace cutlab
