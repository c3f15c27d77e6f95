#include "model.h"

#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <unordered_map>

namespace tbdprof::tagger {
namespace {

class Statement {
public:
    Statement(sqlite3* db, const char* sql) { ok_ = sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) == SQLITE_OK; }
    ~Statement() { sqlite3_finalize(stmt_); }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    bool ok() const { return ok_; }
    bool step() { return sqlite3_step(stmt_) == SQLITE_ROW; }
    int64_t i64(int col) const { return sqlite3_column_int64(stmt_, col); }
    bool null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
    std::string text(int col) const {
        auto p = sqlite3_column_text(stmt_, col);
        return p ? reinterpret_cast<const char*>(p) : "";
    }

private:
    sqlite3_stmt* stmt_ = nullptr;
    bool ok_ = false;
};

bool table_exists(sqlite3* db, const char* name) {
    sqlite3_stmt* raw = nullptr;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?1", -1,
                           &raw, nullptr) != SQLITE_OK)
        return false;
    sqlite3_bind_text(raw, 1, name, -1, SQLITE_STATIC);
    bool found = sqlite3_step(raw) == SQLITE_ROW;
    sqlite3_finalize(raw);
    return found;
}

void load_allocations(sqlite3* db, TraceModel& m) {
    Statement s(db, "SELECT id, process, address, bytes, alloc_ns, free_ns, kind, coalesce(stack, 0) "
                    "FROM allocations WHERE kind <> 'pinned_host' ORDER BY alloc_ns, id");
    while (s.step()) {
        Allocation a;
        a.id = s.i64(0);
        a.process = static_cast<int32_t>(s.i64(1));
        a.address = static_cast<uint64_t>(s.i64(2));
        a.bytes = s.i64(3);
        a.alloc_ns = s.i64(4);
        if (!s.null(5)) a.free_ns = s.i64(5);
        a.kind = s.text(6);
        a.stack = s.i64(7);
        m.allocations.push_back(std::move(a));
    }
}

// Kernels, copies and sets are read with the same four leading columns.
constexpr const char* kTimedColumns = "process, start_ns - coalesce(queued_ns, 0), start_ns, start_ns + coalesce(duration_ns, 0)";

WorkItem timed_item(const Statement& s, WorkItem::Kind kind) {
    WorkItem w;
    w.kind = kind;
    w.process = static_cast<int32_t>(s.i64(0));
    w.launch_ns = s.i64(1);
    w.start_ns = s.i64(2);
    w.end_ns = s.i64(3);
    return w;
}

WorkItem::Kind copy_kind(const std::string& kind) {
    if (kind == "htod") return WorkItem::Kind::CopyHtoD;
    if (kind == "dtoh") return WorkItem::Kind::CopyDtoH;
    return WorkItem::Kind::CopyDtoD;  // dtod, and 'default'/'htoh' resolved by addresses below
}

int64_t element_bytes(int64_t cuda_data_type) {
    switch (cuda_data_type) {
    case 0: return 4;   // CUDA_R_32F
    case 1: return 8;   // CUDA_R_64F
    case 2: return 2;   // CUDA_R_16F
    case 3: return 1;   // CUDA_R_8I
    case 4: return 8;   // CUDA_C_32F
    case 5: return 16;  // CUDA_C_64F
    case 14: return 2;  // CUDA_R_16BF
    default: return 0;  // unknown: no size evidence
    }
}

bool has_column(sqlite3* db, const char* table, const char* column) {
    Statement s(db, (std::string("SELECT 1 FROM pragma_table_info('") + table + "') WHERE name = '" + column + "'").c_str());
    return s.step();
}

// Operand extents the collector recorded (library_calls.a_bytes, b_bytes, c_bytes, from the call's
// descriptors or leading dimensions) replace the shape rule below: for cuDNN the implicit-GEMM shape
// (im2col) is not the size of x, w or y at all. NULL (older traces, unknown) keeps the shape rule.
void recorded_sizes(const Statement& s, int first, LibraryCall& c) {
    int64_t* sizes[3] = {&c.a_bytes, &c.b_bytes, &c.c_bytes};
    bool* exact[3] = {&c.a_exact, &c.b_exact, &c.c_exact};
    for (int i = 0; i < 3; ++i) {
        if (s.null(first + i) || s.i64(first + i) <= 0) continue;
        *sizes[i] = s.i64(first + i);
        *exact[i] = true;
    }
}

