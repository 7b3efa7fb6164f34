// The hardware catalogue: required ids, the citation rules of the sheets (hardware/README.md), matmul peak
// fallbacks, and the loader's validation of user sheets.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "hardware/spec.hpp"
#include "parallel/cluster.hpp"

using namespace prenet;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kRequiredIds = {
    "p4",           "p100-pcie-16gb", "v100-pcie-32gb", "v100-sxm2-16gb", "v100-sxm2-32gb", "t4",
    "a10",          "a100-pcie-40gb", "a100-pcie-80gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "l4",
    "l40s",         "h100-pcie-80gb", "h100-sxm5-80gb", "h800-sxm5",      "h200-sxm-141gb", "b200",
    "rtx-3090",     "rtx-4090",       "rtx-a4000",      "rtx-a6000",      "rtx-6000-ada",   "quadro-rtx-8000",
    "mi100",        "mi210",          "mi250",          "mi300x",         "tpu-v3",         "tpu-v4",
    "tpu-v5e",      "tpu-v5p",        "gaudi2",         "b300",           "gb200",          "gb300",
    "rtx-pro-6000-server", "arc-pro-b60", "mi325x",         "mi355x",         "tpu-v6e",        "tpu-v7",
    "gaudi3",       "trainium2",      "gh200",          "h20",            "b100",           "rtx-5090"};

struct Sheet {
    std::string path, stem;
    json doc;
};

std::vector<Sheet> sheet_files() {
    std::vector<Sheet> out;
    fs::path dir = fs::path(PRENET_SOURCE_DIR) / "hardware";
    for (const auto& entry : fs::directory_iterator(dir)) {
        const fs::path& p = entry.path();
        if (p.extension() != ".json" || p.filename() == "schema.json") continue;
        std::ifstream in(p);
        std::stringstream ss;
        ss << in.rdbuf();
        Sheet s{p.string(), p.stem().string(), json::parse(ss.str(), nullptr, false)};
        out.push_back(std::move(s));
    }
    std::sort(out.begin(), out.end(), [](const Sheet& a, const Sheet& b) { return a.stem < b.stem; });
    return out;
}

// Walks a sheet (outside `sources`): every object holding a "value" or a "source" must cite a key of `sources`,
// every number must sit in such a cited object, and every cited number must be positive.
void check_citations(const json& node, const std::string& where, bool cited, const json& sources,
                     std::set<std::string>& used) {
    if (node.is_object()) {
        bool has_source = node.contains("source");
        if (node.contains("value") && !node["value"].is_null())
            EXPECT_TRUE(has_source) << where << ": a value without a source";
        if (has_source) {
            const json& s = node["source"];
            if (!s.is_string()) {
                ADD_FAILURE() << where << ".source is not a string";
            } else {
                EXPECT_TRUE(sources.contains(s.get<std::string>()))
                    << where << ": source '" << s.get<std::string>() << "' is not a key of 'sources'";
                used.insert(s.get<std::string>());
            }
        }
        for (auto it = node.begin(); it != node.end(); ++it) {
            if (where.empty() && it.key() == "sources") continue;
            check_citations(*it, where.empty() ? it.key() : where + "." + it.key(), cited || has_source, sources,
                            used);
        }
    } else if (node.is_array()) {
        for (size_t i = 0; i < node.size(); ++i)
            check_citations(node[i], where + "[" + std::to_string(i) + "]", cited, sources, used);
    } else if (node.is_number()) {
        // The one plain number of the schema: a torus's dimension count, a structural fact like the topology's name
        // (hardware/schema.json: a plain integer, cited with the links and domain it shapes).
        if (where == "interconnect.torus_dims") return;
        EXPECT_TRUE(cited) << where << ": a number without a source";
        double x = node.get<double>();
        EXPECT_TRUE(std::isfinite(x) && x > 0) << where << ": " << x << " must be positive (absent values are null)";
    }
}

json minimal_sheet() {
    return json::parse(R"({
        "id": "my-accel",
        "name": "My Accelerator",
        "peak_tflops": {"fp32": 20, "bf16": 160},
        "memory": {"capacity_gb": 24, "bandwidth_gbps": 900}
    })");
}

