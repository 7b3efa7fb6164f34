#include "parallel/collective_rows.hpp"

#include <cmath>

#include "core/error.hpp"
#include "predict/op_rows.hpp"

namespace prenet {
namespace {

std::int64_t whole(double x, const std::string& name) {
    if (!(x >= 1) || x != std::floor(x) || x > 1e9)
        throw Error("'" + name + "' must be a whole number >= 1", ErrorCode::invalid_value, name);
    return std::int64_t(x);
}

}  // namespace

bool is_collective_row_op(const std::string& op) { return collective_from_string(op).has_value(); }

CollectiveRow collective_row(const std::string& op, double message_bytes, std::int64_t gpus,
                             std::optional<std::int64_t> nodes, std::optional<std::int64_t> gpus_per_node,
                             const HardwareSpec& hw) {
    CollectiveRow row;
    auto c = collective_from_string(op);
    if (!c) throw Error("unknown collective '" + op + "'", ErrorCode::invalid_value, "op");
    row.op = *c;
    if (!(message_bytes > 0) || !std::isfinite(message_bytes))
        throw Error("'message_size' must be a positive number of bytes", ErrorCode::invalid_value, "message_size");
    row.message_bytes = message_bytes;
    if (row.op == Collective::send_recv && gpus != 2)
        throw Error("send_recv is between 2 devices, got gpus " + std::to_string(gpus), ErrorCode::invalid_value, "gpus");
    ClusterRequest request;
    request.gpus = gpus;
    if (gpus_per_node) {
        request.gpus_per_node = gpus_per_node;
    } else if (nodes) {
        if (*nodes > gpus || gpus % *nodes != 0)
            throw Error(std::to_string(gpus) + " devices do not split evenly over " + std::to_string(*nodes) + " nodes",
                        ErrorCode::invalid_value, "nodes");
        request.gpus_per_node = gpus / *nodes;
    } else {
        if (!is_rack_scale(hw) || gpus > hw.scale_up_domain) request.gpus_per_node = gpus;
    }
    row.cluster = make_cluster(hw, request);
    row.group = {gpus, 1};
    return row;
}

CollectiveRow collective_row_of(const CsvTable& t, std::size_t r, const HardwareSpec& hw, const std::string& where) {
    const auto& row = t.rows[r];
    auto cell = [&](const char* name) -> std::optional<double> {
        int col = t.column(name);
        if (col < 0 || row[col].empty()) return std::nullopt;
        return parse_number(row[col], where);
    };
    try {
        int op_col = t.column("op");
        if (op_col < 0) throw Error("no 'op' column");
        auto size = cell("message_size");
        if (!size) throw Error("a collective row needs 'message_size' (bytes)", ErrorCode::missing, "message_size");
        auto gpus = cell("gpus");
        if (!gpus) throw Error("a collective row needs 'gpus'", ErrorCode::missing, "gpus");
        std::optional<std::int64_t> nodes, per_node;
        if (auto n = cell("nodes")) nodes = whole(*n, "nodes");
        if (auto n = cell("gpus_per_node")) per_node = whole(*n, "gpus_per_node");
        return collective_row(row[op_col], *size, whole(*gpus, "gpus"), nodes, per_node, hw);
    } catch (const Error& e) {
        throw Error(where + ": " + e.what(), e.code(), e.field());
    }
}

}  // namespace prenet
