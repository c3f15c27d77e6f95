#include "item_details.h"

#include <cstdio>

#include "tbdprof/trace/trace_reader.h"

namespace tbdprof::viewer {

using trace::Statement;

KernelInfo read_kernel_info(trace::Database& db, int64_t kernel_id) {
    KernelInfo info;
    Statement k(db,
                "SELECT v.name, v.mangled, v.start_ns, v.duration_ns, k.queued_ns, v.grid_x, v.grid_y, v.grid_z, "
                "v.block_x, v.block_y, v.block_z, v.shared_bytes, v.library_call, v.graph_launch "
                "FROM kernel_view AS v JOIN kernels AS k ON k.id = v.id WHERE v.id = ?1");
    k.bind(1, kernel_id);
    if (!k.step()) return info;
    info.found = true;
    info.id = kernel_id;
    info.name = k.column_text(0);
    info.mangled = k.column_text(1);
    info.start_ns = k.column_int(2);
    info.duration_ns = k.is_null(3) ? 0 : k.column_int(3);
    if (!k.is_null(4)) info.queued_ns = k.column_int(4);
    for (int i = 0; i < 3; ++i) {
        info.grid[i] = k.column_int(5 + i);
        info.block[i] = k.column_int(8 + i);
    }
    info.shared_bytes = k.is_null(11) ? 0 : k.column_int(11);
    if (!k.is_null(13)) info.graph_launch = k.column_int(13);
    if (!k.is_null(12)) {
        Statement c(db,
                    "SELECT name, op, m, n, k, batch, flops, (SELECT count(*) FROM kernels WHERE library_call = ?1) "
                    "FROM library_calls WHERE id = ?1");
        c.bind(1, k.column_int(12));
        if (c.step()) {
            LibraryCallInfo call;
            call.name = c.column_text(0);
            call.op = c.column_text(1);
            call.m = c.is_null(2) ? 0 : c.column_int(2);
            call.n = c.is_null(3) ? 0 : c.column_int(3);
            call.k = c.is_null(4) ? 0 : c.column_int(4);
            call.batch = c.is_null(5) ? 1 : c.column_int(5);
            call.flops = c.is_null(6) ? 0 : c.column_double(6);
            call.kernels = c.column_int(7);
            info.library_call = call;
        }
    }
    Statement a(db,
                "SELECT ka.param, ka.allocation, ka.offset, ka.read_only, al.bytes, c.category "
                "FROM kernel_allocations AS ka JOIN allocations AS al ON al.id = ka.allocation "
                "LEFT JOIN allocation_categories AS c ON c.allocation = ka.allocation "
                "WHERE ka.kernel = ?1 ORDER BY ka.param, ka.param_word");
    a.bind(1, kernel_id);
    while (a.step()) {
        KernelArgument arg;
        arg.param = a.column_int(0);
        arg.allocation = a.column_int(1);
        arg.offset = a.column_int(2);
        arg.read_only = a.column_int(3) != 0;
        arg.bytes = a.column_int(4);
        arg.category = a.is_null(5) ? "" : a.column_text(5);
        info.arguments.push_back(std::move(arg));
    }
    return info;
}

std::vector<std::string> read_stack(trace::Database& db, int64_t stack_id) {
    std::vector<std::string> frames;
    Statement q(db,
                "SELECT s.text, m.text, f.ip FROM stack_frames AS sf JOIN frames AS f ON f.id = sf.frame "
                "LEFT JOIN strings AS s ON s.id = f.symbol LEFT JOIN strings AS m ON m.id = f.module "
                "WHERE sf.stack = ?1 ORDER BY sf.position LIMIT 256");
    q.bind(1, stack_id);
    std::string previous;
    int repeats = 0;
    auto flush = [&] {
        if (repeats > 1) frames.back() += " ×" + std::to_string(repeats);
    };
    while (q.step()) {
        std::string frame = q.is_null(0) ? "0x" +
                                               [&] {
                                                   char buffer[24];
                                                   std::snprintf(buffer, sizeof buffer, "%llx",
                                                                 static_cast<unsigned long long>(q.column_int(2)));
                                                   return std::string(buffer);
                                               }()
                                         : q.column_text(0);
        if (!q.is_null(1)) {
            std::string module = q.column_text(1);
            const size_t slash = module.rfind('/');
            frame += " (" + (slash == std::string::npos ? module : module.substr(slash + 1)) + ")";
        }
        // Recursion and interpreter loops repeat one frame many times: show it once with a count.
        if (frame == previous) {
            ++repeats;
            continue;
        }
        flush();
        frames.push_back(frame);
        previous = frame;
        repeats = 1;
    }
    flush();
    return frames;
}

}  // namespace tbdprof::viewer