// Runs parse_hardware on a bad sheet and returns the message, failing if it does not throw prenet::Error.
std::string parse_error(const json& sheet) {
    try {
        parse_hardware(sheet, "test sheet");
    } catch (const Error& e) {
        return e.what();
    } catch (const std::exception& e) {
        ADD_FAILURE() << "threw a non-prenet exception: " << e.what();
        return e.what();
    }
    ADD_FAILURE() << "accepted a bad sheet: " << sheet.dump();
    return "";
}

bool mentions(const std::string& message, const std::string& word) { return message.find(word) != std::string::npos; }

}  // namespace

TEST(HardwareCatalogue, HasEveryRequiredId) {
    std::set<std::string> ids;
    for (const auto& h : hardware_catalogue()) ids.insert(h.id);
    for (const auto& id : kRequiredIds) EXPECT_TRUE(ids.count(id)) << "missing " << id;
    for (const auto& id : kRequiredIds) EXPECT_EQ(find_hardware(id).id, id);
}

TEST(HardwareCatalogue, InlineEccKeepsASixteenthOfGddr) {
    // nvidia-smi shows 15360MiB on a 16 GB T4 (ECC on) and 81920MiB on an 80 GB A100 (HBM).
    EXPECT_TRUE(find_hardware("t4").inline_ecc);
    EXPECT_DOUBLE_EQ(find_hardware("t4").memory_bytes(), 15360.0 * (1 << 20));
    EXPECT_FALSE(find_hardware("a100-sxm4-80gb").inline_ecc);
    EXPECT_DOUBLE_EQ(find_hardware("a100-sxm4-80gb").memory_bytes(), 81920.0 * (1 << 20));
    EXPECT_FALSE(find_hardware("rtx-4090").inline_ecc);
}

TEST(HardwareCatalogue, SortedUniqueAndSane) {
    const auto& cat = hardware_catalogue();
    ASSERT_GE(cat.size(), kRequiredIds.size());
    for (size_t i = 1; i < cat.size(); ++i) EXPECT_LT(cat[i - 1].id, cat[i].id) << "not sorted or duplicate";
    for (const auto& h : cat) {
        EXPECT_FALSE(h.name.empty()) << h.id;
        EXPECT_GT(h.memory_gb, 0) << h.id;
        EXPECT_GT(h.bandwidth_gbps, 0) << h.id;
        // Binary GB, less the 1/16 that inline ECC keeps (HardwareSpec::memory_bytes).
        EXPECT_DOUBLE_EQ(h.memory_bytes(), h.memory_gb * 1073741824.0 * (h.inline_ecc ? 15.0 / 16.0 : 1.0)) << h.id;
        EXPECT_DOUBLE_EQ(h.bandwidth_bytes_per_s(), h.bandwidth_gbps * 1e9) << h.id;
        EXPECT_GT(h.vector_flops(), 0) << h.id;
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::fp16, Precision::bf16, Precision::fp8}) {
            double f = h.matmul_flops(p);
            EXPECT_TRUE(std::isfinite(f) && f > 0) << h.id << " " << to_string(p);
        }
        for (const auto& [key, v] : h.peak_tflops) EXPECT_GT(v, 0) << h.id << " " << key;
    }
}

TEST(HardwareCatalogue, UnknownIdIsAnErrorListingIds) {
    try {
        find_hardware("no-such-gpu");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_TRUE(mentions(e.what(), "no-such-gpu")) << e.what();
        EXPECT_TRUE(mentions(e.what(), "h100-sxm5-80gb")) << e.what();
    }
}

TEST(HardwareSheets, OneFilePerCatalogueEntry) {
    auto sheets = sheet_files();
    std::set<std::string> stems, ids;
    for (const auto& s : sheets) stems.insert(s.stem);
    for (const auto& h : hardware_catalogue()) ids.insert(h.id);
    EXPECT_EQ(stems, ids);
}

