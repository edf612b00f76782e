# Strict warnings, private to Gemflow's own targets.
add_library(gemflow_warnings INTERFACE)
target_compile_options(gemflow_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wshadow=local>
  $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wno-missing-field-initializers>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
