// The Itanium-grammar parser behind parse_mangled_parameters (itanium_parameters.h). Internal to
// the collector: names, types and template arguments in itanium_parser.cpp, the expression grammar
// (template arguments X...E, decltype, array bounds) in itanium_expressions.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "tbdprof/collector/itanium_parameters.h"

namespace tbdprof::collector::itanium {

struct TypeInfo {
    bool pointer = false;
    bool pointee_const = false;
    bool is_const = false;     // for an array: its elements are const
    bool is_function = false;  // a function type: a pointer to it points to no data
    bool is_pack = false;      // a template argument pack: elements packs_[pack_begin, +pack_count)
    uint16_t pack_begin = 0, pack_count = 0;
};

struct NameInfo {
    bool is_template = false;     // the last component had template arguments
    bool no_return_type = false;  // constructor, destructor or conversion operator
};

constexpr size_t kMaxSubstitutions = 1024;
constexpr size_t kMaxTemplateArgs = 64;
constexpr size_t kMaxPackElements = 256;
constexpr int kMaxDepth = 96;  // bounds the stack used (a few KiB per 10 levels)

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// Operators of expressions: the number of operands of the two-letter code at p, 0 for none.
int operator_arity(const char* p);
// True when the two letters at p are an operator name that is not an expression operator.
bool other_operator_name(const char* p);

class Parser {
public:
    explicit Parser(const char* text) : p_(text) {}

    bool parse(MangledSignature& out) {
        if (std::strncmp(p_, "_Z", 2) != 0) return false;
        p_ += 2;
        const NameInfo info = name();
        if (!ok_ || at_end()) return false;  // a data symbol, or a failure
        if (info.is_template && !info.no_return_type) {
            type();  // a function template's name encodes its return type first
            if (!ok_) return false;
        }
        size_t count = 0;
        bool lone_void = false;
        auto add = [&](const TypeInfo& t) {
            if (count >= kMaxMangledParameters) return fail();
            out.parameters[count].pointer = t.pointer;
            out.parameters[count].pointer_to_const = t.pointer && t.pointee_const;
            ++count;
        };
        while (ok_ && !at_end()) {
            const bool is_void = *p_ == 'v';
            if (*p_ == 'D' && at(1) == 'p') {  // a pack expansion: one parameter per pack element
                expand_pack(add);
                lone_void = false;
                continue;
            }
            const TypeInfo t = type();
            if (!ok_) return false;
            lone_void = count == 0 && is_void;
            add(t);
        }
        if (!ok_) return false;
        out.count = (count == 1 && lone_void) ? 0 : count;
        return true;
    }

private:
    // Dp <pattern>: parsed once as written (its substitution candidates count once), then once per
    // element of the pack it names with T_ bound to that element, for each element's type.
    template <typename Add>
    void expand_pack(Add& add) {
        p_ += 2;
        const char* pattern = p_;
        pack_seen_ = -1;
        type();
        if (!ok_ || pack_seen_ < 0) return fail();  // no pack in the pattern: nothing to expand
        const char* after = p_;
        const TypeInfo pack = targs_[static_cast<size_t>(pack_seen_)];
        const size_t saved_subs = sub_count_;
        for (uint16_t e = 0; e < pack.pack_count && ok_; ++e) {
            p_ = pattern;
            expanding_ = pack_seen_;
            element_ = static_cast<size_t>(pack.pack_begin) + e;
            const TypeInfo t = type();
            expanding_ = -1;
            sub_count_ = saved_subs;
            if (!ok_ || p_ != after) return fail();
            add(t);
        }
        p_ = after;
        candidate();  // the expansion itself
    }

    // The parameter list ends at the end of the name or at a vendor suffix (".isra.0", ".cold").
    bool at_end() const { return *p_ == '\0' || *p_ == '.'; }
    char at(size_t i) const {
        for (size_t k = 0; k < i; ++k)
            if (p_[k] == '\0') return '\0';
        return p_[i];
    }
    bool eat(char c) {
        if (*p_ != c || c == '\0') return false;
        ++p_;
        return true;
    }
    bool expect(char c) {
        if (!eat(c)) ok_ = false;
        return ok_;
    }
    void fail() { ok_ = false; }
    // <item>* E: items until the E that closes them; a name that ends first fails.
    template <typename Item>
    void until_end(Item item) {
        while (ok_ && *p_ != 'E') {
            if (*p_ == '\0') return fail();
            item();
        }
        expect('E');
    }
    void candidate(TypeInfo t = {}) {
        if (sub_count_ >= kMaxSubstitutions) return fail();
        subs_[sub_count_++] = t;
    }
    struct Depth {
        explicit Depth(Parser& parser) : p(parser) {
            if (++p.depth_ > kMaxDepth) p.fail();
        }
        ~Depth() { --p.depth_; }
        Parser& p;
    };

    bool number(uint64_t* value = nullptr);
    void source_name();
    void discriminator();
    void abi_tags();
    // <unqualified-name>: source names, operators, constructors and destructors, unnamed types.
    NameInfo unqualified_name();
    NameInfo operator_name();
    // <substitution> other than St: S_, S<seq-id>_, Sa, Sb, Ss, Si, So, Sd.
    TypeInfo substitution();
    // T_ or T<n>_: the template argument it stands for, when known.
    TypeInfo template_param();
    // I <template-arg>+ E. The arguments of the name being encoded (not those nested inside an
    // argument) become what T_ refers to.
    void template_args();
    // J <template-arg>* E among the arguments T_ refers to: its elements are kept for expansions.
    TypeInfo pack_arg();
    TypeInfo template_arg();
    // L <type> <value> E, L _Z <encoding> E, LDnE.
    void expr_primary();
    // The encoding inside a local name or an L_Z literal: its own template arguments are what its
    // own T_ refer to, so the outer ones are kept aside meanwhile.
    void nested_encoding();
    // Z <encoding> E <entity name> [<discriminator>], Z <encoding> E s [<discriminator>].
    NameInfo local_name();
    // N [<CV-qualifiers>] [<ref-qualifier>] <prefix>... E. Every prefix is a substitution candidate;
    // the whole name is not (a type's caller adds it).
    NameInfo nested_name(bool as_type = false);
    // <name>: nested, local, unscoped (possibly std::), unscoped template (a candidate before its
    // arguments).
    NameInfo name();
    TypeInfo type();
    TypeInfo d_type();
    // F [Y] <return type> <parameter types> [<ref-qualifier>] E
    void function_type();
    void unresolved_type();
    void simple_id();
    void base_unresolved_name();
    // [gs] <base-unresolved-name> | sr ... (scoped names in expressions)
    void unresolved_name();
    // The operands of a two-letter expression form, by kind (kTwoLetterForms).
    void operands(const char* kinds);
    // fp [<cv>] [<number>] _   |   fL <number> p [<cv>] [<number>] _
    void function_param();
    void expression();

    const char* p_;
    bool ok_ = true;
    int depth_ = 0;
    int args_depth_ = 0;
    TypeInfo subs_[kMaxSubstitutions];
    size_t sub_count_ = 0;
    TypeInfo targs_[kMaxTemplateArgs];
    size_t targ_count_ = 0;
    TypeInfo packs_[kMaxPackElements];
    size_t pack_count_ = 0;
    int pack_seen_ = -1;  // a pack template parameter met outside an expansion
    int expanding_ = -1;  // the pack parameter being expanded, bound to packs_[element_]
    int enclosed_ = 0;    // inside template arguments, a function type or a nested encoding
    size_t element_ = 0;
};

}  // namespace tbdprof::collector::itanium
