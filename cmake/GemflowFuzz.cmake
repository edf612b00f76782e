# gemflow_add_fuzz_harness(NAME SOURCES a.cpp ... [LIBRARIES ...] [SEEDS glob ...]
#                          [REGRESSIONS dir])
# (io's harnesses: plugins/io/CMakeLists.txt; the workflow loader's: tests/fuzz.)
#
# One libFuzzer harness (a file defining LLVMFuzzerTestOneInput) of a reader or loader.
# - Every build links it with fuzz_replay_main.cpp into fuzz_replay_<NAME>, and CTest (label
#   unit) replays through it the committed regression inputs (REGRESSIONS: inputs that once
#   crashed, hung or tripped a sanitizer) and the seed corpus (SEEDS: globs relative to the
#   project root, e.g. sample_data/*.tbl; shared/data is added when it exists). No clang needed.
# - With GEMFLOW_FUZZ=ON (the `fuzz` preset: clang, -fsanitize=fuzzer-no-link,address,undefined)
#   it is also linked with -fsanitize=fuzzer into fuzz_<NAME>, which `make fuzz` runs.
# The seed globs are written to <build>/fuzz/<NAME>.seeds for `make fuzz`.
set(GEMFLOW_FUZZ_REPLAY_MAIN ${CMAKE_CURRENT_LIST_DIR}/../tests/fuzz/fuzz_replay_main.cpp)

function(gemflow_add_fuzz_harness name)
  cmake_parse_arguments(F "" "REGRESSIONS" "SOURCES;LIBRARIES;SEEDS" ${ARGN})
  set(seed_files "")
  foreach(g IN LISTS F_SEEDS)
    file(GLOB_RECURSE s CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${g})
    list(APPEND seed_files ${s})
    # sample_data/X is also looked for in shared/data (the larger corpus, when present);
    # ../shared/... globs (the reliability reproducers) are used when they exist.
    string(REGEX REPLACE "^sample_data/" "" shared_g "${g}")
    if(EXISTS ${PROJECT_SOURCE_DIR}/../shared/data AND NOT shared_g STREQUAL g)
      file(GLOB_RECURSE s CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/../shared/data/${shared_g})
      list(APPEND seed_files ${s})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES seed_files)
  string(REPLACE ";" "\n" seed_lines "${seed_files}")
  file(WRITE ${PROJECT_BINARY_DIR}/fuzz/${name}.seeds "${seed_lines}\n")

  if(GEMFLOW_FUZZ)
    add_executable(fuzz_${name} ${F_SOURCES})
    target_link_libraries(fuzz_${name} PRIVATE ${F_LIBRARIES})
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    set_property(GLOBAL APPEND PROPERTY GEMFLOW_FUZZ_HARNESSES ${name})
  endif()

  if(GEMFLOW_BUILD_TESTS)
    add_executable(fuzz_replay_${name} ${F_SOURCES} ${GEMFLOW_FUZZ_REPLAY_MAIN})
    target_link_libraries(fuzz_replay_${name} PRIVATE gemflow_warnings ${F_LIBRARIES})
    set(inputs "")
    if(F_REGRESSIONS)
      list(APPEND inputs ${F_REGRESSIONS})
    endif()
    add_test(NAME fuzz_replay.${name}
             COMMAND fuzz_replay_${name} ${inputs} --list ${PROJECT_BINARY_DIR}/fuzz/${name}.seeds)
    set_tests_properties(fuzz_replay.${name} PROPERTIES LABELS unit TIMEOUT 300)
  endif()
endfunction()