TEST(HardwareSheets, EveryNumberIsCitedAndEverySourceIsUsed) {
    auto sheets = sheet_files();
    ASSERT_GE(sheets.size(), kRequiredIds.size());
    for (const auto& s : sheets) {
        SCOPED_TRACE(s.path);
        ASSERT_FALSE(s.doc.is_discarded()) << "not valid JSON";
        ASSERT_TRUE(s.doc.is_object());
        ASSERT_TRUE(s.doc.contains("id") && s.doc["id"].is_string());
        EXPECT_EQ(s.doc["id"].get<std::string>(), s.stem) << "id must equal the file name";
        ASSERT_TRUE(s.doc.contains("sources") && s.doc["sources"].is_object()) << "no 'sources' object";
        const json& sources = s.doc["sources"];
        EXPECT_FALSE(sources.empty());
        for (auto it = sources.begin(); it != sources.end(); ++it) {
            EXPECT_TRUE(it->is_string() && !it->get<std::string>().empty())
                << "source '" << it.key() << "' must be a non-empty string";
            if (it->is_string()) EXPECT_TRUE(mentions(it->get<std::string>(), "http")) << "source '" << it.key()
                                                                                           << "' cites no URL";
        }
        std::set<std::string> used;
        check_citations(s.doc, "", false, sources, used);
        for (auto it = sources.begin(); it != sources.end(); ++it)
            EXPECT_TRUE(used.count(it.key())) << "source '" << it.key() << "' is never used";
    }
}

TEST(HardwareSheets, CitationCheckCatchesBadSheets) {
    // The walker itself must flag an uncited number, an unknown source key and a non-positive value.
    const json sources = {{"ds", "Datasheet, https://example.com"}};
    std::set<std::string> used;
    EXPECT_NONFATAL_FAILURE(check_citations(json::parse(R"({"memory": {"capacity_gb": 16}})"), "", false, sources, used),
                            "without a source");
    EXPECT_NONFATAL_FAILURE(
        check_citations(json::parse(R"({"memory": {"capacity_gb": {"value": 16, "source": "nope"}}})"), "", false,
                        sources, used),
        "not a key of 'sources'");
    EXPECT_NONFATAL_FAILURE(
        check_citations(json::parse(R"({"memory": {"capacity_gb": {"value": 0, "source": "ds"}}})"), "", false,
                        sources, used),
        "must be positive");
    used.clear();
    check_citations(json::parse(R"({"memory": {"capacity_gb": {"value": 16, "source": "ds"}, "bus": null}})"), "",
                    false, sources, used);
    EXPECT_EQ(used, std::set<std::string>{"ds"});
}

TEST(HardwareSheets, FileValuesMatchTheEmbeddedCatalogue) {
    for (const auto& s : sheet_files()) {
        SCOPED_TRACE(s.path);
        HardwareSpec from_file = parse_hardware(s.doc, s.path);
        const HardwareSpec& built_in = find_hardware(s.stem);
        EXPECT_EQ(from_file.name, built_in.name);
        EXPECT_DOUBLE_EQ(from_file.memory_gb, built_in.memory_gb);
        EXPECT_DOUBLE_EQ(from_file.bandwidth_gbps, built_in.bandwidth_gbps);
        EXPECT_EQ(from_file.peak_tflops, built_in.peak_tflops);
    }
}

TEST(MatmulFlops, V100Bf16RunsAtTheFp32Rate) {
    for (const char* id : {"v100-pcie-32gb", "v100-sxm2-16gb", "v100-sxm2-32gb"}) {
        const HardwareSpec& h = find_hardware(id);
        ASSERT_FALSE(h.peak_tflops.count("bf16")) << id;
        std::string used;
        EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::bf16, &used), h.peak_tflops.at("fp32") * 1e12) << id;
        EXPECT_EQ(used, "fp32") << id;
        // fp16 has tensor cores on Volta.
        EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp16, &used), h.peak_tflops.at("fp16") * 1e12) << id;
        EXPECT_EQ(used, "fp16");
    }
}

TEST(MatmulFlops, A100Fp8FallsBackToBf16) {
    const HardwareSpec& h = find_hardware("a100-sxm4-80gb");
    ASSERT_FALSE(h.peak_tflops.count("fp8"));
    std::string used;
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp8, &used), h.peak_tflops.at("bf16") * 1e12);
    EXPECT_EQ(used, "bf16");
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp8), 312e12);
}

