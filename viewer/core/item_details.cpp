#include "item_details.h"

#include <cstdio>

#include "tbdprof/trace/tables.h"

namespace tbdprof::viewer {

KernelInfo read_kernel_info(trace::Database& db, int64_t kernel_id) {
    KernelInfo info;
    trace::RowReader<trace::KernelRow> kernels(db, {.first_id = kernel_id, .last_id = kernel_id});
    trace::KernelRow k;
    if (!kernels.next(k)) return info;
    const auto names = trace::read_function_names(db), mangled = trace::read_function_names(db, true);
    const auto name = names.find(k.function), mangled_name = mangled.find(k.function);
    if (name == names.end() || mangled_name == mangled.end()) return info;
    info.found = true;
    info.id = kernel_id;
    info.name = name->second;
    info.mangled = mangled_name->second;
    info.start_ns = k.start_ns;
    info.duration_ns = k.duration_ns.value_or(0);
    info.queued_ns = k.queued_ns;
    auto unpack = [](int64_t packed, int64_t(&out)[3]) {  // x + (y-1) * 2^32 + (z-1) * 2^48 (schemas/trace.sql)
        out[0] = packed & 0xffffffff;
        out[1] = ((packed >> 32) & 0xffff) + 1;
        out[2] = ((packed >> 48) & 0xffff) + 1;
    };
    unpack(k.grid.value_or(0), info.grid);
    unpack(k.block.value_or(0), info.block);
    info.shared_bytes = k.shared_bytes.value_or(0);
    info.graph_launch = k.graph_launch;
    if (k.library_call) {
        trace::RowReader<trace::LibraryCallRow> calls(db, {.first_id = *k.library_call, .last_id = *k.library_call});
        if (trace::LibraryCallRow c; calls.next(c)) {
            LibraryCallInfo call;
            call.name = c.name;
            call.op = c.op;
            call.m = c.m.value_or(0);
            call.n = c.n.value_or(0);
            call.k = c.k.value_or(0);
            call.batch = c.batch.value_or(1);
            call.flops = c.flops.value_or(0);
            call.kernels =
                db.query_int(("SELECT count(*) FROM kernels WHERE library_call = " + std::to_string(c.id)).c_str());
            info.library_call = call;
        }
    }
    // One kernel's edges are a keyed lookup (kernel_allocations' primary key starts with the kernel);
    // the edge reader streams the whole table, so this stays a query of its own.
    trace::Statement a(db,
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
    std::string previous;
    int repeats = 0;
    auto flush = [&] {
        if (repeats > 1) frames.back() += " ×" + std::to_string(repeats);
    };
    for (const trace::StackFrame& f : trace::read_stack(db, stack_id, 256)) {
        std::string frame = f.text();
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
