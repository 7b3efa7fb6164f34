# prenet_embed_data(OUT file...): writes a C++ source defining prenet::embedded_files(), a list of
# {relative path, contents} for each file, regenerated whenever one of them changes.
function(prenet_embed_data out)
  set(files ${ARGN})
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DROOT=${PROJECT_SOURCE_DIR} "-DFILES=${files}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedDataScript.cmake
    DEPENDS ${files} ${PROJECT_SOURCE_DIR}/cmake/EmbedDataScript.cmake
    COMMENT "Embedding catalogue data"
    VERBATIM)
endfunction()
