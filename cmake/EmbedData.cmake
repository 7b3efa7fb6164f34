# prenet_embed_data(OUT file...): writes a C++ source defining prenet::embedded_files(), a list of
# {relative path, contents} for each file (compact JSON, without the sheets' prose notes: cmake/embed_data.py says
# why), regenerated whenever one of them changes. Python 3 is a build dependency anyway: Emscripten's em++ runs on it.
function(prenet_embed_data out)
  find_program(PRENET_PYTHON3 NAMES python3 python NO_CMAKE_FIND_ROOT_PATH)
  if(NOT PRENET_PYTHON3)
    message(FATAL_ERROR "python3 not found: it embeds the catalogue into the build (scripts/setup.sh installs it)")
  endif()
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${PRENET_PYTHON3} ${PROJECT_SOURCE_DIR}/cmake/embed_data.py ${PROJECT_SOURCE_DIR} ${out} ${files}
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/embed_data.py
    COMMENT "Embedding catalogue data"
    VERBATIM)
endfunction()

# prenet_embed_kernel_models(OUT models_json): writes a C++ source defining prenet::embedded_kernel_model_data()
# (predict/embedded_models.hpp) from models/kernels.json, with cmake/embed_kernel_models.py; without the file, one
# that says no models are built in. Python 3 is a build dependency anyway: Emscripten's em++ runs on it.
function(prenet_embed_kernel_models out models_json)
  find_program(PRENET_PYTHON3 NAMES python3 python NO_CMAKE_FIND_ROOT_PATH)
  if(NOT PRENET_PYTHON3)
    message(FATAL_ERROR "python3 not found: it compiles models/kernels.json into the build (scripts/setup.sh installs it)")
  endif()
  set(script ${PROJECT_SOURCE_DIR}/cmake/embed_kernel_models.py)
  set(depends ${script})
  if(EXISTS ${models_json})
    list(APPEND depends ${models_json})
  endif()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${PRENET_PYTHON3} ${script} ${models_json} ${out}
    DEPENDS ${depends}
    COMMENT "Compiling the kernel models (models/kernels.json)"
    VERBATIM)
endfunction()
