#include "core/embedded_json.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace prenet {

using nlohmann::json;

namespace {

// Powers of ten a double holds exactly (10^22 = 2^22 x 5^22, and 5^22 < 2^53).
constexpr double kExactPowersOfTen[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

// A recursive-descent reader over the whole text. Every method returns false on anything it does not handle
// exactly as nlohmann does; the caller then hands the text to json::parse.
class Reader {
public:
    explicit Reader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

    std::optional<json> document() {
        json value;
        skip_space();
        if (!read_value(value, 0)) return std::nullopt;
        skip_space();
        if (p_ != end_) return std::nullopt;
        return value;
    }

private:
    static constexpr int kMaxDepth = 256;
    const char* p_;
    const char* end_;

    void skip_space() {
        while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
    }
    bool literal(std::string_view word) {
        if (std::size_t(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
        p_ += word.size();
        return true;
    }

    bool read_value(json& out, int depth) {
        if (p_ == end_ || depth > kMaxDepth) return false;
        switch (*p_) {
            case '{': return read_object(out, depth);
            case '[': return read_array(out, depth);
            case '"': {
                std::string s;
                if (!read_string(s)) return false;
                out = std::move(s);
                return true;
            }
            case 't': return literal("true") && (out = true, true);
            case 'f': return literal("false") && (out = false, true);
            case 'n': return literal("null") && (out = nullptr, true);
            default: return read_number(out);
        }
    }

    bool read_object(json& out, int depth) {
        ++p_;  // '{'
        out = json::object();
        auto& members = out.get_ref<json::object_t&>();
        skip_space();
        if (p_ != end_ && *p_ == '}') return ++p_, true;
        for (;;) {
            skip_space();
            std::string key;
            if (p_ == end_ || *p_ != '"' || !read_string(key)) return false;
            skip_space();
            if (p_ == end_ || *p_ != ':') return false;
            ++p_;
            skip_space();
            json value;
            if (!read_value(value, depth + 1)) return false;
            members.insert_or_assign(std::move(key), std::move(value));  // a repeated key: the last wins, as there
            skip_space();
            if (p_ == end_) return false;
            if (*p_ == '}') return ++p_, true;
            if (*p_ != ',') return false;
            ++p_;
        }
    }

    bool read_array(json& out, int depth) {
        ++p_;  // '['
        out = json::array();
        auto& items = out.get_ref<json::array_t&>();
        skip_space();
        if (p_ != end_ && *p_ == ']') return ++p_, true;
        for (;;) {
            skip_space();
            items.emplace_back();
            if (!read_value(items.back(), depth + 1)) return false;
            skip_space();
            if (p_ == end_) return false;
            if (*p_ == ']') return ++p_, true;
            if (*p_ != ',') return false;
            ++p_;
        }
    }

    // Plain characters and the one-letter escapes; \u escapes (and control characters, which JSON forbids) are
    // left to nlohmann. Bytes above 0x7f are copied as they stand: the embedded files are UTF-8.
    bool read_string(std::string& out) {
        ++p_;  // '"'
        for (;;) {
            const char* run = p_;
            while (p_ != end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) ++p_;
            out.append(run, p_);
            if (p_ == end_ || static_cast<unsigned char>(*p_) < 0x20) return false;
            if (*p_ == '"') return ++p_, true;
            if (++p_ == end_) return false;  // past the backslash
            switch (*p_++) {
                case '"': out += '"'; break;
                case '\\': out += '\\'; break;
                case '/': out += '/'; break;
                case 'b': out += '\b'; break;
                case 'f': out += '\f'; break;
                case 'n': out += '\n'; break;
                case 'r': out += '\r'; break;
                case 't': out += '\t'; break;
                default: return false;
            }
        }
    }

    static bool is_digit(char c) { return c >= '0' && c <= '9'; }

    // JSON's number grammar. Like nlohmann: without a fraction or exponent it is an integer (unsigned unless
    // negative), otherwise a double. A double with at most 15 significant digits and a decimal exponent within
    // +-22 is one exactly rounded multiplication or division of two exact doubles (Clinger's fast path), which
    // is strtod's correctly rounded result; any other goes through strtod as nlohmann's does.
    bool read_number(json& out) {
        const char* start = p_;
        bool negative = *p_ == '-';
        if (negative) ++p_;
        if (p_ == end_ || !is_digit(*p_)) return false;
        std::uint64_t mantissa = 0;
        int significant = 0, exponent = 0, integer_digits = 0;
        // Leading zeros only move the exponent; digits past the 19th (which a uint64 cannot take) only move it
        // when they are in the integer part. Past 15 significant digits strtod decides anyway.
        auto digit = [&](char c, bool fraction) {
            if (significant == 0 && c == '0') {
                if (fraction) --exponent;
                return;
            }
            if (significant < 19) {
                mantissa = mantissa * 10 + std::uint64_t(c - '0');
                if (fraction) --exponent;
            } else if (!fraction) {
                ++exponent;
            }
            ++significant;
        };
        if (*p_ == '0') {
            ++p_, ++integer_digits;
            if (p_ != end_ && is_digit(*p_)) return false;  // leading zero
        } else {
            while (p_ != end_ && is_digit(*p_)) digit(*p_++, false), ++integer_digits;
        }
        bool is_float = false;
        if (p_ != end_ && *p_ == '.') {
            is_float = true;
            if (++p_ == end_ || !is_digit(*p_)) return false;
            while (p_ != end_ && is_digit(*p_)) digit(*p_++, true);
        }
        if (p_ != end_ && (*p_ == 'e' || *p_ == 'E')) {
            is_float = true;
            ++p_;
            bool negative_exponent = p_ != end_ && *p_ == '-';
            if (p_ != end_ && (*p_ == '+' || *p_ == '-')) ++p_;
            if (p_ == end_ || !is_digit(*p_)) return false;
            int e = 0;
            while (p_ != end_ && is_digit(*p_)) {
                if (e < 100000) e = e * 10 + (*p_ - '0');
                ++p_;
            }
            exponent += negative_exponent ? -e : e;
        }
        if (!is_float) {
            if (integer_digits > 18) return false;  // may not fit 64 bits: nlohmann decides
            if (negative) out = -static_cast<json::number_integer_t>(mantissa);
            else out = static_cast<json::number_unsigned_t>(mantissa);
            return true;
        }
        double value;
        if (significant <= 15 && exponent >= -22 && exponent <= 22) {
            double m = double(mantissa);
            value = exponent < 0 ? m / kExactPowersOfTen[-exponent] : m * kExactPowersOfTen[exponent];
            if (negative) value = -value;
        } else {
            std::string token(start, p_);
            value = std::strtod(token.c_str(), nullptr);
        }
        if (!std::isfinite(value)) return false;  // nlohmann rejects what overflows
        out = value;
        return true;
    }
};

}  // namespace

json parse_embedded_json(std::string_view text, bool allow_exceptions) {
    if (std::optional<json> document = Reader(text).document()) return std::move(*document);
    return json::parse(text, nullptr, allow_exceptions);
}

}  // namespace prenet
