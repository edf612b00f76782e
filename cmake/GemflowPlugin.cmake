# gemflow_add_plugin(NAME SOURCES plugin.cpp ... [VERSION x.y.z] [LIBRARIES ...] [NO_INSTALL])
#
# Builds a Gemflow plugin: a MODULE library named libgemflow_<NAME>.so that exports the
# plugin entry points (see gemflow/plugin.hpp) and links gemflow::core. The plugin's name and
# version (VERSION, default: the project's version) reach the code as GEMFLOW_PLUGIN_NAME and
# GEMFLOW_PLUGIN_VERSION, which GEMFLOW_PLUGIN_ENTRY(register) uses: they are spelled only here. In-tree plugins land in
# <build>/lib/gemflow/plugins, where the in-tree `gemflow` finds them. Installed with the SDK,
# so third-party plugins use exactly this function (find_package(Gemflow)).
function(gemflow_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "VERSION" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT name MATCHES "^[a-z_][a-z0-9_]*$")
    message(FATAL_ERROR "gemflow_add_plugin(${name}): a plugin name is an identifier ([a-z_][a-z0-9_]*): "
                        "it prefixes the plugin's node ids")
  endif()
  if(NOT P_VERSION)
    set(P_VERSION "${PROJECT_VERSION}")
  endif()
  if(NOT P_VERSION)
    message(FATAL_ERROR "gemflow_add_plugin(${name}): no version: pass VERSION x.y.z or give project() a VERSION")
  endif()
  set(target gemflow_plugin_${name})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE gemflow::core ${P_LIBRARIES})
  if(TARGET gemflow_warnings)
    target_link_libraries(${target} PRIVATE gemflow_warnings)
  endif()
  target_compile_definitions(${target} PRIVATE GEMFLOW_PLUGIN_NAME="${name}" GEMFLOW_PLUGIN_VERSION="${P_VERSION}")
  set_target_properties(${target} PROPERTIES
    GEMFLOW_PLUGIN_NAME ${name}
    GEMFLOW_PLUGIN_VERSION ${P_VERSION}
    OUTPUT_NAME gemflow_${name}
    PREFIX "lib"
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON)
  if(DEFINED GEMFLOW_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${GEMFLOW_PLUGIN_OUTPUT_DIR})
  endif()
  if(NOT P_NO_INSTALL AND DEFINED GEMFLOW_PLUGIN_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${GEMFLOW_PLUGIN_INSTALL_DIR})
  endif()
endfunction()

# gemflow_add_plugin_test(NAME PLUGIN <plugin name> SOURCES test.cpp ... [LIBRARIES ...])
#
# A GoogleTest executable for the plugin built by gemflow_add_plugin(<plugin name> ...): every TEST
# becomes a CTest test (call enable_testing() or include(CTest) first). The test loads the built
# plugin file as gemflow does, through gemflow::testing::plugin_registry() (<gemflow/testing.hpp>),
# whose default is that file (GEMFLOW_TEST_PLUGIN_FILE); the plugin is built before the test.
function(gemflow_add_plugin_test name)
  cmake_parse_arguments(T "" "PLUGIN" "SOURCES;LIBRARIES" ${ARGN})
  if(NOT T_PLUGIN OR NOT TARGET gemflow_plugin_${T_PLUGIN})
    message(FATAL_ERROR "gemflow_add_plugin_test(${name}): PLUGIN must name a plugin of gemflow_add_plugin() "
                        "declared before (got '${T_PLUGIN}')")
  endif()
  if(NOT TARGET GTest::gtest_main)
    find_package(GTest REQUIRED)
  endif()
  include(GoogleTest)
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE gemflow::core GTest::gtest GTest::gtest_main ${T_LIBRARIES})
  target_compile_definitions(${name} PRIVATE
    GEMFLOW_TEST_PLUGIN_FILE="$<TARGET_FILE:gemflow_plugin_${T_PLUGIN}>")
  add_dependencies(${name} gemflow_plugin_${T_PLUGIN})
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60)
endfunction()
