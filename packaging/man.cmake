# cmake -DGEMFLOW=<gemflow> -DHELP2MAN=<help2man> -DOUT=<gemflow.1> -P man.cmake
# The man page of `gemflow`, generated from its --help (help2man) with one section per
# sub-command from `gemflow <command> --help`.
set(include "${OUT}.include")
file(WRITE ${include} "[SEE ALSO]\nThe full documentation is in /usr/share/doc/gemflow: cli.md (the command), workflow-format.md,\nplugin-guide.md, python.md (the Python module) and nodes/ (one page per node type).\n\n")
file(APPEND ${include} "[COMMANDS]\n")
foreach(cmd run validate nodes plugins cache upgrade)
  execute_process(COMMAND ${GEMFLOW} ${cmd} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc ERROR_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${GEMFLOW} ${cmd} --help failed (${rc})")
  endif()
  # lines starting with '.' or a quote would be read as roff requests
  string(REGEX REPLACE "\n([.'])" "\n\\\\&\\1" help "${help}")
  file(APPEND ${include} ".SS \"gemflow ${cmd}\"\n.nf\n${help}.fi\n")
endforeach()
execute_process(COMMAND ${HELP2MAN} --no-info --section 1 --name "run, validate and inspect Gemflow workflows"
                        --include ${include} --output ${OUT} ${GEMFLOW} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "help2man failed (${rc}): ${err}")
endif()
