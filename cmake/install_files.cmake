# Writes the files the install rules take from the built binary (cmake/install.cmake):
#   OUT/ftplan.1                      a man page: `ftplan --help` as its text
#   OUT/completion/{bash/ftplan, fish/ftplan.fish}   `ftplan completion SHELL`
# Usage: cmake -DFTPLAN=path/to/ftplan -DOUT=dir -DVERSION=x.y.z -P install_files.cmake
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
run_ftplan(script completion fish)
file(WRITE ${OUT}/completion/fish/ftplan.fish "${script}")

# The man page: the overview `ftplan --help` prints, verbatim (roff escapes: backslash, and a
# leading dot or quote that roff would read as a request).
run_ftplan(help --help)
string(REPLACE "\\" "\\e" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(TIMESTAMP date "%Y-%m-%d" UTC)
file(WRITE ${OUT}/ftplan.1
".TH FTPLAN 1 \"${date}\" \"ftplan ${VERSION}\" \"User Commands\"
.SH NAME
ftplan \\- plan GPU fine-tuning runs: memory, step time, cards and layouts
.SH SYNOPSIS
.B ftplan
.I COMMAND
[\\fIOPTIONS\\fR]
.SH DESCRIPTION
The commands and the options every command takes, as \\fBftplan --help\\fR prints them.
Each command's own options: \\fBftplan help\\fR \\fICOMMAND\\fR.
.PP
.nf
${help}.fi
.SH SEE ALSO
The README in /usr/share/doc/ftplan, and the examples in /usr/share/doc/ftplan/examples.
")
