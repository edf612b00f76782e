# gemflow_add_test(NAME SOURCES a.cpp ... [LIBRARIES ...] [LABELS unit|integration|gpu|gui] [TIMEOUT s])
# One GoogleTest executable; every TEST becomes a CTest test carrying LABELS (default: unit).
# Tests find sample data through GEMFLOW_SOURCE_DIR and shared/data through GEMFLOW_SHARED_DATA.
function(gemflow_add_test name)
  cmake_parse_arguments(T "" "TIMEOUT" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE GTest::gtest GTest::gtest_main GTest::gmock
                        gemflow_warnings ${T_LIBRARIES})
  target_compile_definitions(${name} PRIVATE
    GEMFLOW_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    GEMFLOW_BINARY_DIR="${PROJECT_BINARY_DIR}"
    GEMFLOW_PLUGIN_BUILD_DIR="${GEMFLOW_PLUGIN_OUTPUT_DIR}")
  set(_timeout)
  if(T_TIMEOUT)
    set(_timeout TIMEOUT ${T_TIMEOUT})
  endif()
  gtest_discover_tests(${name}
    PROPERTIES LABELS "${T_LABELS}"
               ENVIRONMENT "GEMFLOW_SHARED_DATA=${PROJECT_SOURCE_DIR}/../shared/data"
               # every `gemflow run` of a test computes unless the test asks for the result cache
               ENVIRONMENT_MODIFICATION "GEMFLOW_NO_CACHE=set:1"
               ${_timeout}
    DISCOVERY_TIMEOUT 120)
endfunction()
