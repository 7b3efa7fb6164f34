#pragma once
// One error type for every bad input the user can give us. The CLI prints `what()` and exits non-zero;
// the API (and so the wasm module) answers {"error": {"message", "field", "code"}}, so the page can mark the
// field at fault without reading the message. Nothing in the core aborts on user input.
#include <stdexcept>
#include <string>

namespace prenet {

// What kind of mistake an error is, for programs (the page) that react to it. Stable names: see to_string.
enum class ErrorCode {
    bad_request,       // the request itself is malformed (not JSON, not an object, no command)
    unknown_command,
    unknown_option,    // a request key or CLI flag the command does not take
    missing,           // a required option is absent (or nothing was selected)
    invalid_value,     // wrong type, not one of the choices, out of range
    conflict,          // options that do not go together
    invalid_model,     // the model argument (zoo id, config, layers JSON) is wrong
    invalid_hardware,  // a hardware id or spec sheet is wrong
    not_finite,        // the inputs are valid one by one but the prediction is not a finite number
    internal,          // a bug: anything not raised as an Error
};

const char* to_string(ErrorCode code);

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message, ErrorCode code = ErrorCode::invalid_value, std::string field = "")
        : std::runtime_error(message), code_(code), field_(std::move(field)) {}
    ErrorCode code() const { return code_; }
    // The request option at fault ("batch", "model", "hardware"), or empty when none is.
    const std::string& field() const { return field_; }
    // Where inside the option's document, when it is one: a layer's path in a layers JSON ("layers[1][0]") and
    // the attribute of that layer ("out_features"); empty when unknown. The page's layer editor marks them.
    const std::string& path() const { return path_; }
    const std::string& attr() const { return attr_; }
    Error& at_path(std::string path) { return path_ = std::move(path), *this; }
    Error& at_attr(std::string attr) { return attr_ = std::move(attr), *this; }

private:
    ErrorCode code_;
    std::string field_, path_, attr_;
};

// Rethrows `body`'s Error with `field` and `code` filled in where the thrower could not know them (a model
// importer does not know it was reached through the "model" option).
template <typename F>
auto attribute_errors(const std::string& field, ErrorCode code, F&& body) -> decltype(body()) {
    try {
        return body();
    } catch (const Error& e) {
        if (!e.field().empty()) throw;
        Error attributed(e.what(), e.code() == ErrorCode::invalid_value ? code : e.code(), field);
        throw attributed.at_path(e.path()).at_attr(e.attr());
    }
}

}  // namespace prenet
