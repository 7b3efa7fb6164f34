# WebAssembly targets (included from CMakeLists.txt under emcmake). The module wraps prenet_core through
# wasm/bindings.cpp; see docs/toolchain.md for the Emscripten 3.1.6 pitfalls handled here.
#   prenet_wasm -> prenet.mjs + prenet.wasm   ES6 module factory createPrenet() for the web page and workers
#   prenet_node.mjs                           the same module under Node (tests, benchmarks): wasm/prenet_node.mjs,
#                                             copied beside it, hands the glue the .wasm's bytes and the __dirname
#                                             the 3.1.6 glue expects (no second link of the same code)
# -sDYNAMIC_EXECUTION=0: Embind's glue otherwise builds its function wrappers with `new Function`, which the
# page's Content-Security-Policy (script-src without 'unsafe-eval', docs/web.md) forbids in the worker.
set(PRENET_WASM_COMPILE_OPTIONS ${PRENET_WASM_EXCEPTIONS})
set(PRENET_WASM_LINK_OPTIONS
    --bind
    ${PRENET_WASM_EXCEPTIONS}
    -sMODULARIZE=1
    -sEXPORT_ES6=1
    -sEXPORT_NAME=createPrenet
    -sALLOW_MEMORY_GROWTH=1
    -sENVIRONMENT=web,worker,node
    -sDYNAMIC_EXECUTION=0
    # stackRestore: the worker's test hook breaks a module through it (web/js/engine.js, breakModule); with
    # WebAssembly exceptions nothing else keeps it exported.
    -sEXPORTED_FUNCTIONS=_malloc,_free,stackRestore
    -flto
    $<$<CONFIG:Release>:-O3>)

add_executable(prenet_wasm ${PROJECT_SOURCE_DIR}/wasm/bindings.cpp)
target_link_libraries(prenet_wasm PRIVATE prenet_core)
target_compile_definitions(prenet_wasm PRIVATE PRENET_VERSION="${PROJECT_VERSION}")
target_compile_options(prenet_wasm PRIVATE ${PRENET_WASM_COMPILE_OPTIONS})
target_link_options(prenet_wasm PRIVATE ${PRENET_WASM_LINK_OPTIONS})
set_target_properties(prenet_wasm PROPERTIES OUTPUT_NAME prenet SUFFIX ".mjs" RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
configure_file(${PROJECT_SOURCE_DIR}/wasm/prenet_node.mjs ${CMAKE_BINARY_DIR}/prenet_node.mjs COPYONLY)

# The repository's package.json says "type": "module", which would make Node load the CommonJS test runner
# tests/prenet_tests.js as an ES module; this marks everything under the wasm build folder as CommonJS
# (the .mjs modules above stay ES modules whatever the package type).
file(WRITE ${CMAKE_BINARY_DIR}/package.json "{\"type\": \"commonjs\"}\n")