TEST(MatmulFlops, H100UsesItsOwnPeaks) {
    const HardwareSpec& h = find_hardware("h100-sxm5-80gb");
    std::string used;
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::tf32, &used), h.peak_tflops.at("tf32") * 1e12);
    EXPECT_EQ(used, "tf32");
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp8, &used), h.peak_tflops.at("fp8") * 1e12);
    EXPECT_EQ(used, "fp8");
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp32, &used), h.peak_tflops.at("fp32") * 1e12);
    EXPECT_EQ(used, "fp32");
    EXPECT_GT(h.matmul_flops(Precision::bf16), h.matmul_flops(Precision::tf32));
    EXPECT_GT(h.matmul_flops(Precision::tf32), h.matmul_flops(Precision::fp32));
}

TEST(MatmulFlops, CdnaFp32MatmulsRunOnTheMatrixCores) {
    // MI250: MFMA FP32 at 90.5 TFLOPS, vector FP32 at 45.3 (AMD's datasheet). Ignoring fp32_matrix would halve
    // every FP32 matmul.
    const HardwareSpec& mi250 = find_hardware("mi250");
    std::string used;
    EXPECT_DOUBLE_EQ(mi250.matmul_flops(Precision::fp32, &used), 90.5e12);
    EXPECT_EQ(used, "fp32_matrix");
    EXPECT_DOUBLE_EQ(mi250.vector_flops(), 45.3e12);
    EXPECT_DOUBLE_EQ(mi250.peak_tflops.at("fp64_matrix"), 90.5);
    // No TF32 on CDNA 2: tf32 runs as fp32, on the matrix cores.
    EXPECT_DOUBLE_EQ(mi250.matmul_flops(Precision::tf32), 90.5e12);
    EXPECT_DOUBLE_EQ(find_hardware("mi100").matmul_flops(Precision::fp32), 46.1e12);
    EXPECT_DOUBLE_EQ(find_hardware("mi100").vector_flops(), 23.1e12);
    EXPECT_DOUBLE_EQ(find_hardware("mi210").matmul_flops(Precision::fp32), 45.3e12);
    EXPECT_DOUBLE_EQ(find_hardware("mi210").vector_flops(), 22.6e12);
    EXPECT_DOUBLE_EQ(find_hardware("mi300x").matmul_flops(Precision::fp32), 163.4e12);
    // NVIDIA has no FP32 matrix mode: FP32 matmuls stay at the vector rate.
    const HardwareSpec& a100 = find_hardware("a100-sxm4-80gb");
    EXPECT_FALSE(a100.has_peak("fp32_matrix"));
    EXPECT_DOUBLE_EQ(a100.matmul_flops(Precision::fp32), a100.vector_flops());
}

TEST(ParseHardware, ClocksAreRead) {
    const HardwareSpec& b60 = find_hardware("arc-pro-b60");
    EXPECT_DOUBLE_EQ(b60.base_clock_mhz, 2000);
    EXPECT_DOUBLE_EQ(b60.boost_clock_mhz, 2400);
    EXPECT_DOUBLE_EQ(b60.tdp_w, 200);
    json j = to_json(b60);
    EXPECT_EQ(j["base_clock_mhz"], 2000);
    EXPECT_EQ(j["boost_clock_mhz"], 2400);
    // Unpublished: 0.
    EXPECT_DOUBLE_EQ(find_hardware("b200").base_clock_mhz, 0);
    EXPECT_DOUBLE_EQ(find_hardware("h100-sxm5-80gb").matrix_peak_clock_mhz, 1830);  // the tensor peaks' clock
    json sheet = minimal_sheet();
    sheet["compute"] = {{"base_clock_mhz", 1100}, {"boost_clock_mhz", 1700}, {"matrix_peak_clock_mhz", 1600},
                        {"sustained_matrix_clock_mhz", {{"value", 1500}, {"source", "x"}}}};
    HardwareSpec h = parse_hardware(sheet, "user sheet");
    EXPECT_DOUBLE_EQ(h.base_clock_mhz, 1100);
    EXPECT_DOUBLE_EQ(h.matrix_peak_clock_mhz, 1600);
    EXPECT_DOUBLE_EQ(h.sustained_matrix_clock_mhz, 1500);
    EXPECT_EQ(to_json(h)["sustained_matrix_clock_mhz"], 1500);
}

