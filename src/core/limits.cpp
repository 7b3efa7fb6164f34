#include "core/limits.hpp"

#include <sys/stat.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace prenet {

namespace {

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

int json_text_depth(std::string_view text, int limit) {
    int depth = 0, deepest = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '[' || c == '{') {
            if (++depth > deepest) deepest = depth;
            if (deepest > limit) return deepest;
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return deepest;
}

nlohmann::json parse_json_document(const std::string& text, const std::string& origin, ErrorCode code,
                                   const std::string& field) {
    if (text.size() > limits::document_bytes)
        throw Error(origin + " is " + std::to_string(text.size()) + " bytes, more than the limit of " +
                        mib(limits::document_bytes),
                    code, field);
    if (json_text_depth(text, limits::json_depth) > limits::json_depth)
        throw Error(origin + " is nested more than " + std::to_string(limits::json_depth) +
                        " levels deep (the limit on JSON nesting)",
                    code, field);
    auto parsed = nlohmann::json::parse(text, nullptr, false);
    if (parsed.is_discarded()) throw Error(origin + " is not valid JSON", code, field);
    return parsed;
}

int json_depth(const nlohmann::json& value) {
    int deepest = 0;
    std::vector<std::pair<const nlohmann::json*, int>> todo{{&value, 0}};
    while (!todo.empty()) {
        auto [v, d] = todo.back();
        todo.pop_back();
        if (!v->is_structured()) continue;
        if (d + 1 > deepest) deepest = d + 1;
        if (deepest > limits::json_depth) return deepest;
        for (const auto& child : *v) todo.push_back({&child, d + 1});
    }
    return deepest;
}

void check_json_depth(const nlohmann::json& value, const std::string& origin, ErrorCode code,
                      const std::string& field) {
    if (json_depth(value) > limits::json_depth)
        throw Error(origin + " is nested more than " + std::to_string(limits::json_depth) +
                        " levels deep (the limit on JSON nesting)",
                    code, field);
}

bool path_exists(const std::string& path) {
    struct stat st{};
    return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

std::string read_file_bytes(const std::string& path, std::size_t max_bytes, ErrorCode code, const std::string& field) {
    struct stat st{};
    if (path.empty() || ::stat(path.c_str(), &st) != 0) throw Error("cannot read '" + path + "'", code, field);
    if (!S_ISREG(st.st_mode))
        throw Error("'" + path + "' is not a regular file (only regular files are read)", code, field);
    if (st.st_size < 0 || static_cast<std::uint64_t>(st.st_size) > max_bytes)
        throw Error("'" + path + "' is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
                        mib(max_bytes),
                    code, field);
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!f) throw Error("cannot read '" + path + "'", code, field);
    std::string text;
    char buffer[65536];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f.get())) > 0;) {
        // The file may grow between stat and read: the limit holds for what is read too.
        if (text.size() + n > max_bytes)
            throw Error("'" + path + "' is more than the limit of " + mib(max_bytes), code, field);
        text.append(buffer, n);
    }
    if (std::ferror(f.get())) throw Error("cannot read '" + path + "'", code, field);
    return text;
}

std::string read_text_file(const std::string& path, ErrorCode code, const std::string& field) {
    return read_file_bytes(path, limits::document_bytes, code, field);
}

std::int64_t check_range(std::int64_t value, std::int64_t lo, std::int64_t hi, const std::string& what) {
    if (value < lo || value > hi)
        throw Error(what + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) + ", got " +
                    std::to_string(value));
    return value;
}

}  // namespace prenet
