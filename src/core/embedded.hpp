#pragma once
// Data files compiled into the binary (hardware catalogue, fitted models); see cmake/EmbedData.cmake.
#include <string>
#include <vector>

namespace prenet {

struct EmbeddedFile {
    std::string path;  // relative to the repository root, e.g. "hardware/a100-sxm4-80gb.json"
    std::string contents;
};

const std::vector<EmbeddedFile>& embedded_files();

}  // namespace prenet