TEST(MatmulFlops, ArcProB60MatrixPeaksAreXmx) {
    const HardwareSpec& h = find_hardware("arc-pro-b60");
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::bf16), 98.3e12);
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp32), h.vector_flops());
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp8), 98.3e12);  // no FP8 units: bf16
}

TEST(MatmulFlops, TpuFp32IsEmulatedAsThreeBf16Passes) {
    for (const char* id : {"tpu-v3", "tpu-v4", "tpu-v5e", "tpu-v5p", "tpu-v6e", "tpu-v7"}) {
        const HardwareSpec& h = find_hardware(id);
        ASSERT_FALSE(h.peak_tflops.count("fp32")) << id;
        double bf16 = h.peak_tflops.at("bf16") * 1e12;
        std::string used;
        EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp32, &used), bf16 / 3) << id;
        EXPECT_TRUE(mentions(used, "bf16") && mentions(used, "emulated")) << id << ": " << used;
        EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::tf32), bf16 / 3) << id;
        EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::bf16), bf16) << id;
        EXPECT_DOUBLE_EQ(h.vector_flops(), bf16 / 3) << id;
    }
}

TEST(ParseHardware, PlainNumbersAreAcceptedInUserSheets) {
    HardwareSpec h = parse_hardware(minimal_sheet(), "user sheet");
    EXPECT_EQ(h.id, "my-accel");
    EXPECT_EQ(h.name, "My Accelerator");
    EXPECT_DOUBLE_EQ(h.memory_gb, 24);
    EXPECT_DOUBLE_EQ(h.bandwidth_gbps, 900);
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::fp32), 20e12);
    EXPECT_DOUBLE_EQ(h.matmul_flops(Precision::bf16), 160e12);
    EXPECT_DOUBLE_EQ(h.price_per_hour(), 0);
    // Cited objects and plain numbers mix.
    json mixed = minimal_sheet();
    mixed["memory"]["capacity_gb"] = {{"value", 48}, {"source", "me"}};
    EXPECT_DOUBLE_EQ(parse_hardware(mixed, "user sheet").memory_gb, 48);
}

TEST(ParseHardware, MissingIdNamesTheField) {
    json sheet = minimal_sheet();
    sheet.erase("id");
    EXPECT_TRUE(mentions(parse_error(sheet), "'id'"));
}

TEST(ParseHardware, MissingMemoryNamesTheField) {
    json sheet = minimal_sheet();
    sheet.erase("memory");
    EXPECT_TRUE(mentions(parse_error(sheet), "memory"));
    sheet = minimal_sheet();
    sheet["memory"].erase("capacity_gb");
    EXPECT_TRUE(mentions(parse_error(sheet), "capacity_gb"));
}

TEST(ParseHardware, NegativeBandwidthNamesTheField) {
    json sheet = minimal_sheet();
    sheet["memory"]["bandwidth_gbps"] = -900;
    EXPECT_TRUE(mentions(parse_error(sheet), "bandwidth_gbps"));
    sheet["memory"]["bandwidth_gbps"] = 0;
    EXPECT_TRUE(mentions(parse_error(sheet), "bandwidth_gbps"));
}

TEST(ParseHardware, StringWhereANumberBelongsNamesTheField) {
    json sheet = minimal_sheet();
    sheet["memory"]["capacity_gb"] = "24";
    EXPECT_TRUE(mentions(parse_error(sheet), "capacity_gb"));
    sheet = minimal_sheet();
    sheet["peak_tflops"]["fp32"] = "fast";
    EXPECT_TRUE(mentions(parse_error(sheet), "fp32"));
    sheet = minimal_sheet();
    sheet["memory"]["bandwidth_gbps"] = {{"value", "900"}, {"source", "me"}};
    EXPECT_TRUE(mentions(parse_error(sheet), "bandwidth_gbps"));
}

