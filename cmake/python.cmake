# The Python module `ftplan` (src/python/module.cpp): the HTTP API's handler called in-process, so
# every function returns what the matching /api/ endpoint (and the CLI's --json) returns. Built
# into ${build}/python/; `cmake --install` puts it into the interpreter's site-packages
# (FTPLAN_PYTHON_INSTALL_DIR).
#
# Off in the sanitizer and fuzz builds: an instrumented module loads only into a python3 started
# with the sanitizer runtime preloaded (LD_PRELOAD=libasan.so), so those builds skip it.
if(FTPLAN_PYTHON AND (FTPLAN_SANITIZE OR FTPLAN_FUZZ))
  message(STATUS "Python module: off in sanitizer and fuzz builds (an instrumented module needs "
                 "the sanitizer runtime preloaded into python3)")
  set(FTPLAN_PYTHON OFF)
endif()
# Debian's pybind11-dev, python3-dev and python3-pytest are for the system interpreter: it is the
# one built for unless another is named (-DPython3_EXECUTABLE=...), even where another python3
# comes first on PATH (pyenv, a virtual environment).
if(FTPLAN_PYTHON AND NOT DEFINED Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3 CACHE FILEPATH "The Python 3 the module is built for")
endif()
if(FTPLAN_PYTHON)
  find_package(Python3 COMPONENTS Interpreter Development.Module QUIET)
  if(Python3_FOUND)
    find_package(pybind11 CONFIG QUIET)
  endif()
  if(NOT Python3_FOUND OR NOT pybind11_FOUND)
    message(STATUS "Python module: skipped (needs pybind11 and Python 3's headers: Debian's "
                   "pybind11-dev and python3-dev)")
    set(FTPLAN_PYTHON OFF)
  endif()
endif()
if(FTPLAN_PYTHON)
  message(STATUS "Python module: for ${Python3_EXECUTABLE} (${Python3_VERSION})")
  # A shared module takes the libraries' code: position-independent.
  set_target_properties(ftplan_core ftplan_render ftplan_embedded ftplan_front
                        PROPERTIES POSITION_INDEPENDENT_CODE ON)
  # The target is ftplan_python (`ftplan` is the CLI); the module file is ftplan.<abi>.so.
  pybind11_add_module(ftplan_python MODULE src/python/module.cpp src/launch/launch_net.cpp)
  target_link_libraries(ftplan_python PRIVATE ftplan_front ftplan_warnings)
  set_target_properties(ftplan_python PROPERTIES OUTPUT_NAME ftplan
                        LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/python)
  set(FTPLAN_PYTHON_INSTALL_DIR "${Python3_SITEARCH}" CACHE PATH
      "Where `cmake --install` puts the Python module (default: the interpreter's site-packages)")
  install(TARGETS ftplan_python LIBRARY DESTINATION ${FTPLAN_PYTHON_INSTALL_DIR}
          COMPONENT python)
endif()
