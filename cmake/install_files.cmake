# Writes the files the install rules take from the built binary (cmake/install.cmake):
#   OUT/ftplan.1                      the man page: `ftplan reference --format man`
#   OUT/completion/{bash/ftplan, zsh/_ftplan, fish/ftplan.fish}   `ftplan completion SHELL`
# Usage: cmake -DFTPLAN=path/to/ftplan -DOUT=dir -P install_files.cmake
function(run_ftplan out_var)
  execute_process(COMMAND ${FTPLAN} ${ARGN} OUTPUT_VARIABLE text RESULT_VARIABLE code
                  ERROR_VARIABLE err)
  if(NOT code EQUAL 0)
    message(FATAL_ERROR "ftplan ${ARGN} failed (${code}): ${err}")
  endif()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

run_ftplan(script completion bash)
file(WRITE ${OUT}/completion/bash/ftplan "${script}")
run_ftplan(script completion zsh)
file(WRITE ${OUT}/completion/zsh/_ftplan "${script}")
run_ftplan(script completion fish)
file(WRITE ${OUT}/completion/fish/ftplan.fish "${script}")

# The man page: `ftplan reference --format man`, from the same source as docs/reference.md.
run_ftplan(page reference --format man)
file(WRITE ${OUT}/ftplan.1 "${page}")
