// libFuzzer target: the ONNX importer (protobuf reader, shape inference, op mapping) and the features of what it
// builds (entry_points.hpp), on any bytes. Seeded from tests/fixtures/onnx/ and fuzz/seeds/onnx/.
#include "entry_points.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    prenet::fuzz::onnx(std::string(reinterpret_cast<const char*>(data), size));
    return 0;
}