// The bytes a GEMM operand spans at least: op(A) is m x k, op(B) k x n, C m x n, per batch entry.
// A leading dimension or batch stride larger than the matrix only makes the real extent larger.
// Batched (pointer-array) GEMMs pass arrays of pointers, whose size says nothing about a tensor.
void operand_sizes(const Statement& s, int first, LibraryCall& c) {
    std::string op = s.text(first);
    if (op != "gemm" && op != "gemm_strided_batched") return;
    int64_t m = s.i64(first + 1), n = s.i64(first + 2), k = s.i64(first + 3);
    int64_t batch = op == "gemm" || s.null(first + 4) ? 1 : std::max<int64_t>(1, s.i64(first + 4));
    if (m <= 0 || n <= 0 || k <= 0) return;
    c.a_bytes = m * k * batch * element_bytes(s.null(first + 5) ? -1 : s.i64(first + 5));
    c.b_bytes = k * n * batch * element_bytes(s.null(first + 6) ? -1 : s.i64(first + 6));
    c.c_bytes = m * n * batch * element_bytes(s.null(first + 7) ? -1 : s.i64(first + 7));
}


// Pointer uses (sub-range evidence) of pooled traces. A pointer that does not fall inside its
// allocation (timing skew at a free) is dropped rather than given a wrapped-around offset.
void add_use(TraceModel& m, uint32_t work, int32_t allocation, uint64_t address, int64_t bytes, bool exact,
             Access access) {
    if (!m.pooled || allocation == kNone || address == 0) return;
    const Allocation& a = m.allocations[size_t(allocation)];
    if (address < a.address || address - a.address >= uint64_t(std::max<int64_t>(a.bytes, 1))) return;
    m.pointer_uses.push_back({work, allocation, address - a.address, std::max<int64_t>(bytes, 0), exact && bytes > 0,
                              access});
}

void add_exact_use(TraceModel& m, uint32_t work, int32_t allocation, int64_t address, int64_t bytes, Access access) {
    add_use(m, work, allocation, static_cast<uint64_t>(address), bytes, true, access);
}

void add_library_pointer_uses(TraceModel& m, uint32_t work, const LibraryCall& c) {
    add_use(m, work, c.a, c.a_address, c.a_bytes, c.a_exact, Access::Read);
    if (c.b_address != c.a_address) add_use(m, work, c.b, c.b_address, c.b_bytes, c.b_exact, Access::Read);
    add_use(m, work, c.c, c.c_address, c.c_bytes, c.c_exact, Access::Write);
    // The workspace of a call that recorded its operands' extents (cuDNN: the buffer and size passed to
    // the call) is exactly that size, scratch the call overwrites; a cuBLAS handle's workspace size is
    // the handle's setting, not what one call used, and stays a lower bound.
    bool recorded = c.a_exact || c.b_exact || c.c_exact;
    add_use(m, work, c.workspace, c.workspace_address, c.workspace_bytes, recorded, Access::Write);
}

// Every pointer a plain kernel passed into an allocation, one use per (kernel, allocation, offset).
// Library kernels are skipped: their operands come from the library call (add_library_pointer_uses).
void load_kernel_pointer_uses(sqlite3* db, TraceModel& m, const std::unordered_map<int64_t, size_t>& kernel_index,
                              const std::unordered_map<int64_t, int32_t>& alloc_index,
                              const std::unordered_map<int64_t, bool>& function_mangled) {
    Statement s(db, "SELECT ka.kernel, ka.allocation, ka.read_only, k.function, ka.offset FROM kernel_allocations ka "
                    "JOIN kernels k ON k.id = ka.kernel ORDER BY ka.kernel, ka.allocation, ka.offset");
    size_t first_of_kernel = m.pointer_uses.size();
    int64_t current = -1;
    while (s.step()) {
        auto k = kernel_index.find(s.i64(0));
        auto a = alloc_index.find(s.i64(1));
        if (k == kernel_index.end() || a == alloc_index.end() || m.work[k->second].library_call != kNone) continue;
        if (s.i64(0) != current) first_of_kernel = m.pointer_uses.size(), current = s.i64(0);
        auto mangled = function_mangled.find(s.i64(3));
        Access access = s.i64(2) ? Access::Read
                        : mangled != function_mangled.end() && mangled->second ? Access::Write
                                                                                : Access::Unknown;
        auto offset = static_cast<uint64_t>(s.i64(4));
        auto same = std::find_if(m.pointer_uses.begin() + std::ptrdiff_t(first_of_kernel), m.pointer_uses.end(),
                                 [&](const PointerUse& u) { return u.allocation == a->second && u.offset == offset; });
        if (same != m.pointer_uses.end()) {
            if (access == Access::Write) same->access = Access::Write;
            continue;
        }
        const Allocation& alloc = m.allocations[size_t(a->second)];
        if (offset >= uint64_t(std::max<int64_t>(alloc.bytes, 1))) continue;
        m.pointer_uses.push_back({static_cast<uint32_t>(k->second), a->second, offset, 0, false, access});
    }
}

