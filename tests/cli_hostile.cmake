# Hostile input to the CLI (run by ctest as cli_hostile_input_exits_2): wrong types everywhere,
# huge numbers, deep nesting, bytes that are not UTF-8 in a file and in flags. Each run must end
# with exit code 2 (invalid input, every problem listed), never with an abort or a crash.
# -DCLI=path/to/cutlab -DFIXTURES=tests/fixtures -DWORK=scratch dir
string(ASCII 255 bad)  # 0xFF: never valid UTF-8
file(MAKE_DIRECTORY "${WORK}")
file(WRITE "${WORK}/not-utf8.json" "{\"model\": \"${bad}\", \"cluster\": \"dgx-h100\"}")
set(deep "")
foreach(i RANGE 2000)
  string(APPEND deep "[")
endforeach()
file(WRITE "${WORK}/deep.json" "{\"model\": \"llama3-8b\", \"cluster\": \"dgx-h100\", \"plan\": ${deep}}")
# strict JSON: a key twice (the last one used to win silently), a valid config then a NUL byte and
# garbage (tests/fixtures/nul-then-garbage.json: the bytes after the NUL used to be ignored)
file(WRITE "${WORK}/duplicate.json" "{\"model\": \"llama3-8b\", \"cluster\": {\"preset\": \"dgx-h100\", \"gpus\": 8}, \"plan\": {\"tp\": 8, \"tp\": 8}, \"workload\": {\"seq_len\": 4096, \"global_batch\": 8}}")
file(WRITE "${WORK}/deep-cases.json" "{\"cases\": [{\"kind\": \"memory\", \"plan\": ${deep}}]}")

set(n 0)
macro(expect_invalid)
  math(EXPR n "${n} + 1")
  execute_process(COMMAND "${CLI}" ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "2")
    message(FATAL_ERROR "run ${n}: cutlab ${ARGN}\nexpected exit 2, got ${rc}\n${out}\n${err}")
  endif()
endmacro()

foreach(cmd evaluate schedule search)
  expect_invalid(${cmd} "${FIXTURES}/hostile.json")
  expect_invalid(${cmd} "${FIXTURES}/hostile.json" --json)
endforeach()
expect_invalid(gpu "${FIXTURES}/hostile.json" --rank 0 --json)
expect_invalid(evaluate "${WORK}/not-utf8.json" --json)
expect_invalid(evaluate "${WORK}/deep.json" --json)
expect_invalid(evaluate "${WORK}/duplicate.json")
expect_invalid(evaluate "${FIXTURES}/nul-then-garbage.json" --json)
expect_invalid(search "${WORK}/duplicate.json" --json)
expect_invalid(evaluate --model "${bad}" --cluster "${bad}" --schedule "${bad}" --recompute "${bad}" --json)
expect_invalid(evaluate --model llama3-8b --cluster dgx-h100 --tp "${bad}" --gpus 1e400 --seq-len -9223372036854775809 --json)
expect_invalid(schedule --model llama3-8b --cluster dgx-h100 --dtype "${bad}" --json)
expect_invalid(validate "${FIXTURES}/hostile.json" --json)
expect_invalid(validate "${WORK}/deep-cases.json")
message(STATUS "${n} hostile runs, each exit 2")
