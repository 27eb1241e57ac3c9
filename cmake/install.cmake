# What `cmake --install` and the Debian package (`cpack -G DEB` in the build folder) hold: the CLI,
# its network half where the CLI looks for it (lib/ftplan/ftplan-net, src/launch/launch_net.cpp),
# shell completions (bash, zsh, fish) and the man page generated from the built binary, the
# README, docs/ and the example files. The data, web page and schemas are embedded in the binaries: none is
# installed.
include(GNUInstallDirs)

set(FTPLAN_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)
# bash, zsh and fish load a completion script from their folder when `ftplan` is first completed.
set(FTPLAN_COMPLETIONS bash/ftplan zsh/_ftplan fish/ftplan.fish)
set(FTPLAN_INSTALL_FILES ${FTPLAN_GENERATED_DIR}/ftplan.1)
foreach(file ${FTPLAN_COMPLETIONS})
  list(APPEND FTPLAN_INSTALL_FILES ${FTPLAN_GENERATED_DIR}/completion/${file})
endforeach()
add_custom_command(
  OUTPUT ${FTPLAN_INSTALL_FILES}
  # (In the sanitizer builds the binary runs instrumented: a leak report must not fail the build.)
  COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=0
          ${CMAKE_COMMAND} -DFTPLAN=$<TARGET_FILE:ftplan> -DOUT=${FTPLAN_GENERATED_DIR}
          -P ${CMAKE_SOURCE_DIR}/cmake/install_files.cmake
  DEPENDS ftplan ${CMAKE_SOURCE_DIR}/cmake/install_files.cmake
  COMMENT "Writing the man page and shell completions from the ftplan binary"
  VERBATIM)
add_custom_target(ftplan_install_files ALL DEPENDS ${FTPLAN_INSTALL_FILES})

install(TARGETS ftplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
install(TARGETS ftplan-net RUNTIME DESTINATION lib/ftplan COMPONENT runtime)
install(FILES ${FTPLAN_GENERATED_DIR}/ftplan.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
        COMPONENT runtime)
install(FILES ${FTPLAN_GENERATED_DIR}/completion/bash/ftplan
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions COMPONENT runtime)
install(FILES ${FTPLAN_GENERATED_DIR}/completion/zsh/_ftplan
        DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/vendor-completions COMPONENT runtime)
install(FILES ${FTPLAN_GENERATED_DIR}/completion/fish/ftplan.fish
        DESTINATION ${CMAKE_INSTALL_DATADIR}/fish/vendor_completions.d COMPONENT runtime)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
        COMPONENT runtime)
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        COMPONENT runtime)

# ---- Debian package: cpack -G DEB (in the build folder) -> ftplan_<version>_<arch>.deb ---------
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ftplan)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "ftplan maintainers <ftplan@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "plans GPU fine-tuning runs: memory, step time, cards")
set(CPACK_PACKAGE_INSTALL_DIRECTORY ftplan)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# The shared libraries the binaries link (dpkg-shlibdeps, from dpkg-dev).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The package holds the runtime component only: the Python module is installed by
# `cmake --install` into an interpreter's site-packages, not packaged.
set(CPACK_INSTALL_CMAKE_PROJECTS "${CMAKE_BINARY_DIR};ftplan;runtime;/")
include(CPack)