// Found by the hardware_spec fuzz target (tests/fixtures/fuzz/hardware_spec/): a text field holding a number
// escaped as nlohmann's type_error instead of an Error naming the field.
TEST(ParseHardware, NumberWhereTextBelongsNamesTheField) {
    json sheet = minimal_sheet();
    sheet["launch_date"] = {{"value", 989.4}, {"source", "me"}};
    EXPECT_TRUE(mentions(parse_error(sheet), "launch_date"));
    sheet = minimal_sheet();
    sheet["vendor"] = 7;
    EXPECT_TRUE(mentions(parse_error(sheet), "vendor"));
    sheet = minimal_sheet();
    sheet["prices"] = {{"cloud", {{{"usd_per_hour", 2.5}, {"provider", 1}}}}};
    EXPECT_TRUE(mentions(parse_error(sheet), "provider"));
    sheet = minimal_sheet();
    sheet["launch_date"] = {{"value", nullptr}, {"source", "me"}};
    EXPECT_EQ(parse_hardware(sheet, "test sheet").launch_date, "");
}

TEST(ParseHardware, OtherBadSheets) {
    EXPECT_FALSE(parse_error(json::array()).empty());
    EXPECT_FALSE(parse_error(json("t4")).empty());
    json sheet = minimal_sheet();
    sheet.erase("peak_tflops");
    EXPECT_TRUE(mentions(parse_error(sheet), "peak_tflops"));
    sheet = minimal_sheet();
    sheet["peak_tflops"] = {{"fp64", 10}};
    EXPECT_TRUE(mentions(parse_error(sheet), "peak_tflops"));
    sheet = minimal_sheet();
    sheet["memory"] = 24;
    EXPECT_TRUE(mentions(parse_error(sheet), "memory"));
}

// The clock a sheet's peaks are quoted at: published where it is, implied by the FP32 peak where NVIDIA publishes
// none (B200), and the implication agrees with the published clocks it can be checked against.
TEST(HardwareSpec, ClockIsPublishedOrImpliedByTheFp32Peak) {
    EXPECT_DOUBLE_EQ(find_hardware("l40s").clock_mhz(), 2520);  // published boost
    const HardwareSpec& b200 = find_hardware("b200");
    ASSERT_EQ(b200.boost_clock_mhz, 0);
    EXPECT_NEAR(b200.clock_mhz(), 75e6 / (2.0 * 148 * 128), 1e-9);  // ~1980 MHz
    for (const char* id : {"l40s", "arc-pro-b60", "a100-sxm4-80gb", "rtx-4090"}) {
        HardwareSpec h = find_hardware(id);
        double published = h.boost_clock_mhz;
        h.boost_clock_mhz = 0;
        EXPECT_NEAR(h.clock_mhz(), published, 0.01 * published) << id;
    }
    HardwareSpec unknown = find_hardware("tpu-v5e");
    unknown.boost_clock_mhz = 0, unknown.cores_per_unit = 0;
    EXPECT_EQ(unknown.clock_mhz(), 0);
}

TEST(ParseHardware, PowerLimitIsRead) {
    json sheet = minimal_sheet();
    sheet["power"] = {{"tdp_w", 700}, {"limit_w", 500}};
    HardwareSpec h = parse_hardware(sheet, "user sheet");
    EXPECT_DOUBLE_EQ(h.power_limit_w, 500);
    EXPECT_EQ(to_json(h)["power_limit_w"], 500);
    // Absent: 0 (no limit), and the catalogue carries no limit.
    EXPECT_DOUBLE_EQ(parse_hardware(minimal_sheet(), "user sheet").power_limit_w, 0);
    for (const auto& c : hardware_catalogue()) EXPECT_DOUBLE_EQ(c.power_limit_w, 0) << c.id;
}

