# The page that needs no server (BUILD/site/): the web page with the engine compiled to
# WebAssembly (wasm/CMakeLists.txt, src/wasm/), built by scripts/build-site.sh with Debian's
# emscripten. Not part of `all`: `cmake --build --preset default --target site` builds it (./test.sh
# does, before the browser tests compare it with the served page). Without emscripten the target
# says so and builds nothing.
add_custom_target(site
  COMMAND ${CMAKE_SOURCE_DIR}/scripts/build-site.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR}
  DEPENDS ${FTPLAN_EMBED_CPP} ${FTPLAN_PREPARSED_CPP}
  COMMENT "Building the page that needs no server (site/)"
  USES_TERMINAL
  VERBATIM)
