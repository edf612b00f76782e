# cmake -DGEMFLOW=<gemflow> -DDOCS=<docs/nodes> -DWORK=<scratch folder> -P check_node_reference.cmake
file(REMOVE_RECURSE ${WORK})
execute_process(COMMAND ${GEMFLOW} nodes --markdown ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gemflow nodes --markdown failed (exit ${rc}):\n${out}${err}")
endif()
if(err MATCHES "not loaded")
  message(FATAL_ERROR "a plugin did not load, so its pages would be missing:\n${err}")
endif()
execute_process(COMMAND diff -ru ${DOCS} ${WORK} RESULT_VARIABLE rc OUTPUT_VARIABLE diff ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "docs/nodes is out of date with the node specs. Regenerate it with\n"
                      "  build/ci/bin/gemflow nodes --markdown docs/nodes\n"
                      "and commit the result. Differences (committed → generated):\n${diff}${err}")
endif()
message(STATUS "docs/nodes matches the node specs")