// Work in launch order (stable: equal times keep load order); pointer uses follow their items.
void sort_work_by_launch(TraceModel& m) {
    std::vector<uint32_t> order(m.work.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return m.work[a].launch_ns < m.work[b].launch_ns; });
    std::vector<uint32_t> position(order.size());
    std::vector<WorkItem> sorted;
    sorted.reserve(m.work.size());
    for (size_t i = 0; i < order.size(); ++i) {
        position[order[i]] = static_cast<uint32_t>(i);
        sorted.push_back(std::move(m.work[order[i]]));
    }
    m.work = std::move(sorted);
    for (PointerUse& u : m.pointer_uses) u.work = position[u.work];
}

}  // namespace

std::vector<int32_t> sorted_by_address(const TraceModel& model) {
    std::vector<int32_t> order(model.allocations.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        const auto& x = model.allocations[size_t(a)];
        const auto& y = model.allocations[size_t(b)];
        return x.address != y.address ? x.address < y.address : x.alloc_ns < y.alloc_ns;
    });
    return order;
}

int32_t find_live_allocation(const TraceModel& model, const std::vector<int32_t>& by_address,
                             uint64_t address, int64_t time_ns) {
    // Addresses are reused over time (a framework frees and reallocates the same buffer every step),
    // so allocations are grouped by start address; within a group, the one made last before
    // `time_ns` is the candidate. Interior pointers need the groups below the address too.
    auto addr = [&](int32_t i) { return model.allocations[size_t(i)].address; };
    auto group_end = std::upper_bound(by_address.begin(), by_address.end(), address,
                                      [&](uint64_t v, int32_t i) { return v < addr(i); });
    int32_t fallback = kNone;
    for (int groups = 0; group_end != by_address.begin() && groups < 64; ++groups) {
        uint64_t base = addr(*(group_end - 1));
        auto group_begin = std::lower_bound(by_address.begin(), group_end, base,
                                            [&](int32_t i, uint64_t v) { return addr(i) < v; });
        auto after = std::upper_bound(group_begin, group_end, time_ns, [&](int64_t t, int32_t i) {
            return t < model.allocations[size_t(i)].alloc_ns;
        });
        if (after != group_begin) {
            const Allocation& a = model.allocations[size_t(*(after - 1))];
            if (address < a.address + uint64_t(std::max<int64_t>(a.bytes, 1))) {
                if (!a.free_ns || *a.free_ns >= time_ns) return *(after - 1);
                if (fallback == kNone) fallback = *(after - 1);  // freed just before: timing skew
            }
        }
        group_end = group_begin;
    }
    return fallback;
}

namespace {

// Allocations a library made for its handle (cuBLAS's default workspace, allocated inside
// cublasCreate): one of the innermost frames of the allocation's stack is the handle's creation.
void mark_library_handle_allocations(sqlite3* db, TraceModel& m) {
    if (!table_exists(db, "stack_frames") || !table_exists(db, "frames")) return;
    Statement s(db, "SELECT DISTINCT sf.stack FROM stack_frames sf JOIN frames f ON f.id = sf.frame "
                    "JOIN strings t ON t.id = f.symbol WHERE sf.position < 4 AND "
                    "(t.text LIKE 'cublasCreate%' OR t.text LIKE 'cublasLtCreate%')");
    std::vector<int64_t> stacks;
    while (s.step()) stacks.push_back(s.i64(0));
    std::sort(stacks.begin(), stacks.end());
    for (Allocation& a : m.allocations)
        a.made_by_library_handle = a.stack != 0 && std::binary_search(stacks.begin(), stacks.end(), a.stack);
}

}  // namespace

