#pragma once
// Limits on user input, checked before any arithmetic or allocation that depends on it (docs/limits.md lists
// them and why). Every document a user gives (a model file, a Hugging Face config, a layers JSON, a hardware
// sheet, a cluster, an API request) is parsed by parse_json_document; every file is read by read_text_file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace prenet::limits {

// JSON nesting (objects and arrays): the deepest real document (a layers JSON with residuals in repeats) is
// about a dozen levels; recursive code on JSON values (copy, dump, compare) would exhaust the stack on 10^5.
inline constexpr int json_depth = 64;
// Size of one document or file: the largest real model config is a few MB.
inline constexpr std::size_t document_bytes = std::size_t{64} << 20;  // 64 MiB
// Size of one ONNX file (read as bytes; it reaches the API base64-encoded, 4/3 as large, within document_bytes).
// The importer reads only the weights' dims: a larger model exported with its weights as external data
// (torch.onnx.export writes them apart past 2 GB; onnx.save_model(..., save_as_external_data=True)) needs
// only its small .onnx file.
inline constexpr std::size_t onnx_bytes = std::size_t{40} << 20;  // 40 MiB
// Stored layers in one model (a repeated block counts once): features, predictions and replies are linear in it.
inline constexpr std::int64_t layers = 100'000;
// Every dimension (batch, sequence, hidden, heads, vocab, kernel, stride, padding, dilation, repeat counts, ...):
// 2^31, so that the product of two dimensions fits a signed 64-bit integer with room to spare.
inline constexpr std::int64_t dimension = std::int64_t{1} << 31;
// Elements of one tensor (the product of a layer's input or output shape): 2^53, exact as a double.
inline constexpr std::int64_t tensor_elements = std::int64_t{1} << 53;
// Layouts one plan search weighs (parallel/plan_search.cpp): its time is about linear in them (0.1 ms each
// natively for a 70B or DeepSeek-V3 model, the stages' kernels timed once per search). Real requests leave a few
// thousand to some tens of thousands open (70B on 1,024 devices: 2,016; DeepSeek-V3's 61 blocks on 2,048 with
// uneven pipeline ends: 22,176); only device counts with hundreds of divisors reach this, and fixing one
// dimension narrows it.
inline constexpr std::int64_t plan_layouts = 40000;
// The most devices advice proposes when a step does not fit (plan_search.cpp's fewest devices that fit,
// memory_advice.cpp's FSDP sharding), doubling from the request's: the size of the largest training clusters
// (Llama 3 405B trained on 16,384 H100s), each doubling one more memory check.
inline constexpr std::int64_t advised_devices = 16'384;
// The most devices a request may span, and so the most data-parallel replicas (the --gpus and --dp rows):
// 2^24, a thousand times the largest clusters, far past anything real yet small enough for every count to stay
// exact in a double.
inline constexpr std::int64_t request_devices = std::int64_t{1} << 24;

}  // namespace prenet::limits

namespace prenet {

// Parses one user document. Refuses text longer than limits::document_bytes or nested deeper than
// limits::json_depth (a pre-scan, before nlohmann builds anything), and invalid JSON, naming `origin`
// ("request", "model file 'x.json'") in the message. Errors carry `code` and `field`.
nlohmann::json parse_json_document(const std::string& text, const std::string& origin,
                                   ErrorCode code = ErrorCode::bad_request, const std::string& field = "");
// The deepest nesting of [ and { outside strings in JSON text, on the raw characters (no parse); stops early
// once past `limit`. Invalid JSON gives some number; the parser reports it afterwards.
int json_text_depth(std::string_view text, int limit = limits::json_depth);
// The nesting depth of a JSON value, computed without recursion (for values built in C++ and passed in).
int json_depth(const nlohmann::json& value);
// Throws when `value` is nested deeper than limits::json_depth.
void check_json_depth(const nlohmann::json& value, const std::string& origin, ErrorCode code = ErrorCode::bad_request,
                      const std::string& field = "");

// Whether something exists at `path` (stat only: never opens it, so a FIFO does not block).
bool path_exists(const std::string& path);
// The contents of a regular file of at most limits::document_bytes; a FIFO, a device (/dev/zero), a
// directory or a larger file is refused without reading it.
std::string read_text_file(const std::string& path, ErrorCode code = ErrorCode::invalid_value,
                           const std::string& field = "");
// The same for a binary file of at most `max_bytes` (an ONNX model: limits::onnx_bytes).
std::string read_file_bytes(const std::string& path, std::size_t max_bytes, ErrorCode code = ErrorCode::invalid_value,
                            const std::string& field = "");

// `value` when it is in [lo, hi]; otherwise an Error naming `what` and the range.
std::int64_t check_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& what);

}  // namespace prenet