TEST(ParseHardware, PowerLimitMustBePositiveAndPlausible) {
    for (json limit : {json(0), json(-100), json(2e6), json("500")}) {
        json sheet = minimal_sheet();
        sheet["power"] = {{"tdp_w", 700}, {"limit_w", limit}};
        std::string message = parse_error(sheet);
        EXPECT_TRUE(mentions(message, "limit_w")) << limit.dump() << ": " << message;
    }
    json sheet = minimal_sheet();
    sheet["power"] = {{"tdp_w", 700}, {"limit_w", 0}};
    EXPECT_TRUE(mentions(parse_error(sheet), "positive"));
}

// The schema (hardware/schema.json) forbids undeclared fields: the sheets' compute and power keys, and the new
// clock and power-limit fields, must all be declared there, with what they mean.
TEST(HardwareSheets, SchemaDeclaresEveryComputeAndPowerField) {
    std::ifstream in(fs::path(PRENET_SOURCE_DIR) / "hardware" / "schema.json");
    std::stringstream ss;
    ss << in.rdbuf();
    json schema = json::parse(ss.str());
    const json& compute = schema["properties"]["compute"]["properties"];
    const json& power = schema["properties"]["power"]["properties"];
    for (const char* key : {"matrix_peak_clock_mhz", "sustained_matrix_clock_mhz"}) {
        ASSERT_TRUE(compute.contains(key)) << key;
        EXPECT_TRUE(compute[key].contains("description")) << key;
    }
    ASSERT_TRUE(power.contains("limit_w"));
    EXPECT_TRUE(mentions(power["limit_w"]["description"].get<std::string>(), "TDP") ||
                mentions(power["limit_w"]["description"].get<std::string>(), "tdp_w"));
    for (const auto& s : sheet_files()) {
        for (auto it = s.doc["compute"].begin(); it != s.doc["compute"].end(); ++it)
            EXPECT_TRUE(compute.contains(it.key())) << s.stem << ": compute." << it.key();
        for (auto it = s.doc["power"].begin(); it != s.doc["power"].end(); ++it)
            EXPECT_TRUE(power.contains(it.key())) << s.stem << ": power." << it.key();
        EXPECT_FALSE(s.doc["power"].contains("limit_w")) << s.stem << ": a catalogue sheet carries no host limit";
    }
}

TEST(HardwareSheets, InlineEccIsAYesOrNo) {
    json sheet = minimal_sheet();
    EXPECT_FALSE(parse_hardware(sheet, "user sheet").inline_ecc);  // absent: no inline ECC
    sheet["memory"]["inline_ecc"] = true;
    HardwareSpec h = parse_hardware(sheet, "user sheet");
    EXPECT_TRUE(h.inline_ecc);
    EXPECT_DOUBLE_EQ(h.memory_bytes(), 24.0 * (1 << 30) * 15 / 16);
    sheet["memory"]["inline_ecc"] = "yes";
    EXPECT_TRUE(mentions(parse_error(sheet), "'inline_ecc' must be true or false"));
}

TEST(HardwareSheet, TorusAndMeshNeedTheirLinks) {
    json sheet = json::parse(R"({"id": "t", "peak_tflops": {"bf16": 200}, "memory": {"capacity_gb": 32,
        "bandwidth_gbps": 1000}, "interconnect": {"intra_node_gbps": 600, "scale_up_link": "ici",
        "topology": "torus", "torus_dims": 3}})");
    EXPECT_THROW(parse_hardware(sheet, "t.json"), Error);  // no links_per_device
    sheet["interconnect"]["links_per_device"] = 6;
    sheet["interconnect"]["torus_dims"] = 4;
    EXPECT_THROW(parse_hardware(sheet, "t.json"), Error);
    sheet["interconnect"]["torus_dims"] = 3;
    sheet["interconnect"]["topology"] = "ring";
    EXPECT_THROW(parse_hardware(sheet, "t.json"), Error);
    sheet["interconnect"]["topology"] = "full_mesh";
    EXPECT_DOUBLE_EQ(parse_hardware(sheet, "t.json").link_gbps_one_way(), 50.0);
}

