// The bad-input corpus (tests/fixtures/bad/cases.json, written by make_cases.py): every case goes through the
// top-level API as the page sends it (request text in, reply text out) and must give its error, never a crash,
// a hang or an abort; afterwards a good request still answers. The big cases are generated here, not committed.
// No POSIX calls beyond reading the manifest: the suite also runs as wasm under Node (NODERAWFS).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "api/api.hpp"
#include "core/limits.hpp"
#include "importers/onnx.hpp"

namespace {

using nlohmann::json;
using namespace prenet;

json manifest() {
    std::ifstream in(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/bad/cases.json");
    std::stringstream ss;
    ss << in.rdbuf();
    return json::parse(ss.str());
}

std::string repeat(const std::string& s, int n) {
    std::string out;
    out.reserve(s.size() * n);
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

std::string nested(int depth) { return repeat("[", depth) + repeat("]", depth); }

const std::string kLayersHead = R"({"command": "features", "model": {"input": {"shape": [16]}, "layers": [)";

// Protobuf fields over the wire format (what an ONNX file is): a varint, a length-delimited field.
std::string pb_varint(std::uint64_t v) {
    std::string out;
    do {
        unsigned char b = v & 0x7F;
        v >>= 7;
        out += char(b | (v ? 0x80 : 0));
    } while (v);
    return out;
}
std::string pb_int(int field, std::uint64_t v) { return pb_varint(std::uint64_t(field) << 3) + pb_varint(v); }
std::string pb_bytes(int field, const std::string& payload) {
    return pb_varint(std::uint64_t(field) << 3 | 2) + pb_varint(payload.size()) + payload;
}

// Requests too big to commit (the 10^6-deep ones are a few MB of brackets).
std::string generate(const std::string& kind) {
    const int deep = 1000000;
    if (kind == "deep_request") return nested(deep);
    if (kind == "deep_layer_name") return kLayersHead + R"({"type": "activation", "function": "relu", "name": )" + nested(deep) + "}]}}";
    if (kind == "deep_shape")
        return R"({"command": "features", "model": {"input": {"shape": )" + nested(deep) + R"(}, "layers": [{"type": "activation", "function": "relu"}]}})";
    if (kind == "deep_attribute") return kLayersHead + R"({"type": "linear", "out_features": )" + nested(deep) + "}]}}";
    if (kind == "deep_hf_architectures")
        return R"({"command": "features", "model": {"model_type": "gpt2", "n_embd": 64, "n_head": 4, "n_layer": 2, )"
               R"("vocab_size": 100, "architectures": )" + nested(deep) + "}}";
    if (kind == "deep_sheet_key")
        return R"({"command": "predict", "model": "gpt2", "hardware": {"id": "x", "name": "X", "peak_tflops": {"fp16": 100}, )"
               R"("memory": {"capacity_gb": 16, "bandwidth_gbps": 300}, "unused": )" + nested(deep) + "}}";
    if (kind == "depth_65") return nested(limits::json_depth + 1);
    if (kind == "residual_chain_100000") {
        const int n = 100000;
        return kLayersHead + repeat(R"({"type": "residual", "layers": [)", n) + R"({"type": "activation", "function": "relu"})" +
               repeat("]}", n) + "]}}";
    }
    if (kind == "layers_150000") {
        std::string layers = R"({"type": "activation", "function": "relu"})";
        for (int i = 1; i < 150000; ++i) layers += R"(, {"type": "activation", "function": "relu"})";
        return kLayersHead + layers + "]}}";
    }
    if (kind == "onnx_40000_op_types") {
        // 40,000 distinct unknown op types in a chain (1 MB), then a MatMul whose inner dims differ: every op type
        // is counted and costed before the error (they took minutes when counted in a list, issue 27).
        std::string graph;
        for (int i = 0; i < 40000; ++i)
            graph += pb_bytes(1, pb_bytes(1, i ? "y" + std::to_string(i - 1) : "x") + pb_bytes(2, "y" + std::to_string(i)) +
                                     pb_bytes(4, "Op" + std::to_string(i)));
        graph += pb_bytes(1, pb_bytes(1, "y39999") + pb_bytes(1, "w") + pb_bytes(2, "z") + pb_bytes(4, "MatMul"));
        graph += pb_bytes(5, pb_int(1, 5) + pb_int(1, 3) + pb_int(2, 1) + pb_bytes(8, "w") + pb_int(14, 1));
        std::string dims = pb_bytes(1, pb_bytes(2, "batch")) + pb_bytes(1, pb_int(1, 8));
        graph += pb_bytes(11, pb_bytes(1, "x") + pb_bytes(2, pb_bytes(1, pb_int(1, 1) + pb_bytes(2, dims))));
        std::string file = pb_int(1, 8) + pb_bytes(7, graph) + pb_bytes(8, pb_bytes(1, "") + pb_int(2, 17));
        return R"({"command": "features", "model": {"onnx_base64": ")" + base64_encode(file) + "\"}}";
    }
    if (kind == "huge_upload")
        return R"({"command": "features", "model": ")" + std::string(limits::document_bytes + 1, 'a') + "\"}";
    ADD_FAILURE() << "unknown generator " << kind;
    return "";
}

std::string from_hex(const std::string& hex) {
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out += char(std::stoi(hex.substr(i, 2), nullptr, 16));
    return out;
}

std::string request_text(const json& c) {
    if (c.contains("text")) return c["text"];
    if (c.contains("text_hex")) return from_hex(c["text_hex"]);
    if (c.contains("request")) return c["request"].dump();
    if (c.contains("model_text")) return R"({"command": "features", "model": )" + c["model_text"].get<std::string>() + "}";
    if (c.contains("generate")) return generate(c["generate"]);
    ADD_FAILURE() << "case without input: " << c.dump();
    return "";
}

TEST(ApiBadInputs, EveryCaseGivesItsError) {
    json cases = manifest()["cases"];
    ASSERT_GE(cases.size(), 80u);
    for (const auto& c : cases) {
        SCOPED_TRACE(c["name"].get<std::string>());
        std::string reply_text = handle_request_text(request_text(c));
        json reply = json::parse(reply_text, nullptr, false);
        if (!reply.is_object() || !reply.contains("error") || !reply["error"].is_object()) {
            ADD_FAILURE() << "no error: " << reply_text.substr(0, 300);
            continue;
        }
        const json& e = reply["error"];
        std::string message = e["message"];
        EXPECT_FALSE(message.empty());
        EXPECT_NE(e["code"], "internal") << message;
        if (c.contains("code") && !c["code"].is_null()) EXPECT_EQ(e["code"], c["code"]) << message;
        if (c.contains("field")) EXPECT_EQ(e["field"], c["field"]) << message;
        if (c.contains("contains"))
            EXPECT_NE(message.find(c["contains"].get<std::string>()), std::string::npos) << message;
        EXPECT_LT(message.size(), 2000u) << "a message should not echo a whole document";
        // A case must fail for its own reason, not for a typo in the corpus.
        if (c["class"] != "unknown kind" && c["class"] != "hostile string")
            EXPECT_EQ(message.find("unknown layer type"), std::string::npos) << message;
        if (std::getenv("PRENET_PRINT_CORPUS")) std::printf("%s\t%s\n", c["name"].get<std::string>().c_str(), message.c_str());
    }
    // The API still answers a good request afterwards (in wasm: the module did not abort).
    json good = json::parse(handle_request_text(R"({"command": "features", "model": "gpt2", "batch": 2})"));
    EXPECT_FALSE(good.contains("error")) << good.dump().substr(0, 300);
    EXPECT_GT(good.value("params", 0.0), 1e8);
}

TEST(ApiBadInputs, LimitsAreAtTheirDocumentedValues) {
    EXPECT_EQ(limits::json_depth, 64);
    EXPECT_EQ(limits::document_bytes, std::size_t{64} << 20);
    EXPECT_EQ(limits::layers, 100000);
    EXPECT_EQ(limits::dimension, std::int64_t{1} << 31);
    // Nesting at the limit parses; one more level does not.
    EXPECT_NO_THROW(parse_json_document(nested(limits::json_depth), "t"));
    EXPECT_THROW(parse_json_document(nested(limits::json_depth + 1), "t"), Error);
    // Brackets inside strings do not count.
    EXPECT_NO_THROW(parse_json_document("[\"" + repeat("[", 1000) + "\\\"\"]", "t"));
    json deep = json::array();
    for (int i = 0; i < 100; ++i) deep = json::array({deep});
    EXPECT_GT(json_depth(deep), limits::json_depth);
    // A value built in C++ is checked too.
    EXPECT_EQ(handle_request(deep)["error"]["code"], "bad_request");
}

TEST(ApiBadInputs, OnlyRegularFilesAreRead) {
    EXPECT_THROW(read_text_file(std::string(PRENET_SOURCE_DIR) + "/tests"), Error);  // a directory
    EXPECT_THROW(read_text_file(std::string(PRENET_SOURCE_DIR) + "/no-such-file.json"), Error);
    EXPECT_FALSE(path_exists(std::string(PRENET_SOURCE_DIR) + "/no-such-file.json"));
    EXPECT_FALSE(read_text_file(std::string(PRENET_SOURCE_DIR) + "/tests/fixtures/bad/cases.json").empty());
#ifndef __EMSCRIPTEN__
    try {
        read_text_file("/dev/zero", ErrorCode::invalid_model, "model");
        ADD_FAILURE() << "/dev/zero was read";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
        EXPECT_EQ(e.field(), "model");
        EXPECT_EQ(e.code(), ErrorCode::invalid_model);
    }
#endif
}

}  // namespace
