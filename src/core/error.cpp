#include "core/error.hpp"

namespace prenet {

const char* to_string(ErrorCode code) {
    switch (code) {
        case ErrorCode::bad_request: return "bad_request";
        case ErrorCode::unknown_command: return "unknown_command";
        case ErrorCode::unknown_option: return "unknown_option";
        case ErrorCode::missing: return "missing";
        case ErrorCode::invalid_value: return "invalid_value";
        case ErrorCode::conflict: return "conflict";
        case ErrorCode::invalid_model: return "invalid_model";
        case ErrorCode::invalid_hardware: return "invalid_hardware";
        case ErrorCode::not_finite: return "not_finite";
        case ErrorCode::internal: return "internal";
    }
    return "internal";
}

}  // namespace prenet
