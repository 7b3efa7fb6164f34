#pragma once
// One error type for every bad input the user can give us. The CLI prints `what()` and exits non-zero;
// the wasm binding returns it as {"error": ...}. Nothing in the core aborts on user input.
#include <stdexcept>
#include <string>

namespace prenet {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace prenet