// Issue #29: the scale-up fabric of every torus and mesh part, as its sheet states it (links carry
// intra_node_gbps together; a torus has its dimensions and whether a slice's rings close).
TEST(HardwareSheets, TorusAndMeshPartsDescribeTheirLinks) {
    struct Want {
        const char* id;
        HardwareSpec::Topology topology;
        std::int64_t links;
        int dims;
        bool wraparound;
        std::int64_t domain, node;
    };
    using T = HardwareSpec::Topology;
    for (const Want& w : std::vector<Want>{{"tpu-v3", T::torus, 4, 2, false, 1024, 4},
                                           {"tpu-v4", T::torus, 6, 3, true, 4096, 4},
                                           {"tpu-v5e", T::torus, 4, 2, false, 256, 8},
                                           {"tpu-v5p", T::torus, 6, 3, true, 8960, 4},
                                           {"tpu-v6e", T::torus, 4, 2, false, 256, 8},
                                           {"tpu-v7", T::torus, 6, 3, true, 9216, 4},
                                           {"trainium2", T::torus, 4, 2, true, 16, 16},
                                           {"mi250", T::full_mesh, 6, 0, false, 4, 4},
                                           {"mi300x", T::full_mesh, 7, 0, false, 8, 8},
                                           {"mi325x", T::full_mesh, 7, 0, false, 8, 8},
                                           {"mi355x", T::full_mesh, 7, 0, false, 8, 8},
                                           {"gaudi2", T::full_mesh, 21, 0, false, 8, 8},
                                           {"gaudi3", T::full_mesh, 21, 0, false, 8, 8}}) {
        const HardwareSpec& h = find_hardware(w.id);
        EXPECT_EQ(h.topology, w.topology) << w.id;
        EXPECT_EQ(h.links_per_device, w.links) << w.id;
        EXPECT_EQ(h.torus_dims, w.dims) << w.id;
        EXPECT_EQ(h.torus_wraparound, w.wraparound) << w.id;
        EXPECT_EQ(h.scale_up_domain, w.domain) << w.id;
        EXPECT_EQ(h.gpus_per_node, w.node) << w.id;
        EXPECT_GT(h.intra_node_gbps, 0) << w.id;
        EXPECT_DOUBLE_EQ(h.link_gbps_one_way() * double(h.links_per_device), h.intra_node_gbps / 2) << w.id;
    }
    // Per link, one way: ICI 83 (v3), 45 (v4), 50 (v5e), 100 (v5p, v6e, v7) GB/s; Infinity Fabric 64 (MI300X);
    // Gaudi's RoCE ports 12.5 (100 GbE) and 25 (200 GbE).
    EXPECT_DOUBLE_EQ(find_hardware("tpu-v4").link_gbps_one_way(), 45.0);
    EXPECT_DOUBLE_EQ(find_hardware("tpu-v6e").link_gbps_one_way(), 100.0);
    EXPECT_DOUBLE_EQ(find_hardware("tpu-v7").link_gbps_one_way(), 100.0);
    EXPECT_DOUBLE_EQ(find_hardware("mi300x").link_gbps_one_way(), 64.0);
    EXPECT_DOUBLE_EQ(find_hardware("gaudi2").link_gbps_one_way(), 12.5);
    EXPECT_DOUBLE_EQ(find_hardware("gaudi3").link_gbps_one_way(), 25.0);
}

// Issue #29: every catalogue sheet answers a multi-device question, or names the published number it lacks.
TEST(HardwareSheets, EverySheetFormsAClusterOrNamesTheMissingNumber) {
    for (const auto& h : hardware_catalogue()) {
        std::int64_t node = h.gpus_per_node > 0 ? h.gpus_per_node : 1;
        for (std::int64_t gpus : {node, 2 * node}) {
            try {
                Cluster c = make_cluster(h, {gpus, std::nullopt, std::nullopt, std::nullopt});
                EXPECT_EQ(c.gpus, gpus) << h.id;
                EXPECT_GT(c.scale_up.gbps, 0) << h.id;
                EXPECT_GT(c.scale_out.gbps, 0) << h.id;
            } catch (const Error& e) {
                EXPECT_TRUE(mentions(e.what(), "intra_node_gbps")) << h.id << ": " << e.what();
            }
        }
    }
}
