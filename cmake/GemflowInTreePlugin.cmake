# gemflow_plugin_tree(NAME [ALGO_LIBRARIES ...] [CUDA_LIBRARIES ...] [NODE_LIBRARIES ...]
#                     [TEST_LIBRARIES ...])
#
# The standard folder shape of an in-tree plugin, plugins/<NAME>/:
#   include/gemflow/<NAME>/  public headers of algo/ (plain C++; CUDA launchers usable from C++)
#   algo/*.cpp               gemflow_<NAME>_algo: the algorithm, no Gemflow types
#   algo/cuda/*.cu           gemflow_<NAME>_cuda (only when CUDA is found); algo then defines
#                            GEMFLOW_<NAME>_HAVE_CUDA=1 publicly
#   nodes/*.cpp              gemflow_<NAME>_nodes: node adapters (link gemflow::core + algo)
#   plugin.cpp               the GEMFLOW_PLUGIN entry point -> libgemflow_<NAME>.so
#   tests/*_test.cpp         one GoogleTest executable, label unit
#   tests/*_gpu_test.cpp     one GoogleTest executable, label gpu (skips without a device)
#   tests/*_itest.cpp        one GoogleTest executable, label integration
#   bench/*.cpp              one benchmark executable per file: <NAME>_bench_<stem>
function(gemflow_plugin_tree name)
  cmake_parse_arguments(P "" "" "ALGO_LIBRARIES;CUDA_LIBRARIES;NODE_LIBRARIES;TEST_LIBRARIES" ${ARGN})
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  if(NOT EXISTS ${dir}/plugin.cpp)
    message(STATUS "Gemflow: plugin ${name} has no plugin.cpp yet; skipped")
    return()
  endif()
  string(TOUPPER ${name} NAME_UPPER)
  set(algo gemflow_${name}_algo)

  file(GLOB algo_src CONFIGURE_DEPENDS ${dir}/algo/*.cpp)
  if(algo_src)
    add_library(${algo} STATIC ${algo_src})
    # core/include for the header-only SDK pieces the public headers use (gemflow/cuda/error.hpp,
    # stream.hpp: plain C++); algo does not link the core.
    target_include_directories(${algo} PUBLIC ${dir}/include ${PROJECT_SOURCE_DIR}/core/include)
    target_link_libraries(${algo} PUBLIC ${P_ALGO_LIBRARIES} PRIVATE gemflow_warnings)
    set(algo_scope PUBLIC)
  else()
    add_library(${algo} INTERFACE)
    target_include_directories(${algo} INTERFACE ${dir}/include ${PROJECT_SOURCE_DIR}/core/include)
    target_link_libraries(${algo} INTERFACE ${P_ALGO_LIBRARIES})
    set(algo_scope INTERFACE)
  endif()

  file(GLOB cuda_src CONFIGURE_DEPENDS ${dir}/algo/cuda/*.cu)
  if(GEMFLOW_HAVE_CUDA AND cuda_src)
    add_library(gemflow_${name}_cuda STATIC ${cuda_src})
    # core/include only for the header-only CUDA helpers (gemflow/cuda/*.hpp, gemflow/cuda_smem.hpp):
    # no link to the core
    target_include_directories(gemflow_${name}_cuda PUBLIC ${dir}/include ${PROJECT_SOURCE_DIR}/core/include
                               PRIVATE ${dir}/algo/cuda)
    target_link_libraries(gemflow_${name}_cuda PUBLIC CUDA::cudart ${P_CUDA_LIBRARIES})
    target_compile_options(gemflow_${name}_cuda PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:-lineinfo>)
    target_link_libraries(${algo} ${algo_scope} gemflow_${name}_cuda)
    target_compile_definitions(${algo} ${algo_scope} GEMFLOW_${NAME_UPPER}_HAVE_CUDA=1)
  endif()

  file(GLOB nodes_src CONFIGURE_DEPENDS ${dir}/nodes/*.cpp)
  if(NOT nodes_src)
    message(FATAL_ERROR "plugin ${name}: plugin.cpp exists but nodes/ has no .cpp")
  endif()
  add_library(gemflow_${name}_nodes STATIC ${nodes_src})
  target_include_directories(gemflow_${name}_nodes PUBLIC ${dir}/nodes)
  target_link_libraries(gemflow_${name}_nodes PUBLIC gemflow::core ${algo} ${P_NODE_LIBRARIES}
                        PRIVATE gemflow_warnings)
  gemflow_add_plugin(${name} SOURCES ${dir}/plugin.cpp LIBRARIES gemflow_${name}_nodes)
  set_property(GLOBAL APPEND PROPERTY GEMFLOW_INTREE_PLUGINS gemflow_plugin_${name})

  if(GEMFLOW_BUILD_TESTS)
    foreach(kind unit gpu integration)
      if(kind STREQUAL unit)
        file(GLOB t CONFIGURE_DEPENDS ${dir}/tests/*_test.cpp)
        list(FILTER t EXCLUDE REGEX "_gpu_test\\.cpp$")
        set(exe gemflow_${name}_tests)
      elseif(kind STREQUAL gpu)
        file(GLOB t CONFIGURE_DEPENDS ${dir}/tests/*_gpu_test.cpp)
        set(exe gemflow_${name}_gpu_tests)
      else()
        file(GLOB t CONFIGURE_DEPENDS ${dir}/tests/*_itest.cpp)
        set(exe gemflow_${name}_itests)
      endif()
      if(t)
        gemflow_add_test(${exe} SOURCES ${t} LABELS ${kind}
          LIBRARIES gemflow_${name}_nodes ${algo} ${P_TEST_LIBRARIES})
      endif()
    endforeach()
  endif()

  if(GEMFLOW_BUILD_BENCH)
    file(GLOB benches CONFIGURE_DEPENDS ${dir}/bench/*.cpp)
    foreach(b IN LISTS benches)
      get_filename_component(stem ${b} NAME_WE)
      add_executable(${name}_bench_${stem} ${b})
      target_link_libraries(${name}_bench_${stem} PRIVATE ${algo} gemflow_warnings ${P_TEST_LIBRARIES})
    endforeach()
  endif()
endfunction()