std::optional<TraceModel> load_model(sqlite3* db, std::string& error) {
    for (const char* t : {"allocations", "kernels", "kernel_allocations", "copies", "sets", "library_calls",
                          "functions", "strings"}) {
        if (!table_exists(db, t)) {
            error = std::string("the trace has no '") + t + "' table";
            return std::nullopt;
        }
    }
    TraceModel m;
    load_allocations(db, m);
    mark_library_handle_allocations(db, m);
    auto by_address = sorted_by_address(m);
    auto resolve = [&](int64_t address, int64_t time) {
        return address ? find_live_allocation(m, by_address, static_cast<uint64_t>(address), time) : kNone;
    };

    // Library calls first: kernels refer to them.
    std::unordered_map<int64_t, int32_t> call_index;
    {
        // Traces written before the operand extents were recorded lack their columns.
        const bool has_operand_bytes = has_column(db, "library_calls", "c_bytes");
        const std::string sql = std::string("SELECT id, process, begin_ns, end_ns, a, b, c, workspace, op, m, n, k, "
                                            "batch, a_type, b_type, c_type, coalesce(workspace_bytes, 0), ") +
                                (has_operand_bytes ? "a_bytes, b_bytes, c_bytes" : "NULL, NULL, NULL") +
                                " FROM library_calls ORDER BY begin_ns";
        Statement s(db, sql.c_str());
        while (s.step()) {
            LibraryCall c;
            c.id = s.i64(0);
            c.process = static_cast<int32_t>(s.i64(1));
            c.begin_ns = s.i64(2);
            c.end_ns = s.i64(3);
            c.a = resolve(s.i64(4), c.begin_ns);
            c.b = resolve(s.i64(5), c.begin_ns);
            c.c = resolve(s.i64(6), c.begin_ns);
            c.workspace = resolve(s.i64(7), c.begin_ns);
            c.a_address = static_cast<uint64_t>(s.i64(4));
            c.b_address = static_cast<uint64_t>(s.i64(5));
            c.c_address = static_cast<uint64_t>(s.i64(6));
            c.workspace_address = static_cast<uint64_t>(s.i64(7));
            c.workspace_bytes = std::max<int64_t>(0, s.i64(16));
            operand_sizes(s, 8, c);
            recorded_sizes(s, 17, c);
            call_index[c.id] = static_cast<int32_t>(m.library_calls.size());
            m.library_calls.push_back(c);
        }
    }

    std::unordered_map<int64_t, size_t> kernel_index;
    std::unordered_map<int64_t, bool> function_mangled;
    {
        Statement s(db, "SELECT f.id, s.text FROM functions f JOIN strings s ON s.id = f.mangled");
        while (s.step()) function_mangled[s.i64(0)] = s.text(1).rfind("_Z", 0) == 0;
    }
    {
        Statement s(db, (std::string("SELECT ") + kTimedColumns + ", function, library_call, id FROM kernels").c_str());
        while (s.step()) {
            WorkItem w = timed_item(s, WorkItem::Kind::Kernel);
            w.function = static_cast<int32_t>(s.i64(4));
            if (!s.null(5)) {
                auto it = call_index.find(s.i64(5));
                if (it != call_index.end()) w.library_call = it->second;
            }
            kernel_index[s.i64(6)] = m.work.size();
            m.work.push_back(std::move(w));
        }
    }
    {
        Statement s(db, "SELECT ka.kernel, ka.allocation, ka.read_only, k.function, ka.offset FROM kernel_allocations ka "
                        "JOIN kernels k ON k.id = ka.kernel");
        std::unordered_map<int32_t, std::vector<int64_t>> offsets;  // few per allocation unless pooled
        std::unordered_map<int64_t, int32_t> alloc_index;
        for (size_t i = 0; i < m.allocations.size(); ++i) alloc_index[m.allocations[i].id] = static_cast<int32_t>(i);
        while (s.step()) {
            auto k = kernel_index.find(s.i64(0));
            auto a = alloc_index.find(s.i64(1));
            if (k == kernel_index.end() || a == alloc_index.end()) continue;
            m.has_argument_info = true;
            auto& seen = offsets[a->second];
            if (seen.size() < kPooledOffsets && std::find(seen.begin(), seen.end(), s.i64(4)) == seen.end())
                seen.push_back(s.i64(4));
            // A mangled name says which pointer parameters are const; an extern "C" name says nothing.
            Access access = s.i64(2) ? Access::Read : function_mangled[s.i64(3)] ? Access::Write : Access::Unknown;
            auto& touches = m.work[k->second].touches;
            auto same = std::find_if(touches.begin(), touches.end(), [&](const Touch& t) { return t.allocation == a->second; });
            if (same == touches.end())
                touches.push_back({a->second, access});
            else if (access == Access::Write)
                same->access = Access::Write;
        }
        for (const auto& [index, seen] : offsets) {
            m.allocations[size_t(index)].distinct_offsets = static_cast<uint32_t>(seen.size());
            m.pooled |= seen.size() >= kPooledOffsets;
        }
        if (m.pooled) load_kernel_pointer_uses(db, m, kernel_index, alloc_index, function_mangled);
    }
    // Library roles override what argument scanning could tell: a GEMM reads A and B, writes C.
    for (auto& w : m.work) {
        if (w.library_call == kNone) continue;
        const LibraryCall& c = m.library_calls[size_t(w.library_call)];
        w.touches.clear();
        if (c.a != kNone) w.touches.push_back({c.a, Access::Read});
        if (c.b != kNone && c.b != c.a) w.touches.push_back({c.b, Access::Read});
        if (c.c != kNone) w.touches.push_back({c.c, Access::Write});
        if (c.workspace != kNone) w.touches.push_back({c.workspace, Access::Write});
        if (m.pooled) add_library_pointer_uses(m, static_cast<uint32_t>(&w - m.work.data()), c);
    }
    {
        Statement s(db, (std::string("SELECT ") + kTimedColumns + ", kind, src, dst, coalesce(bytes, 0) FROM copies").c_str());
        while (s.step()) {
            WorkItem w = timed_item(s, copy_kind(s.text(4)));
            // A copy recorded as host-to-device or device-to-host has its host side on the host,
            // whatever device allocation the address may also fall in (on a simulated GPU, device
            // memory is host memory: a host buffer can lie inside a device reservation's range).
            std::string recorded = s.text(4);
            int32_t src = recorded == "htod" ? kNone : resolve(s.i64(5), w.launch_ns);
            int32_t dst = recorded == "dtoh" ? kNone : resolve(s.i64(6), w.launch_ns);
            if (src == kNone && dst == kNone) continue;  // host to host
            if (src == kNone) w.kind = WorkItem::Kind::CopyHtoD;
            else if (dst == kNone) w.kind = WorkItem::Kind::CopyDtoH;
            else w.kind = WorkItem::Kind::CopyDtoD;
            if (src != kNone) w.touches.push_back({src, Access::Read});
            if (dst != kNone) w.touches.push_back({dst, Access::Write});
            auto work = static_cast<uint32_t>(m.work.size());
            add_exact_use(m, work, src, s.i64(5), s.i64(7), Access::Read);
            add_exact_use(m, work, dst, s.i64(6), s.i64(7), Access::Write);
            m.work.push_back(std::move(w));
        }
    }
    {
        Statement s(db, (std::string("SELECT ") + kTimedColumns + ", dst, coalesce(bytes, 0) FROM sets").c_str());
        while (s.step()) {
            WorkItem w = timed_item(s, WorkItem::Kind::Set);
            int32_t dst = resolve(s.i64(4), w.launch_ns);
            if (dst == kNone) continue;
            w.touches.push_back({dst, Access::Write});
            add_exact_use(m, static_cast<uint32_t>(m.work.size()), dst, s.i64(4), s.i64(5), Access::Write);
            m.work.push_back(std::move(w));
        }
    }
    sort_work_by_launch(m);
    if (table_exists(db, "api_calls")) {
        Statement s(db, "SELECT process, begin_ns, end_ns FROM api_calls WHERE kind IN ('device_sync', 'stream_sync', "
                        "'event_sync', 'implicit_sync') ORDER BY begin_ns");
        while (s.step()) m.host_waits.push_back({static_cast<int32_t>(s.i64(0)), s.i64(1), s.i64(2), {}});
    }
    if (table_exists(db, "capture_windows")) {
        Statement s(db, "SELECT process, begin_ns, end_ns, reason FROM capture_windows");
        while (s.step()) m.capture_windows.push_back({static_cast<int32_t>(s.i64(0)), s.i64(1), s.i64(2), s.text(3)});
    }
    if (table_exists(db, "ranges")) {
        Statement s(db, "SELECT process, begin_ns, coalesce(end_ns, begin_ns), coalesce(name, '') FROM ranges");
        while (s.step()) m.ranges.push_back({static_cast<int32_t>(s.i64(0)), s.i64(1), s.i64(2), s.text(3)});
    }
    return m;
}

}  // namespace tbdprof::tagger
