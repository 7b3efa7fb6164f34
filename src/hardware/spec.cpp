#include "hardware/spec.hpp"

#include <algorithm>
#include <cmath>

#include "core/quantity_text.hpp"
#include "core/embedded.hpp"
#include "core/embedded_json.hpp"
#include "core/error.hpp"
#include "hardware/link.hpp"
#include "hardware/precision_support.hpp"

namespace prenet {
namespace {

using nlohmann::json;

// Peak rates: 10^7 TFLOPS is 10^19 FLOP/s, a thousand times today's largest chips; 10^-6 TFLOPS is 1 MFLOP/s.
constexpr double kMaxTflops = 1e7, kMinTflops = 1e-6;
// Board power, TDP or a host's limit: 10^6 W, a thousand times today's largest modules (docs/limits.md).
constexpr double kMaxWatts = 1e6;

// A number on a sheet is {"value": x, "source": key} or, in user sheets, a plain number. Null means "not
// supported"; returns NaN for absent or null.
// `hi` is the physically plausible maximum (docs/limits.md): a sheet past it is a typo or hostile, and would
// give infinite or zero times rather than an error.
double sheet_number(const json& parent, const char* key, const std::string& origin, double hi) {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return NAN;
    const json& v = it->is_object() ? it->value("value", json()) : *it;
    if (v.is_null()) return NAN;
    if (!v.is_number()) throw Error(origin + ": field '" + key + "' must be a number, got " + v.dump());
    double x = v.get<double>();
    if (!std::isfinite(x) || x < 0) throw Error(origin + ": field '" + key + "' must be a non-negative number");
    if (x > hi)
        throw Error(origin + ": field '" + key + "' is " + v.dump() + ", over the plausible maximum of " + json(hi).dump() +
                    " (docs/limits.md)");
    return x;
}

double require_positive(const json& parent, const char* key, const std::string& origin, double lo, double hi) {
    double x = sheet_number(parent, key, origin, hi);
    if (std::isnan(x) || x <= 0) throw Error(origin + ": missing or non-positive field '" + key + "'");
    if (x < lo)
        throw Error(origin + ": field '" + key + "' is " + json(x).dump() + ", under the plausible minimum of " +
                    json(lo).dump() + " (docs/limits.md)");
    return x;
}

double or_zero(double x) { return std::isnan(x) ? 0.0 : x; }

// A yes/no fact on a sheet: {"value": true|false, "source": key} or a plain boolean; absent or null is false.
bool sheet_flag(const json& parent, const char* key, const std::string& origin) {
    auto it = parent.find(key);
    if (it == parent.end() || it->is_null()) return false;
    const json& v = it->is_object() ? it->value("value", json()) : *it;
    if (v.is_null()) return false;
    if (!v.is_boolean()) throw Error(origin + ": field '" + key + "' must be true or false, got " + v.dump());
    return v.get<bool>();
}

// A count of devices: a whole number >= 1, or absent/null (0).
std::int64_t whole_count(const json& parent, const char* key, const std::string& origin) {
    double x = sheet_number(parent, key, origin, 1e9);
    if (std::isnan(x)) return 0;
    if (x < 1 || x != std::floor(x) || x > 1e9)
        throw Error(origin + ": field '" + std::string(key) + "' must be a whole number of devices >= 1");
    return std::int64_t(x);
}

bool is_scale_up(LinkKind k) {
    return k == LinkKind::nvlink || k == LinkKind::infinity_fabric || k == LinkKind::ici || k == LinkKind::neuronlink ||
           k == LinkKind::pcie ||
           k == LinkKind::roce;
}

const json& section(const json& sheet, const char* key, const std::string& origin, bool required) {
    static const json empty = json::object();
    auto it = sheet.find(key);
    if (it == sheet.end() || it->is_null()) {
        if (required) throw Error(origin + ": missing section '" + key + "'");
        return empty;
    }
    if (!it->is_object()) throw Error(origin + ": section '" + key + "' must be an object");
    return *it;
}

// A text field: a string, or {"value": string, "source": key}; absent or null gives `fallback`.
std::string text(const json& sheet, const char* key, const std::string& fallback, const std::string& origin) {
    auto it = sheet.find(key);
    if (it == sheet.end() || it->is_null()) return fallback;
    const json& v = it->is_object() ? it->value("value", json()) : *it;
    if (v.is_null()) return fallback;
    if (!v.is_string()) throw Error(origin + ": field '" + key + "' must be a string, got " + v.dump());
    return v.get<std::string>();
}

}  // namespace

const char* to_string(HardwareSpec::Topology t) {
    switch (t) {
        case HardwareSpec::Topology::full_mesh: return "full_mesh";
        case HardwareSpec::Topology::torus: return "torus";
        case HardwareSpec::Topology::switched: break;
    }
    return "switched";
}

HardwareSpec parse_hardware(const json& sheet, const std::string& origin) {
    if (!sheet.is_object()) throw Error(origin + ": a hardware spec must be a JSON object");
    HardwareSpec h;
    h.id = text(sheet, "id", "", origin);
    if (h.id.empty()) throw Error(origin + ": missing field 'id'");
    h.name = text(sheet, "name", h.id, origin);
    h.vendor = text(sheet, "vendor", "", origin);
    h.kind = text(sheet, "kind", "gpu", origin);
    h.architecture = text(sheet, "architecture", "", origin);
    h.launch_date = text(sheet, "launch_date", "", origin);
    const json& peaks = section(sheet, "peak_tflops", origin, true);
    for (auto it = peaks.begin(); it != peaks.end(); ++it) {
        double x = sheet_number(peaks, it.key().c_str(), origin, kMaxTflops);
        if (!std::isnan(x) && x > 0 && x < kMinTflops)
            throw Error(origin + ": field '" + it.key() + "' is " + json(x).dump() + ", under the plausible minimum of " +
                        json(kMinTflops).dump() + " TFLOPS (docs/limits.md)");
        if (!std::isnan(x) && x > 0) h.peak_tflops[it.key()] = x;
    }
    if (!h.peak_tflops.count("fp32") && !h.peak_tflops.count("bf16") && !h.peak_tflops.count("fp16"))
        throw Error(origin + ": 'peak_tflops' needs at least one of fp32, bf16 or fp16");
    const json& memory = section(sheet, "memory", origin, true);
    h.memory_gb = require_positive(memory, "capacity_gb", origin, 1e-6, 1e6);
    h.bandwidth_gbps = require_positive(memory, "bandwidth_gbps", origin, kMinPlausibleGBps, kPlausibleGBps);
    h.inline_ecc = sheet_flag(memory, "inline_ecc", origin);
    const json& compute = section(sheet, "compute", origin, false);
    h.compute_units = or_zero(sheet_number(compute, "compute_units", origin, 1e7));
    h.cores_per_unit = or_zero(sheet_number(compute, "cores_per_unit", origin, 1e6));
    h.base_clock_mhz = or_zero(sheet_number(compute, "base_clock_mhz", origin, 1e5));
    h.boost_clock_mhz = or_zero(sheet_number(compute, "boost_clock_mhz", origin, 1e5));
    h.l2_cache_mb = or_zero(sheet_number(compute, "l2_cache_mb", origin, 1e6));
    h.matrix_peak_clock_mhz = or_zero(sheet_number(compute, "matrix_peak_clock_mhz", origin, 1e5));
    h.sustained_matrix_clock_mhz = or_zero(sheet_number(compute, "sustained_matrix_clock_mhz", origin, 1e5));
    const json& links = section(sheet, "interconnect", origin, false);
    h.intra_node_gbps = or_zero(sheet_number(links, "intra_node_gbps", origin, kPlausibleGBps));
    if (h.intra_node_gbps > 0 && h.intra_node_gbps < kMinPlausibleGBps)  // 0: not published
        throw Error(origin + ": field 'intra_node_gbps' is " + json(h.intra_node_gbps).dump() +
                    ", under the plausible minimum of " + json(kMinPlausibleGBps).dump() + " (docs/limits.md)");
    h.scale_up_link = text(links, "scale_up_link", "pcie", origin);
    if (!link_kind_from_string(h.scale_up_link) || !is_scale_up(*link_kind_from_string(h.scale_up_link)))
        throw Error(origin + ": 'interconnect.scale_up_link' must be nvlink, infinity_fabric, ici, neuronlink, pcie or roce, got '" +
                    h.scale_up_link + "'");
    h.scale_up_domain = whole_count(links, "scale_up_domain", origin);
    h.gpus_per_node = whole_count(links, "gpus_per_node", origin);
    h.scale_out_network = text(links, "scale_out_network", "", origin);
    std::string topology = text(links, "topology", "switched", origin);
    if (topology == "full_mesh") h.topology = HardwareSpec::Topology::full_mesh;
    else if (topology == "torus") h.topology = HardwareSpec::Topology::torus;
    else if (topology != "switched")
        throw Error(origin + ": 'interconnect.topology' must be switched, full_mesh or torus, got '" + topology + "'");
    h.links_per_device = whole_count(links, "links_per_device", origin);
    if (h.topology != HardwareSpec::Topology::switched && h.links_per_device < 1 && h.intra_node_gbps > 0)
        throw Error(origin + ": a " + topology + " needs 'interconnect.links_per_device' (the links that carry "
                    "intra_node_gbps)");
    if (links.contains("torus_dims") && !links["torus_dims"].is_null()) {
        const json& d = links["torus_dims"];
        if (!d.is_number_integer() || d.get<std::int64_t>() < 1 || d.get<std::int64_t>() > 3)
            throw Error(origin + ": 'interconnect.torus_dims' must be 1, 2 or 3, got " + d.dump());
        h.torus_dims = int(d.get<std::int64_t>());
    }
    if (h.topology == HardwareSpec::Topology::torus && h.torus_dims == 0)
        throw Error(origin + ": a torus needs 'interconnect.torus_dims' (2 or 3)");
    h.torus_wraparound = sheet_flag(links, "torus_wraparound", origin);
    if (!h.scale_out_network.empty()) {
        try {
            Link network = parse_network(h.scale_out_network);
            // The per-device share, as the sheets quoted it before they named the node's NICs.
            h.inter_node_gbps = network.gbps / double(h.gpus_per_node > 0 ? h.gpus_per_node : 1);
        } catch (const Error& e) {
            throw Error(origin + ": 'interconnect.scale_out_network': " + e.what());
        }
    }
    const json& power = section(sheet, "power", origin, false);
    h.tdp_w = or_zero(sheet_number(power, "tdp_w", origin, kMaxWatts));
    double limit = sheet_number(power, "limit_w", origin, kMaxWatts);
    if (limit == 0) throw Error(origin + ": field 'limit_w' (power limit, W) must be positive; leave it out for none");
    h.power_limit_w = or_zero(limit);
    const json& prices = section(sheet, "prices", origin, false);
    if (prices.contains("cloud") && prices["cloud"].is_array())
        for (const auto& p : prices["cloud"]) {
            if (!p.is_object() || !p.contains("usd_per_hour") || !p["usd_per_hour"].is_number()) continue;
            double usd = p["usd_per_hour"].get<double>();
            if (!std::isfinite(usd) || usd < 0 || usd > 1e6)
                throw Error(origin + ": 'prices.cloud[].usd_per_hour' must be between 0 and 1e6, got " +
                            p["usd_per_hour"].dump());
            h.cloud_prices.push_back({usd, text(p, "provider", "", origin), text(p, "date", "", origin)});
        }
    if (sheet.contains("sources") && sheet["sources"].is_object())
        for (auto it = sheet["sources"].begin(); it != sheet["sources"].end(); ++it)
            if (it->is_string()) h.sources[it.key()] = it->get<std::string>();
    return h;
}

double HardwareSpec::matmul_flops(Precision p, std::string* used) const {
    // The precision the kernel runs as is decided in one place (precision_support); here only its peak is read.
    Precision runs_as = precision_support(*this, p).used;
    if (runs_as != Precision::fp32) {
        const char* key = to_string(runs_as);
        if (used) *used = key;
        return peak_tflops.at(key) * 1e12;
    }
    for (const char* key : {"fp32_matrix", "fp32"}) {
        auto it = peak_tflops.find(key);
        if (it != peak_tflops.end()) {
            if (used) *used = key;
            return it->second * 1e12;
        }
    }
    return emulated_fp32_flops(used);
}

// Parts that publish no fp32 rate (TPUs, Gaudi) run fp32 matmuls as three bf16 passes (the "bf16_3x"
// scheme XLA uses for fp32 at default-high precision): an assumption about emulation, stated in docs.
double HardwareSpec::emulated_fp32_flops(std::string* used) const {
    for (const char* key : {"bf16", "fp16"}) {
        auto it = peak_tflops.find(key);
        if (it != peak_tflops.end()) {
            if (used) *used = std::string(key) + "/3 (fp32 emulated)";
            return it->second * 1e12 / 3.0;
        }
    }
    if (used) *used = "fp32";
    return peak_tflops.at("fp32") * 1e12;
}

double HardwareSpec::clock_mhz() const {
    if (boost_clock_mhz > 0) return boost_clock_mhz;
    auto fp32 = peak_tflops.find("fp32");
    if (fp32 == peak_tflops.end() || compute_units <= 0 || cores_per_unit <= 0) return 0;
    return fp32->second * 1e12 / (2.0 * compute_units * cores_per_unit) / 1e6;
}

double HardwareSpec::vector_flops() const {
    auto it = peak_tflops.find("fp32");
    return it != peak_tflops.end() ? it->second * 1e12 : emulated_fp32_flops(nullptr);
}
double HardwareSpec::bandwidth_bytes_per_s() const { return bandwidth_gbps * 1e9; }
// Vendors' memory "GB" are binary: DRAM dies come in power-of-two densities, so an "80GB" A100 holds 80 GiB
// (nvidia-smi: "81920MiB" total on an A800-SXM4-80GB, github.com/dexmal/dexbotic/issues/41) and a "40GB" one
// 40 GiB, of which CUDA reports 42,298,834,944 bytes (deviceQuery on an A100-SXM4-40GB,
// github.com/bottlerocket-os/bottlerocket/pull/3873): 1e9-byte gigabytes would understate them by 7%.
// GDDR parts that ship with ECC on store its check bits inline, in 1/16 of the memory: a 16 GB T4 shows
// 15360MiB (nvidia-smi) and TensorFlow 14.75 GiB (github.com/NVIDIA/DALI/issues/1813); HBM keeps them apart.
double HardwareSpec::memory_bytes() const { return memory_gb * kBytesPerGiB * (inline_ecc ? 15.0 / 16.0 : 1.0); }

double HardwareSpec::price_per_hour() const {
    double best = 0;
    for (const auto& p : cloud_prices)
        if (p.usd_per_hour > 0 && (best == 0 || p.usd_per_hour < best)) best = p.usd_per_hour;
    return best;
}

const std::vector<HardwareSpec>& hardware_catalogue() {
    static const std::vector<HardwareSpec> catalogue = [] {
        std::vector<HardwareSpec> specs;
        for (const auto& f : embedded_files()) {
            if (f.path.rfind("hardware/", 0) != 0) continue;
            specs.push_back(parse_hardware(parse_embedded_json(f.contents), f.path));
        }
        std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
        return specs;
    }();
    return catalogue;
}

const HardwareSpec& find_hardware(const std::string& id) {
    for (const auto& h : hardware_catalogue())
        if (h.id == id) return h;
    std::string ids;
    for (const auto& h : hardware_catalogue()) ids += (ids.empty() ? "" : ", ") + h.id;
    throw Error("unknown hardware '" + id + "' (known: " + ids + "; or pass a spec file)");
}

json to_json(const HardwareSpec& h) {
    json prices = json::array();
    for (const auto& p : h.cloud_prices)
        prices.push_back({{"usd_per_hour", p.usd_per_hour}, {"provider", p.provider}, {"date", p.date}});
    return {{"id", h.id},
            {"name", h.name},
            {"vendor", h.vendor},
            {"kind", h.kind},
            {"architecture", h.architecture},
            {"launch_date", h.launch_date},
            {"peak_tflops", h.peak_tflops},
            {"memory_gb", h.memory_gb},
            {"bandwidth_gbps", h.bandwidth_gbps},
            {"compute_units", h.compute_units},
            {"base_clock_mhz", h.base_clock_mhz},
            {"boost_clock_mhz", h.boost_clock_mhz},
            {"l2_cache_mb", h.l2_cache_mb},
            {"matrix_peak_clock_mhz", h.matrix_peak_clock_mhz},
            {"sustained_matrix_clock_mhz", h.sustained_matrix_clock_mhz},
            {"tdp_w", h.tdp_w},
            {"power_limit_w", h.power_limit_w},
            {"intra_node_gbps", h.intra_node_gbps},
            {"inter_node_gbps", h.inter_node_gbps},
            {"scale_up_link", h.scale_up_link},
            {"scale_up_domain", h.scale_up_domain},
            {"gpus_per_node", h.gpus_per_node},
            {"scale_out_network", h.scale_out_network},
            {"topology", to_string(h.topology)},
            {"links_per_device", h.links_per_device},
            {"torus_dims", h.torus_dims},
            {"torus_wraparound", h.torus_wraparound},
            {"price_per_hour", h.price_per_hour()},
            {"cloud_prices", prices},
            {"sources", h.sources}};
}

}  // namespace prenet
