# gemflow_add_plugin(NAME SOURCES plugin.cpp ... [LIBRARIES ...] [NO_INSTALL])
#
# Builds a Gemflow plugin: a MODULE library named libgemflow_<NAME>.so that exports the
# plugin entry points (see gemflow/plugin.hpp) and links gemflow::core. In-tree plugins land in
# <build>/lib/gemflow/plugins, where the in-tree `gemflow` finds them. Installed with the SDK,
# so third-party plugins use exactly this function (find_package(Gemflow)).
function(gemflow_add_plugin name)
  cmake_parse_arguments(P "NO_INSTALL" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target gemflow_plugin_${name})
  add_library(${target} MODULE ${P_SOURCES})
  target_link_libraries(${target} PRIVATE gemflow::core ${P_LIBRARIES})
  if(TARGET gemflow_warnings)
    target_link_libraries(${target} PRIVATE gemflow_warnings)
  endif()
  target_compile_definitions(${target} PRIVATE GEMFLOW_PLUGIN_NAME="${name}")
  set_target_properties(${target} PROPERTIES
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
