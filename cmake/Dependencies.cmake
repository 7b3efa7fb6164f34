# Header-only dependencies from Debian packages (libeigen3-dev, nlohmann-json3-dev, libprotozero-dev).
add_library(prenet_deps INTERFACE)
if(EMSCRIPTEN)
  # find_package under emcmake drags /usr/include (glibc headers) into the wasm compile; instead expose a
  # folder holding only the header-only libraries (see docs/toolchain.md).
  set(PRENET_WASM_INCLUDE ${CMAKE_BINARY_DIR}/wasm-include)
  file(MAKE_DIRECTORY ${PRENET_WASM_INCLUDE})
  foreach(pair "Eigen=/usr/include/eigen3/Eigen" "nlohmann=/usr/include/nlohmann" "protozero=/usr/include/protozero")
    string(REPLACE "=" ";" parts ${pair})
    list(GET parts 0 name)
    list(GET parts 1 target)
    if(NOT EXISTS ${PRENET_WASM_INCLUDE}/${name})
      file(CREATE_LINK ${target} ${PRENET_WASM_INCLUDE}/${name} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(prenet_deps SYSTEM INTERFACE ${PRENET_WASM_INCLUDE})
  # C++ exceptions (errors are data: every bad input is a thrown prenet::Error). WebAssembly's own exception
  # handling (-fwasm-exceptions: Chromium 95+, Firefox 100+, Safari 15.2+, Node 17+) instead of Emscripten's
  # JavaScript emulation (-fexceptions), which routes every call that may throw through a JS trampoline:
  # docs/performance.md measures the difference. One flag for every wasm target (Wasm.cmake, tests/).
  set(PRENET_WASM_EXCEPTIONS -fwasm-exceptions CACHE STRING "Emscripten's exception flag (-fwasm-exceptions or -fexceptions)")
  target_compile_options(prenet_deps INTERFACE ${PRENET_WASM_EXCEPTIONS})
  target_link_options(prenet_deps INTERFACE ${PRENET_WASM_EXCEPTIONS})
else()
  find_package(Eigen3 3.3 REQUIRED NO_MODULE)
  find_package(nlohmann_json 3.2 REQUIRED)
  target_link_libraries(prenet_deps INTERFACE Eigen3::Eigen nlohmann_json::nlohmann_json)
  # protozero (the ONNX importer's protobuf reader) ships no CMake package: its headers are found directly.
  find_path(PROTOZERO_INCLUDE_DIR protozero/pbf_reader.hpp)
  if(NOT PROTOZERO_INCLUDE_DIR)
    message(FATAL_ERROR "protozero not found: apt-get install libprotozero-dev (scripts/setup.sh)")
  endif()
  target_include_directories(prenet_deps SYSTEM INTERFACE ${PROTOZERO_INCLUDE_DIR})
endif()
