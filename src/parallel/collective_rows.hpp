#pragma once
// Collectives described as rows of a measurement table, as `prenet kernels --csv` reads them and as
// data/collectives/ stores them: `op` (all_reduce | all_gather | reduce_scatter | all_to_all | send_recv;
// nccl-tests' `alltoall` too), `message_size` (bytes, nccl-tests' convention: collectives.hpp), `gpus` (the group),
// optional `nodes` and `gpus_per_node`.
#include <cstdint>
#include <optional>
#include <string>

#include "core/csv.hpp"
#include "parallel/collectives.hpp"

namespace prenet {

bool is_collective_row_op(const std::string& op);

struct CollectiveRow {
    Collective op = Collective::all_reduce;
    double message_bytes = 0;
    CollectiveGroup group;  // all `gpus` of the row, contiguous (stride 1)
    Cluster cluster;
};

// Where the row's devices sit. gpus_per_node given: that node size. nodes given: gpus / nodes per node (must
// divide). Neither: as measured by nccl-tests in one machine, i.e. one node of `gpus`, except where the sheet's
// fabric spans nodes (NVL72), whose own node (a compute tray) is kept so that the group stays in one domain.
// Throws Error (fields "gpus", "nodes", "gpus_per_node").
CollectiveRow collective_row(const std::string& op, double message_bytes, std::int64_t gpus,
                             std::optional<std::int64_t> nodes, std::optional<std::int64_t> gpus_per_node,
                             const HardwareSpec& hw);

// The row `r` of `table` (columns by name; other columns ignored). `where` names the row in errors.
CollectiveRow collective_row_of(const CsvTable& table, std::size_t r, const HardwareSpec& hw, const std::string& where);

}  // namespace prenet
